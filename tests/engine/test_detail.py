"""Effective detail lines: what a picture really carries, not the size it is shown at."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from engine.detail import effective_lines


def crisp(size=(640, 360)) -> Image.Image:
    """Hard-edged shapes of every size, as a sharp photograph of a street has."""
    image = Image.new("RGB", size, (90, 140, 200))
    d = ImageDraw.Draw(image)
    rng = np.random.default_rng(0)
    for _ in range(400):
        x, y = rng.integers(0, size[0]), rng.integers(0, size[1])
        w, h = rng.integers(4, 40, size=2)
        d.rectangle((x, y, x + w, y + h), fill=tuple(int(c) for c in rng.integers(0, 255, 3)))
    return image


def test_an_enlarged_small_picture_carries_only_its_small_lines():
    sharp = crisp()
    assert effective_lines(sharp) > 180  # over half of its 360
    small = sharp.resize((128, 72), Image.LANCZOS).resize(sharp.size, Image.BICUBIC)
    assert effective_lines(small) <= 100  # little more than its 72, whatever its size


def test_grain_is_not_detail():
    flat = np.full((360, 640, 3), 128, dtype=np.uint8)
    grain = np.random.default_rng(1).random((360, 640)) < 0.05  # scattered specks
    flat[grain] = 255
    assert effective_lines(Image.fromarray(flat)) <= 4
