"""A preset's learned upscaler: the stage that takes a base model's picture to the size a final
shows (landmark-dit's 256x144 to 1920x1080), drawing the crisp edges and surface detail a
bicubic enlargement cannot.

`SceneUpscaler` is a feed-forward super-resolution network in the manner of EDSR and
Real-ESRGAN (residual blocks at the input's size, then nearest-neighbour enlargement and a
convolution twice, which leaves no checkerboard as transposed convolutions and pixel shuffles
can): it is given the base picture enlarged (bicubic) to a quarter of the target size and adds
to that picture, enlarged 4x, what the scene has and the enlargement lacks. It is trained on
the procedural landmark scenes drawn at both sizes, against a patch critic as well as L1
(`engine.training.train_upscaler`). It is a diffusers `ModelMixin`, saved in the preset's
folder under `upscaler/` (plain `DiffusionPipeline.from_pretrained` of the preset ignores it
and still loads), and one deterministic pass: the same base gives the same picture bit for bit,
so a variant's lineage re-renders it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from diffusers import ConfigMixin, ModelMixin
from diffusers.configuration_utils import register_to_config
from PIL import Image
from torch import nn

FOLDER = "upscaler"  # where a preset's folder holds its upscaler


class _Residual(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(F.relu(self.conv1(x)))


class SceneUpscaler(ModelMixin, ConfigMixin):
    """x4: a picture in [-1, 1] (N, 3, H, W) to (N, 3, 4H, 4W)."""

    @register_to_config
    def __init__(
        self,
        channels: int = 64,
        blocks: int = 8,
        half_channels: int = 32,  # after the first 2x enlargement
        full_channels: int = 16,  # at the output's size, where every channel costs most
    ):
        super().__init__()
        self.head = nn.Conv2d(3, channels, 3, padding=1)
        self.body = nn.Sequential(
            *(_Residual(channels) for _ in range(blocks)),
            nn.Conv2d(channels, channels, 3, padding=1),
        )
        self.up_half = nn.Conv2d(channels, half_channels, 3, padding=1)
        self.up_full = nn.Conv2d(half_channels, full_channels, 3, padding=1)
        self.refine = nn.Conv2d(full_channels, full_channels, 3, padding=1)
        self.conv_out = nn.Conv2d(full_channels, 3, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.head(x)
        h = h + self.body(h)
        h = F.leaky_relu(self.up_half(F.interpolate(h, scale_factor=2.0, mode="nearest")), 0.2)
        h = F.leaky_relu(self.up_full(F.interpolate(h, scale_factor=2.0, mode="nearest")), 0.2)
        h = self.conv_out(F.leaky_relu(self.refine(h), 0.2))
        return F.interpolate(x, scale_factor=4.0, mode="bicubic") + h


def enlarged(base: Image.Image, size: tuple[int, int]) -> Image.Image:
    """What the upscaler is given for a picture of `size`: the base enlarged to a quarter of it."""
    return base.convert("RGB").resize((size[0] // 4, size[1] // 4), Image.Resampling.BICUBIC)


def to_unit(pixels: torch.Tensor) -> torch.Tensor:
    """uint8 pixels to the network's [-1, 1]."""
    return pixels.float() / 127.5 - 1.0


def upscale(model: SceneUpscaler, base: Image.Image, size: tuple[int, int]) -> Image.Image:
    """`base` drawn at `size` (both sides multiples of 4)."""
    given = torch.from_numpy(np.array(enlarged(base, size))).permute(2, 0, 1)[None]
    param = next(model.parameters())
    with torch.inference_mode():
        drawn = model(to_unit(given).to(param.device, param.dtype)).float().clamp(-1, 1)
    pixels = ((drawn[0].permute(1, 2, 0) + 1) * 127.5).round().to(torch.uint8).cpu().numpy()
    return Image.fromarray(pixels)


def load_upscaler(preset_folder: Path, dtype: torch.dtype) -> SceneUpscaler | None:
    """The upscaler a preset's folder holds, or None."""
    folder = preset_folder / FOLDER
    if not (folder / "config.json").is_file():
        return None
    return SceneUpscaler.from_pretrained(folder, torch_dtype=dtype, use_safetensors=True).eval()
