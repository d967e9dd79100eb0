"""Moving stills: the product stays in the picture, and no two frames repeat."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from PIL import Image, ImageDraw

from templates.motion import Still, animate, grain
from templates.spec import Motion

SIZE = (320, 180)


@pytest.fixture(scope="module")
def product() -> Image.Image:
    cutout = Image.new("RGBA", (200, 300), (0, 0, 0, 0))
    ImageDraw.Draw(cutout).rectangle((20, 20, 180, 280), fill=(220, 30, 30, 255))
    return cutout


@pytest.mark.parametrize(
    "motion",
    [
        Motion(type="zoom", zoom_from=1.0, zoom_to=1.1),
        Motion(type="pan", zoom_from=1.12, zoom_to=1.12, pan="left"),
        Motion(type="parallax", zoom_from=1.0, zoom_to=1.08),
        Motion(type="still"),
    ],
    ids=lambda m: m.type,
)
def test_product_in_every_frame_and_no_repeats(photos, product, motion):
    frame = animate(Still(photos["backdrop"], product), motion, 4.0, SIZE)
    times = np.arange(0, 4.0, 1001 / 30000)
    previous = None
    for t in times[::5]:
        pixels = np.asarray(frame(float(t)), dtype=np.int16)
        centre = pixels[80:110, 150:170].reshape(-1, 3).mean(axis=0)
        assert centre[0] > 150 and centre[1] < 90, (motion.type, t)  # the red product
        if previous is not None:
            assert np.abs(pixels - previous).max() > 0, (motion.type, t)
        previous = pixels
    last, before = frame(float(times[-1])), frame(float(times[-2]))
    assert last.tobytes() != before.tobytes()  # still moving on the scene's last frame


def test_grain_keeps_even_a_flat_colour_moving():
    """On a flat colour no zoom or pan changes a pixel; the grain changes most of them every
    frame, too lightly to see, and the same way every time the spot is rendered."""
    flat = np.full((180, 320, 3), (46, 125, 90), dtype=np.uint8)
    frames = [grain(flat, n) for n in range(70)]
    for before, after in pairwise(frames):
        assert (before != after).mean() > 0.5
    assert np.array_equal(grain(flat, 41), frames[41])
    noise = frames[5].astype(np.int16) - flat
    assert abs(noise.mean()) < 0.1 and 1.0 < noise.std() < 2.0 and np.abs(noise).max() <= 10
    assert (noise[..., 0] == noise[..., 1]).all()  # monochrome: no coloured speckle
    white = grain(np.full((180, 320, 3), 255, dtype=np.uint8), 3)
    assert white.min() >= 245  # clipped, never wrapped round to black
