"""Compositing a product onto a background: the product's own pixels are kept (exactly, or
within the stated harmonisation tolerance), only a thin outline is blended, and a contact shadow
grounds it."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from templates.composite import PRODUCT_TOLERANCE, Placement, composite
from templates.errors import BriefError

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def product_photo() -> Image.Image:
    """A red can with printed white text on a transparent ground, anti-aliased outline."""
    big = Image.new("RGBA", (800, 1200), (0, 0, 0, 0))
    draw = ImageDraw.Draw(big)
    draw.rounded_rectangle((100, 100, 700, 1100), radius=120, fill=(200, 30, 40, 255))
    draw.text((180, 500), "TRAIL", fill=(255, 255, 255, 255), font=ImageFont.truetype(DEJAVU, 150))
    return big.resize((400, 600), Image.Resampling.LANCZOS)


def scene() -> Image.Image:
    """A sky-over-ground background at another aspect ratio than the frame."""
    pixels = np.zeros((300, 400, 3), dtype=np.uint8)
    pixels[:180] = (120, 170, 230)
    pixels[180:] = (90, 140, 70)
    return Image.fromarray(pixels)


def placed_product(result) -> tuple[np.ndarray, np.ndarray]:
    """The frame and, at the same place, the scaled product photo as it went in."""
    frame = np.asarray(result.image).astype(int)
    left, top, right, bottom = result.box
    placed = np.zeros_like(frame)
    placed[top:bottom, left:right] = np.asarray(result.product.convert("RGB"))
    return frame, placed


def test_the_product_keeps_its_own_pixels():
    result = composite(scene(), product_photo(), (640, 360), harmonise=0)
    frame, placed = placed_product(result)
    inside = np.asarray(result.interior) > 0
    assert np.array_equal(frame[inside], placed[inside])  # exact, text included
    left, top, right, bottom = result.box
    opaque = np.zeros(inside.shape, dtype=bool)
    opaque[top:bottom, left:right] = np.asarray(result.product.getchannel("A")) == 255
    assert inside.sum() >= 0.9 * opaque.sum()  # only a thin outline is blended
    # Scaled to the placement: 55 % of the frame's height, standing at 90 %.
    assert bottom - top == round(0.55 * 360) and bottom == round(0.9 * 360)


def test_harmonisation_tints_the_product_toward_the_scene_within_the_tolerance():
    dusk = Image.new("RGB", (400, 300), (40, 60, 150))  # a deep blue evening
    result = composite(dusk, product_photo(), (640, 360))
    frame, placed = placed_product(result)
    inside = np.asarray(result.interior) > 0
    moved = frame[inside] - placed[inside]
    assert np.abs(moved).max() <= PRODUCT_TOLERANCE  # the red can stays that red can
    blue, red = moved[..., 2].mean(), moved[..., 0].mean()
    assert blue > 2 and red < -2  # ...yet it is lit by the blue light around it
    # The printed text is as legible as before: its contrast to the can is unchanged.
    text = placed[inside].sum(-1) > 600
    assert text.any() and np.abs(np.ptp(frame[inside][:, 0]) - np.ptp(placed[inside][:, 0])) <= 1


def test_the_outline_blends_and_a_shadow_grounds_the_product():
    background = np.asarray(scene().resize((480, 360)).crop((0, 0, 480, 360)))
    result = composite(scene(), product_photo(), (480, 360))
    frame = np.asarray(result.image).astype(int)
    left, top, right, bottom = result.box
    middle = (left + right) // 2
    below = frame[bottom + 2, middle]
    ground = frame[bottom + 2, 5]
    assert below.sum() < ground.sum() - 30  # darker under the product than beside it
    assert np.array_equal(frame[5, 5], background[5, 5].astype(int))  # far away: untouched
    # Along the outline, colours sit between the product's red and the scene behind it.
    row = frame[(top + bottom) // 2, left - 1 : left + 4]
    assert row[0][0] < row[-1][0]


def test_an_empty_cut_out_or_a_placement_off_the_frame_is_refused():
    empty = Image.new("RGBA", (50, 50), (0, 0, 0, 0))
    with pytest.raises(BriefError, match="no product was found"):
        composite(scene(), empty, (320, 180))
    with pytest.raises(ValueError, match="does not fit"):
        composite(scene(), product_photo(), (320, 180), Placement(centre_x=0.02))
