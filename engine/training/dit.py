"""mini-dit: the Stable Diffusion 3 architecture in miniature, trained on the same scenes as
mini-sd, so transformer caches are measured on a model whose pictures mean something.

An SD3 MMDiT (joint attention over caption and image tokens, AdaLN from the pooled caption),
two small CLIP text encoders and no T5 (SD3 runs without it: its tokens are zeros, and we ask
for none), rectified-flow training with the flow-matching Euler sampler. mini-sd's trained
autoencoder is reused unchanged: a transformer is the part this model exists to measure, and
it learns in the same 16x16x4 latent space mini-sd's UNet does.
"""

from __future__ import annotations

from diffusers import (
    AutoencoderKL,
    FlowMatchEulerDiscreteScheduler,
    SD3Transformer2DModel,
    StableDiffusion3Pipeline,
)
from transformers import CLIPTextConfig, CLIPTextModelWithProjection

from engine.training import model as sd

WIDTH = 192  # transformer hidden size: 6 heads of 32
LAYERS = 8
# SD3 runs without its T5 encoder by putting zeros in its place; zero tokens are not worth
# attending to, so the pipeline is always called with none (`Preset.call_options`).
T5_TOKENS = 0


def text_encoder(vocab_size: int) -> CLIPTextModelWithProjection:
    base = sd.text_encoder(vocab_size).config
    return CLIPTextModelWithProjection(CLIPTextConfig(**base.to_dict()))


def transformer(
    sample_size: int = sd.SIZE // 8, latent_channels: int = sd.LATENT_CHANNELS
) -> SD3Transformer2DModel:
    return SD3Transformer2DModel(
        sample_size=sample_size,
        patch_size=2,  # mini-sd's 16x16 latents: 64 image tokens
        in_channels=latent_channels,
        out_channels=latent_channels,
        num_layers=LAYERS,
        attention_head_dim=32,
        num_attention_heads=WIDTH // 32,
        joint_attention_dim=2 * sd.TEXT_DIM,  # both CLIP encoders' states side by side
        caption_projection_dim=WIDTH,
        pooled_projection_dim=2 * sd.TEXT_DIM,
        pos_embed_max_size=32,  # room for 16:9 and larger pictures than the training size
        qk_norm="rms_norm",
    )


def scheduler() -> FlowMatchEulerDiscreteScheduler:
    # No timestep shift: at 16x16 latents the signal is not spread over enough tokens for
    # the high-noise end to need the extra steps SD3 gives it at 1024 px.
    return FlowMatchEulerDiscreteScheduler(num_train_timesteps=1000, shift=1.0)


def pipeline(
    vae: AutoencoderKL,
    encoder: CLIPTextModelWithProjection,
    encoder_2: CLIPTextModelWithProjection,
    model: SD3Transformer2DModel,
) -> StableDiffusion3Pipeline:
    # SD3 decodes latents / scaling_factor + shift_factor; mini-sd's autoencoder has no shift.
    vae.register_to_config(shift_factor=0.0)
    return StableDiffusion3Pipeline(
        transformer=model,
        scheduler=scheduler(),
        vae=vae,
        text_encoder=encoder,
        tokenizer=sd.tokenizer(),
        text_encoder_2=encoder_2,
        tokenizer_2=sd.tokenizer(),
        text_encoder_3=None,
        tokenizer_3=None,
    )
