"""Moving stills: the product stays in the picture, and no two frames repeat."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from templates.motion import Still, animate
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
