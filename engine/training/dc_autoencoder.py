"""The deep-compression autoencoder (DC-AE: Chen et al. 2024, "Deep Compression Autoencoder for
Efficient High-Resolution Diffusion Models", diffusers' `AutoencoderDC`) in the shape
landmark-dit uses: ResBlocks, one a level, no attention. Its down and up blocks add a
parameter-free shortcut (pixels folded into channels and averaged, or repeated and unfolded),
so it starts near a plain space-to-depth code and learns the rest: on these scenes it learned
several times faster than Stable Diffusion's KL autoencoder (docs/benchmarks.md)."""

from __future__ import annotations

from diffusers import AutoencoderDC


def dc_autoencoder(
    channels: tuple[int, ...], latent_channels: int, **config: object
) -> AutoencoderDC:
    """Downsampling x2 ** (len(channels) - 1); `config`: further AutoencoderDC arguments."""
    levels = len(channels)
    model = AutoencoderDC(
        in_channels=3,
        latent_channels=latent_channels,
        encoder_block_types="ResBlock",
        decoder_block_types="ResBlock",
        encoder_block_out_channels=channels,
        decoder_block_out_channels=channels,
        encoder_layers_per_block=(1,) * levels,
        decoder_layers_per_block=(1,) * levels,
        encoder_qkv_multiscales=((),) * levels,  # no attention: at 1080p it costs the most
        decoder_qkv_multiscales=((),) * levels,
        **config,
    )
    # The pipeline that takes it (SD3) reads its downsampling factor from an
    # AutoencoderKL's config key; stored in the config it survives save and load (diffusers
    # logs it as unexpected).
    model.register_to_config(block_out_channels=channels)
    return model
