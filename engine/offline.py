"""Offline presets: small pipelines built in-process from fixed-seed random weights.

They draw noise, but they run every task through the real diffusers pipeline classes with the
real schedulers, so tests and benchmarks exercise the same code as the hub models. Each builder
seeds torch first, so a preset is the same weights on every machine.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from diffusers import (
    AutoencoderKL,
    AutoencoderKLWan,
    DiffusionPipeline,
    EulerDiscreteScheduler,
    FlowMatchEulerDiscreteScheduler,
    FluxPipeline,
    FluxTransformer2DModel,
    StableDiffusionPipeline,
    UNet2DConditionModel,
    WanImageToVideoPipeline,
    WanPipeline,
    WanTransformer3DModel,
)
from transformers import (
    CLIPImageProcessor,
    CLIPTextConfig,
    CLIPTextModel,
    CLIPVisionConfig,
    CLIPVisionModelWithProjection,
    T5Config,
    T5EncoderModel,
)

from engine.tokenizers import byte_tokenizer

SEED = 0
TEXT_DIM = 32


def _clip_text() -> CLIPTextModel:
    tokenizer = byte_tokenizer(77, bos=True)
    config = CLIPTextConfig(
        vocab_size=len(tokenizer),
        hidden_size=TEXT_DIM,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=77,
        projection_dim=TEXT_DIM,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return CLIPTextModel(config).eval(), tokenizer


def _t5() -> T5EncoderModel:
    tokenizer = byte_tokenizer(256, bos=False)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=TEXT_DIM,
        d_ff=64,
        d_kv=8,
        num_layers=2,
        num_heads=4,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    return T5EncoderModel(config).eval(), tokenizer


def _vae(latent_channels: int, **extra) -> AutoencoderKL:
    # Four blocks: a scale factor of 8, as in the real models, keeps latents small at 256 px.
    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        latent_channels=latent_channels,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        block_out_channels=(16, 16, 32, 32),
        layers_per_block=1,
        norm_num_groups=8,
        sample_size=256,
        **extra,
    )


def tiny_sd() -> DiffusionPipeline:
    torch.manual_seed(SEED)
    text_encoder, tokenizer = _clip_text()
    unet = UNet2DConditionModel(
        sample_size=32,
        in_channels=4,
        out_channels=4,
        layers_per_block=1,
        block_out_channels=(32, 64),
        norm_num_groups=8,
        cross_attention_dim=TEXT_DIM,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=8,
    )
    return StableDiffusionPipeline(
        vae=_vae(4),
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet,
        scheduler=EulerDiscreteScheduler(
            beta_start=0.00085,
            beta_end=0.012,
            beta_schedule="scaled_linear",
            timestep_spacing="trailing",
            steps_offset=1,
        ),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


def tiny_flux() -> DiffusionPipeline:
    torch.manual_seed(SEED)
    text_encoder, tokenizer = _clip_text()
    text_encoder_2, tokenizer_2 = _t5()
    transformer = FluxTransformer2DModel(
        patch_size=1,
        in_channels=16,
        num_layers=1,
        num_single_layers=2,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=TEXT_DIM,
        pooled_projection_dim=TEXT_DIM,
        axes_dims_rope=(4, 4, 8),
    )
    vae = _vae(
        4,
        use_quant_conv=False,
        use_post_quant_conv=False,
        shift_factor=0.0609,
        scaling_factor=1.5035,
    )
    return FluxPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(shift=1.0),
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        text_encoder_2=text_encoder_2,
        tokenizer_2=tokenizer_2,
        transformer=transformer,
    )


def _wan_parts() -> dict:
    text_encoder, tokenizer = _t5()
    vae = AutoencoderKLWan(
        base_dim=8,
        z_dim=16,
        dim_mult=[1, 1, 1, 1],
        num_res_blocks=1,
        temperal_downsample=[False, True, True],
    )
    return dict(
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=FlowMatchEulerDiscreteScheduler(shift=5.0),
    )


def _wan_transformer(in_channels: int, image_dim: int | None = None) -> WanTransformer3DModel:
    return WanTransformer3DModel(
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=16,
        in_channels=in_channels,
        out_channels=16,
        text_dim=TEXT_DIM,
        freq_dim=64,
        ffn_dim=64,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=64,
        image_dim=image_dim,
    )


def tiny_wan() -> DiffusionPipeline:
    torch.manual_seed(SEED)
    parts = _wan_parts()
    return WanPipeline(transformer=_wan_transformer(16), **parts)


def tiny_wan_i2v() -> DiffusionPipeline:
    torch.manual_seed(SEED)
    parts = _wan_parts()
    vision = CLIPVisionConfig(
        hidden_size=16,
        projection_dim=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        intermediate_size=32,
        patch_size=4,
    )
    return WanImageToVideoPipeline(
        transformer=_wan_transformer(36, image_dim=16),
        image_encoder=CLIPVisionModelWithProjection(vision).eval(),
        image_processor=CLIPImageProcessor(crop_size=32, size=32),
        **parts,
    )


BUILDERS: dict[str, Callable[[], DiffusionPipeline]] = {
    "tiny-sd": tiny_sd,
    "tiny-flux": tiny_flux,
    "tiny-wan": tiny_wan,
    "tiny-wan-i2v": tiny_wan_i2v,
}
