"""Overlays: inside title-safe, legible on any picture, the same layout in both tiers."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from templates.overlay import MIN_CONTRAST, LayoutError, overlay
from templates.spec import all_templates
from templates.storyboard import Brand, build_storyboard

BACKGROUNDS = {
    "white": lambda size, photos: Image.new("RGB", size, "white"),
    "black": lambda size, photos: Image.new("RGB", size, "black"),
    "photo": lambda size, photos: photos["backdrop"].resize(size),
    "yellow": lambda size, photos: Image.new("RGB", size, (242, 177, 52)),
}


def scenes(brief):
    return [(t.id, s) for t in all_templates() for s in build_storyboard(t, brief).scenes]


@pytest.mark.parametrize("background", list(BACKGROUNDS))
def test_text_is_title_safe_and_legible(brief, photos, background):
    size = (1920, 1080)
    picture = BACKGROUNDS[background](size, photos)
    for template_id, scene in scenes(brief):
        layer, blocks = overlay(scene, brief.brand, picture)
        assert len(blocks) == len(scene.copy_text), (template_id, scene.kind)
        for block in blocks:
            x0, y0, x1, y1 = block.box
            # The text itself sits inside the 90 % title-safe area (its scrim may pad it).
            assert x0 + round(0.35 * block.font_px) >= 96 - 1, (template_id, block)
            assert x1 - round(0.35 * block.font_px) <= 1824 + 1, (template_id, block)
            assert y0 + round(0.17 * block.font_px) >= 54 and y1 <= 1026 + 1, (template_id, block)
            assert block.contrast >= MIN_CONTRAST, (template_id, scene.kind, block)
            assert block.font_px >= 30  # readable across a living room
        alpha = np.asarray(layer.getchannel("A"))
        assert alpha[:54].max() == 0 or scene.logo  # nothing but the logo in the top margin


def test_scrim_appears_only_where_needed(brief, photos):
    board = build_storyboard(all_templates()[1], brief)  # product-hero
    headline_scene = board.scenes[0]
    white = Image.new("RGB", (1920, 1080), "white")
    black = Image.new("RGB", (1920, 1080), "black")
    stripes = np.zeros((1080, 1920, 3), dtype=np.uint8)
    stripes[:, ::40] = 255  # a busy picture: bright and dark under the same words
    for offset in range(1, 20):
        stripes[:, offset::40] = 255
    assert not overlay(headline_scene, brief.brand, white)[1][0].scrim  # dark text suffices
    assert not overlay(headline_scene, brief.brand, black)[1][0].scrim  # light text suffices
    busy = overlay(headline_scene, brief.brand, Image.fromarray(stripes))[1][0]
    assert busy.scrim and busy.contrast >= MIN_CONTRAST  # no colour reads on both


def test_same_layout_in_both_tiers(brief, photos):
    for template_id, scene in scenes(brief):
        big = overlay(scene, brief.brand, photos["backdrop"].resize((1920, 1080)))[1]
        small = overlay(scene, brief.brand, photos["backdrop"].resize((640, 360)))[1]
        for a, b in zip(big, small, strict=True):
            assert np.allclose(np.array(a.box) / 3, b.box, atol=6), (template_id, a, b)
            assert abs(a.font_px / 3 - b.font_px) <= 2


def test_long_copy_shrinks_then_refuses(brief):
    board = build_storyboard(all_templates()[1], brief)
    scene = board.scenes[0]
    long = scene.model_copy(update={"copy_text": {"headline": "Mornings, perfected " * 2}})
    short_block = overlay(scene, brief.brand, Image.new("RGB", (1920, 1080)))[1][0]
    long_block = overlay(long, brief.brand, Image.new("RGB", (1920, 1080)))[1][0]
    assert long_block.font_px < short_block.font_px
    absurd = scene.model_copy(update={"copy_text": {"headline": "Supercalifragilistic" * 8}})
    with pytest.raises(LayoutError, match=r"headline: .* does not fit on screen"):
        overlay(absurd, brief.brand, Image.new("RGB", (1920, 1080)))


def test_end_card_has_a_scannable_qr_and_logo(brief):
    board = build_storyboard(all_templates()[1], brief)
    end = board.scenes[-1]
    layer, _ = overlay(
        end,
        Brand(colors=["#000000"], logo=brief.brand.logo),
        Image.new("RGB", (1920, 1080), (30, 30, 30)),
    )
    rgba = np.asarray(layer)
    # The QR code: a square of pure black and white modules, 30 % of the frame's height,
    # at the right edge of title-safe.
    qr = rgba[378:702, 1500:1824]
    opaque = qr[..., 3] == 255
    assert opaque.mean() > 0.95
    values = set(np.unique(qr[opaque][:, :3]))
    assert values <= {0, 255} and len(values) == 2
    assert rgba[54:270, 96:500, 3].max() == 255  # the logo, top left inside title-safe
