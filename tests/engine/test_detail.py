"""Effective detail lines: what a picture really carries, not the size it is shown at."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from engine.detail import effective_lines, patch_grid


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


def test_an_enlarged_picture_carries_the_lines_it_was_made_at():
    sharp = crisp()
    assert effective_lines(sharp) == 360  # saturated: no fewer lines keep it
    for made_at in (90, 180, 270):
        small = sharp.resize((round(640 * made_at / 360), made_at), Image.LANCZOS)
        lines = effective_lines(small.resize(sharp.size, Image.BICUBIC))
        assert made_at <= lines <= 1.15 * made_at, (made_at, lines)


def test_grain_is_not_detail():
    flat = np.full((360, 640, 3), 128, dtype=np.uint8)
    grain = np.random.default_rng(1).random((360, 640)) < 0.05  # scattered specks
    flat[grain] = 255
    assert effective_lines(Image.fromarray(flat)) <= 4


def test_a_patch_grid_stands_out_and_a_picture_without_one_does_not():
    """16x16 tiles (a 16x9 picture enlarged 16 times) read far above 1 in either alignment;
    the same detail drawn at full size, and the tiles half a tile over, do not hide it."""
    tiles = crisp((16, 9)).resize((256, 144), Image.NEAREST)
    shifted = Image.new("RGB", (256, 144))
    shifted.paste(tiles, (8, 8))
    assert patch_grid(tiles) > 3 and patch_grid(shifted) > 3
    assert patch_grid(crisp((256, 144))) < 1.5
