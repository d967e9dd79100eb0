"""landmark-upscaler: model v2's second stage, a x4 latent diffusion upscaler in the shape of
diffusers' `StableDiffusionUpscalePipeline` (Stable Diffusion's x4 upscaler), trained from
scratch on the landmark scenes, so it loads with plain `DiffusionPipeline.from_pretrained`.

It is given the base model's 256x144 picture enlarged to 480x270 and draws the 1920x1080 one:
the upscaler's UNet denoises 480x270x16 latents with the enlarged picture beside them (19 input
channels), told how much noise was added to that picture (the noise level, a class label), and
its autoencoder decodes x4. What it learns is what a 1080p landmark scene has that its 256x144
drawing lacks: crisp edges, and the hard-edged texture of grass, rock, canopy, water and city
lights (`landmarks.py` draws it only at sizes that show it).

Shape chosen for 2 CPU cores (measured on these machines):
- The UNet is convolutional only (no attention): at 480x270 latents self-attention would cost
  more than the rest of the network, and the caption adds nothing the enlarged picture does not
  already say. `StableDiffusionUpscalePipeline` still encodes the prompt, so a minimal text
  encoder stands in; the UNet has no layer that reads it.
- The autoencoder is a DC-AE at x4 without attention (`vae` says why DC): at 1080p attention
  costs more than the rest (a KL autoencoder decoded a 1080p picture in 174 s with its
  mid-block attention, 14.6 s without).
- Training uses 128x128 crops of 1080p scenes and the matching 32x32 crops of the enlarged
  base picture: the networks are convolutional, so they run on whole frames after.
- v-prediction, as SD's x4 upscaler; noise-level augmentation of the enlarged picture (up to
  150 of 350) so the model sharpens a generated base picture too, not only a clean drawing.

The first run added no detail: its autoencoder (Stable Diffusion's KL one, 4 latent channels,
1000 steps) gave back 177 of a 1080p scene's 1080 lines, a ceiling no UNet on its latents can
pass. Measured alone since (docs/benchmarks.md, "The upscaler's autoencoder alone" and "A DC
autoencoder for the upscaler"), it was short of training more than of channels, and a DC-AE
with 16 latent channels learns about four times faster in time than the KL one.
"""

from __future__ import annotations

import numpy as np
import torch
from diffusers import (
    AutoencoderDC,
    DDPMScheduler,
    EulerDiscreteScheduler,
    StableDiffusionUpscalePipeline,
    UNet2DConditionModel,
)
from PIL import Image

from engine.training import model as sd
from engine.training.dc_autoencoder import dc_autoencoder
from engine.training.landmarks import SIGNATURES, TRAIN_SIZE, LandmarkParams, draw
from engine.training.scenes import TIMES, WEATHER

HIGH = (1920, 1080)
LOW = (HIGH[0] // 4, HIGH[1] // 4)  # what the UNet works at: the base picture, enlarged
# 16 of them for 48 numbers a 4x4 patch has: with 4 (SD's x4 upscaler's) the autoencoder kept
# 177 lines after 1000 steps, with 16 it kept 231 (docs/benchmarks.md).
LATENT_CHANNELS = 16
AUTOENCODER_CHANNELS = (16, 32, 64)  # per resolution, full to a quarter
CROP = 128  # training crops of the 1080p picture (32x32 of the enlarged base picture)
# StableDiffusionUpscalePipeline sets this scaling factor on any autoencoder it is given, so
# the trained autoencoder's latents are scaled to suit it (`fit_latent_scale`).
SCALING = 0.08333
NOISE_LEVEL = 20  # added to the enlarged picture at inference, as SD's x4 upscaler does
MAX_TRAIN_NOISE_LEVEL = 150
SCHEDULE = dict(
    num_train_timesteps=1000,
    beta_schedule="scaled_linear",
    beta_start=0.0001,
    beta_end=0.02,
    prediction_type="v_prediction",
)
LOW_RES_SCHEDULE = dict(
    num_train_timesteps=1000, beta_schedule="linear", beta_start=0.0001, beta_end=0.02
)


def vae() -> AutoencoderDC:
    """A DC-AE at x4 (`dc_autoencoder`): at equal steps it kept about twice the lines of Stable
    Diffusion's KL autoencoder, at 58 % of its time a step (docs/benchmarks.md). The shortcuts
    around the latent itself are off, so that the latents can be rescaled exactly
    (`fit_latent_scale`)."""
    return dc_autoencoder(
        AUTOENCODER_CHANNELS,  # two downsamplings: x4
        LATENT_CHANNELS,
        encoder_out_shortcut=False,
        decoder_in_shortcut=False,
        scaling_factor=SCALING,
    )


def unet() -> UNet2DConditionModel:
    return UNet2DConditionModel(
        sample_size=CROP // 4,
        in_channels=LATENT_CHANNELS + 3,  # latents and the enlarged picture
        out_channels=LATENT_CHANNELS,
        layers_per_block=2,
        block_out_channels=(32, 64, 96),
        norm_num_groups=16,
        cross_attention_dim=sd.TEXT_DIM,
        down_block_types=("DownBlock2D",) * 3,
        up_block_types=("UpBlock2D",) * 3,
        mid_block_type=None,
        num_class_embeds=1000,  # the noise level, as SD's x4 upscaler embeds it
    )


def noise_schedule() -> DDPMScheduler:
    return DDPMScheduler(**SCHEDULE)


def low_res_noise_schedule() -> DDPMScheduler:
    """How the enlarged picture is noised to a noise level (in training and by the pipeline)."""
    return DDPMScheduler(**LOW_RES_SCHEDULE)


def pipeline(vae_model: AutoencoderDC, unet_model: UNet2DConditionModel):
    tokenizer = sd.tokenizer()
    torch.manual_seed(0)  # the stand-in text encoder's weights: no layer reads its output
    return StableDiffusionUpscalePipeline(
        vae=vae_model,
        text_encoder=sd.text_encoder(len(tokenizer)),
        tokenizer=tokenizer,
        unet=unet_model,
        low_res_scheduler=low_res_noise_schedule(),
        # Trailing spacing starts sampling at the last timestep, pure noise, as trained.
        scheduler=EulerDiscreteScheduler(**SCHEDULE, timestep_spacing="trailing"),
        max_noise_level=350,
    )


def enlarged(base: Image.Image) -> Image.Image:
    """What the upscaler learns from: a base picture (256x144) enlarged to a quarter of 1080p."""
    return base.convert("RGB").resize(LOW, Image.Resampling.BICUBIC)


def upscale(pipe, base: Image.Image, steps: int, seed: int, prompt: str = "") -> Image.Image:
    """The 1920x1080 picture the upscaler draws from a base picture. The pipeline takes sides
    in multiples of its x4 factor, so the 270 rows are given an edge row above and below and
    the 4 rows each of those became are cut from its 1088. The pipeline stops at latents and
    the autoencoder decodes them here: StableDiffusionUpscalePipeline's own decoding step
    reads a layer only AutoencoderKL has (`post_quant_conv`, to pick a dtype)."""
    given = np.asarray(enlarged(base))
    padded = Image.fromarray(np.concatenate([given[:1], given, given[-1:]]))
    with torch.inference_mode():
        latents = pipe(
            prompt,
            image=padded,
            num_inference_steps=steps,
            guidance_scale=1.0,  # the UNet reads no prompt: nothing to guide
            noise_level=NOISE_LEVEL,
            generator=torch.Generator().manual_seed(seed),
            output_type="latent",
        ).images
        pixels = pipe.vae.decode(latents.to(pipe.vae.dtype) / pipe.vae.config.scaling_factor).sample
    drawn = pipe.image_processor.postprocess(pixels, output_type="pil")[0]
    return drawn.crop((0, 4, HIGH[0], 4 + HIGH[1]))


def scene_pair(params: LandmarkParams) -> tuple[np.ndarray, np.ndarray]:
    """A scene at 1080p and its base-size drawing enlarged, as uint8 HxWx3 arrays."""
    high = np.asarray(draw(params, HIGH))
    return high, np.asarray(enlarged(draw(params, TRAIN_SIZE)))


def pair_params(index: int, seed_base: int = 2_000_000) -> LandmarkParams:
    """Scene `index` of the upscaler's data: every geography x time x weather in turn."""
    combos = [(g, t, w) for g in SIGNATURES for t in TIMES for w in WEATHER]
    return LandmarkParams(*combos[index % len(combos)], seed=seed_base + index)


def random_crops(
    high: torch.Tensor, low: torch.Tensor, count: int, g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` aligned crops of one scene: CROP x CROP of the 1080p picture (uint8 3xHxW) and
    the matching quarter-size crop of the enlarged base picture."""
    size, quarter = CROP, CROP // 4
    ys = torch.randint(0, (HIGH[1] - size) // 4 + 1, (count,), generator=g).tolist()
    xs = torch.randint(0, (HIGH[0] - size) // 4 + 1, (count,), generator=g).tolist()
    highs = [
        high[:, 4 * y : 4 * y + size, 4 * x : 4 * x + size] for y, x in zip(ys, xs, strict=True)
    ]
    lows = [low[:, y : y + quarter, x : x + quarter] for y, x in zip(ys, xs, strict=True)]
    return torch.stack(highs), torch.stack(lows)


def fit_latent_scale(vae_model: AutoencoderDC, samples: torch.Tensor) -> float:
    """Rescale the autoencoder's latents, exactly, so that SCALING times them has unit
    variance: the encoder's last convolution is multiplied by k and the decoder's first one
    divided by k. Returns k."""
    with torch.no_grad():
        k = 1.0 / (SCALING * vae_model.encode(samples).latent.std().item())
        vae_model.encoder.conv_out.weight *= k
        vae_model.encoder.conv_out.bias *= k
        vae_model.decoder.conv_in.weight /= k
    return k
