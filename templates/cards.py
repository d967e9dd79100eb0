"""Brand cards: the backdrop of offer and end-card scenes, drawn from the brand colours."""

from __future__ import annotations

import numpy as np
from PIL import Image

from templates.storyboard import Brand


def brand_card(brand: Brand, size: tuple[int, int], seed: int = 0) -> Image.Image:
    """A radial gradient of the primary colour with a soft accent glow and fine grain.

    The grain gives the slow zoom texture to move (every frame also gets a moving grain of its
    own at export, `motion.grain`).
    """
    w, h = size
    primary = np.array(_rgb(brand.colors[0]), dtype=np.float32)
    accent = np.array(_rgb(brand.colors[-1]), dtype=np.float32)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.hypot((x - 0.5 * w) / w, (y - 0.45 * h) / h) * 1.6
    shade = np.clip(1.15 - 0.55 * r, 0.55, 1.15)[..., None]
    glow = np.exp(-(((x - 0.85 * w) / (0.35 * w)) ** 2 + ((y - 0.15 * h) / (0.35 * h)) ** 2))
    rgb = primary * shade * (1 - 0.35 * glow[..., None]) + accent * 0.35 * glow[..., None]
    grain = np.random.default_rng(seed).normal(0, 3.0, (h, w, 1)).astype(np.float32)
    return Image.fromarray(np.clip(rgb + grain, 0, 255).astype(np.uint8))


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
