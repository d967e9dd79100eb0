"""A final drawn from a layout takes its fine detail from the layout drawn at the final's size
(engine.layout_detail), only where the picture agrees with it."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from engine.detail import effective_lines
from engine.layout_detail import with_layout_detail
from engine.layouts import Layout

SIZE = (1920, 1080)
LAYOUT = Layout("Manhattan", "night", "clear").draw(3, SIZE)


def soft(picture: Image.Image, warmer: int = 0) -> Image.Image:
    """What an upscaler makes of a 256x144 picture of `picture`, its colours shifted."""
    small = np.asarray(picture.resize((256, 144), Image.Resampling.LANCZOS), int)
    small = np.clip(small + np.array([warmer, 0, -warmer]), 0, 255).astype(np.uint8)
    return Image.fromarray(small).resize(SIZE, Image.Resampling.BICUBIC)


def fine(picture: Image.Image) -> np.ndarray:
    """Its grey levels above a blur: windows, edges."""
    grey = picture.convert("L")
    return np.asarray(grey, float) - np.asarray(grey.filter(ImageFilter.GaussianBlur(6)), float)


def test_where_the_picture_agrees_with_its_layout_the_final_carries_the_layouts_detail():
    picture = soft(LAYOUT, warmer=12)  # the model's own picture of it, in a warmer light
    final = with_layout_detail(picture, LAYOUT)
    assert effective_lines(final) >= 3 * effective_lines(picture)
    # The detail is the layout's (its windows and cabs where they are), the light the model's.
    assert np.corrcoef(fine(final).ravel(), fine(LAYOUT).ravel())[0, 1] > 0.9
    red_final, red_layout, red_picture = (np.asarray(im, float)[..., 0].mean()
                                          for im in (final, LAYOUT, picture))  # fmt: skip
    assert abs(red_final - red_picture) < 1
    assert red_final > red_layout + 8


def test_where_the_model_drew_something_else_no_ghost_of_the_layout_shows():
    picture = soft(LAYOUT)
    # The model painted a block of lit windows over with sky. (Agreement is judged by colour:
    # a flat wall of the windows' mean colour would take their detail.)
    ImageDraw.Draw(picture).rectangle((200, 300, 700, 700), fill=(70, 120, 200))
    final = with_layout_detail(picture, LAYOUT)
    inside = (slice(330, 670), slice(230, 670))  # away from the block's edge
    assert np.abs(np.asarray(final, int)[inside] - np.asarray(picture, int)[inside]).max() <= 2
    assert np.abs(fine(LAYOUT)[inside]).mean() > 10  # where the layout has windows
    assert effective_lines(final) >= 2 * effective_lines(picture)  # and elsewhere its detail


def test_where_the_model_drew_the_windows_dimmer_no_dark_halo_rings_them():
    layout = np.asarray(LAYOUT, float)
    lit = layout.mean(2) > 150
    dimmed = layout.copy()
    dimmed[lit] *= 0.75
    picture = soft(Image.fromarray(dimmed.astype(np.uint8)))
    final = np.asarray(with_layout_detail(picture, LAYOUT).convert("L"), float)

    def within(pixels: int) -> np.ndarray:
        grown = Image.fromarray(lit.astype(np.uint8) * 255).filter(ImageFilter.MaxFilter(pixels))
        return np.asarray(grown) > 0

    ring, wall = within(9) & ~lit, within(41) & ~within(21)  # next to a window; the wall beyond
    grey = np.asarray(LAYOUT.convert("L"), float)
    # Adding the layout's edges to the model's dimmer windows left the wall round each darker
    # than the wall beyond (by 10 grey levels against the layout's own); the final follows the
    # layout there, in the model's light.
    assert (
        abs((final[ring].mean() - final[wall].mean()) - (grey[ring].mean() - grey[wall].mean())) < 4
    )


def test_a_clear_sky_s_sun_is_the_layout_s_whole_where_the_model_bit_it():
    """landmark-dit draws the sun as a blob, often bitten by the sky's blue at one side; the
    final shows the layout's disc wherever it is seen, and the hill in front of a low sun."""
    for light, radius in (("day", SIZE[1] / 16), ("golden", SIZE[1] / 9)):
        scene = Layout("San Francisco Bay Area", light, "clear").draw_scene(0, SIZE)
        seen = np.asarray(scene.sun) > 0
        ys, xs = np.nonzero(seen)
        layout = np.asarray(scene.image, int)
        picture = soft(scene.image)
        bite = (xs.min() - 10, ys.min() - 10, xs.min() + 50, ys.min() + 50)
        ImageDraw.Draw(picture).ellipse(bite, fill=(110, 150, 210))
        final = np.asarray(with_layout_detail(picture, scene.image, scene.sun), int)
        assert np.array_equal(final[seen], layout[seen])
        bitten = np.asarray(with_layout_detail(picture, scene.image), int)
        assert np.abs(bitten[seen] - layout[seen]).max() > 60  # as it was without the mask
        whole = np.pi * radius**2
        # By day the whole disc; at golden hour this one is half behind the hill, which stays.
        assert (0.95 * whole < seen.sum() < 1.05 * whole) == (light == "day")
        assert light == "day" or 0.2 * whole < seen.sum() < 0.6 * whole
    assert Layout("San Francisco Bay Area", "day", "cloudy").draw_scene(0, SIZE).sun is None
