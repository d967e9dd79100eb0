"""mini-sd: the Stable Diffusion architecture in miniature, sized to train on 2 CPU cores.

The same component classes as SD 1.x (AutoencoderKL, CLIPTextModel, UNet2DConditionModel, a
scaled-linear DDPM noise schedule, epsilon prediction), so a trained model is saved and loaded
as an ordinary diffusers pipeline and every SD pipeline and engine recipe runs it unchanged.
The tokenizer is a word-level vocabulary of the scene captions, built in-process.
"""

from __future__ import annotations

from diffusers import (
    AutoencoderKL,
    DDPMScheduler,
    EulerDiscreteScheduler,
    StableDiffusionPipeline,
    UNet2DConditionModel,
)
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import CLIPTextConfig, CLIPTextModel, PreTrainedTokenizerFast

from engine.training.scenes import ARCHETYPES, TIMES, WEATHER

SIZE = 128  # output pixels a side
LATENT_CHANNELS = 4
MAX_TOKENS = 32
TEXT_DIM = 64
SPECIALS = ["<pad>", "<s>", "<unk>", "</s>"]
# SD 1.x's noise schedule: the engine's schedulers and caching recipes expect it.
SCHEDULE = dict(
    num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear"
)


def vocabulary() -> list[str]:
    """Every word the captions use: what the text encoder can know."""
    phrases = [*ARCHETYPES.values(), *TIMES.values(), *WEATHER]
    return sorted({word for phrase in phrases for word in phrase.split()})


def tokenizer(words: list[str] | None = None) -> PreTrainedTokenizerFast:
    """Words of the caption vocabulary (mini-sd's unless `words` are given); anything else is
    <unk> (the engine drops those words and warns before the prompt reaches the model). Case
    and punctuation are ignored."""
    vocab = {token: i for i, token in enumerate([*SPECIALS, *(words or vocabulary())])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.normalizer = normalizers.Sequence(
        [normalizers.NFKC(), normalizers.Lowercase(), normalizers.Replace(Regex(r"[^a-z]+"), " ")]
    )
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        model_max_length=MAX_TOKENS,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
    )


def text_encoder(vocab_size: int) -> CLIPTextModel:
    ids = {token: i for i, token in enumerate(SPECIALS)}
    config = CLIPTextConfig(
        vocab_size=vocab_size,
        hidden_size=TEXT_DIM,
        intermediate_size=4 * TEXT_DIM,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=MAX_TOKENS,
        projection_dim=TEXT_DIM,
        bos_token_id=ids["<s>"],
        eos_token_id=ids["</s>"],
        pad_token_id=ids["<pad>"],
    )
    return CLIPTextModel(config)


def vae() -> AutoencoderKL:
    # Three downsamplings: 128 px -> 16x16x4 latents, SD's factor of 8.
    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        latent_channels=LATENT_CHANNELS,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        block_out_channels=(16, 32, 64, 64),
        layers_per_block=1,
        norm_num_groups=8,
        sample_size=SIZE,
    )


def unet() -> UNet2DConditionModel:
    # Cross-attention only at 8x8 and 4x4: captions set the whole scene, not pixel detail,
    # and attention over 16x16 would cost more than the rest of the network on a CPU. The
    # full-resolution level is narrow (32 channels, about a tenth of the compute), as in SD the
    # deep levels carry most of the work: that is what deep-feature caching (DeepCache) reuses.
    return UNet2DConditionModel(
        sample_size=SIZE // 8,
        in_channels=LATENT_CHANNELS,
        out_channels=LATENT_CHANNELS,
        layers_per_block=1,
        block_out_channels=(32, 128, 192),
        norm_num_groups=32,
        cross_attention_dim=TEXT_DIM,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=4,  # diffusers reads this as the number of heads
    )


def training_scheduler() -> DDPMScheduler:
    return DDPMScheduler(**SCHEDULE)


def inference_scheduler() -> EulerDiscreteScheduler:
    # SD 1.x's spacing: sampling starts at t=951 (20 steps), not 999, where a model this small
    # predicts the noise poorly and a deterministic sampler would lock in wrong colours.
    return EulerDiscreteScheduler(**SCHEDULE, timestep_spacing="leading", steps_offset=1)


def pipeline(
    vae_model: AutoencoderKL, encoder: CLIPTextModel, unet_model: UNet2DConditionModel
) -> StableDiffusionPipeline:
    return StableDiffusionPipeline(
        vae=vae_model,
        text_encoder=encoder,
        tokenizer=tokenizer(),
        unet=unet_model,
        scheduler=inference_scheduler(),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
