"""Overlays: inside title-safe, legible on any picture, the same layout in both tiers."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from templates.cards import brand_card
from templates.layout import LAYOUTS
from templates.overlay import MIN_CONTRAST, LayoutError, check_layout, overlay
from templates.spec import all_templates, load_template, template_ids
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


def qr_box(layer: Image.Image) -> tuple[int, int, int, int]:
    """Where the QR code landed: the rows holding a run of wholly opaque pixels as wide as its
    side (its white margin makes every row of it solid; no line of text is)."""
    side = round(LAYOUTS["16:9"].qr_side * layer.height)
    solid = (np.asarray(layer.getchannel("A")) == 255).astype(np.int32)
    # Opaque pixels in each window of `side` pixels along each row.
    window = np.cumsum(np.pad(solid, ((0, 0), (1, 0))), axis=1)
    full = (window[:, side:] - window[:, :-side]) == side
    rows = np.flatnonzero(full.any(axis=1))
    x0 = int(np.flatnonzero(full[rows[0]])[0])
    return x0, int(rows[0]), x0 + side, int(rows[-1]) + 1


def end_card(brief, template_id="product-hero"):
    return build_storyboard(load_template(template_id), brief).scenes[-1]


def test_end_card_has_a_scannable_qr_and_logo(brief):
    layer, blocks = overlay(
        end_card(brief),
        Brand(colors=["#000000"], logo=brief.brand.logo),
        Image.new("RGB", (1920, 1080), (30, 30, 30)),
    )
    rgba = np.asarray(layer)
    # The QR code: a square of pure black and white modules, 30 % of the frame's height, in
    # the right column of title-safe.
    x0, y0, x1, y1 = qr_box(layer)
    assert (x1 - x0, y1 - y0) == (324, 324) and x0 > 960 and x1 <= 1824 and y0 >= 54
    qr = rgba[y0:y1, x0:x1]
    assert (qr[..., 3] == 255).all()
    values = set(np.unique(qr[..., :3]))
    assert values <= {0, 255} and len(values) == 2
    # The logo (its orange disc), inside title-safe, above the business's name.
    disc = np.all(rgba == (242, 177, 52, 255), axis=-1)
    ys, xs = np.nonzero(disc)
    name = {b.slot: b for b in blocks}["business"]
    assert xs.min() >= 96 and ys.min() >= 54 and xs.max() < x0
    assert ys.max() < name.box[1]


def test_a_logo_that_would_vanish_on_the_card_sits_on_a_plate(brief, tmp_path):
    # A logo drawn for a white page: an orange disc and dark brown lettering, no background.
    # On the navy brand card the lettering read at 1.2:1 and could not be seen.
    path = tmp_path / "bakery.png"
    drawn = Image.new("RGBA", (400, 200), (0, 0, 0, 0))
    pen = ImageDraw.Draw(drawn)
    pen.ellipse((10, 10, 190, 190), fill=(200, 120, 60, 255))
    pen.rectangle((210, 70, 390, 130), fill=(90, 40, 30, 255))
    drawn.save(path)
    brand = Brand(colors=["#1F3A5F", "#F2B134"], logo=path)
    for card, plate in (
        (brand_card(brand, (1920, 1080)), 255),
        (Image.new("RGB", (1920, 1080), "white"), None),
    ):
        rgba = np.asarray(overlay(end_card(brief), brand, card)[0])
        lettering = np.nonzero(np.all(rgba == (90, 40, 30, 255), axis=-1))
        assert lettering[0].size  # drawn
        y, x = lettering[0].min() - 4, lettering[1].min() - 4  # just outside it: the plate
        if plate is None:
            assert rgba[y, x, 3] == 0  # on white it reads as it is
        else:
            assert tuple(rgba[y, x]) == (plate, plate, plate, 255)
    # A scene's corner mark over a dark picture too.
    first = build_storyboard(load_template("product-hero"), brief).scenes[0]
    scene = first.model_copy(update={"logo": True})
    mark = np.asarray(overlay(scene, brand, Image.new("RGB", (1920, 1080), (20, 25, 40)))[0])
    assert tuple(mark[58, 220]) == (255, 255, 255, 255)  # above the logo: the plate
    # A logo with its own background (a JPEG's white box) is its own plate, on any card.
    boxed = tmp_path / "boxed.jpg"
    drawn.convert("RGB").save(boxed)  # transparent -> black box: dark lettering on it, faint
    for card in (Image.new("RGB", (1920, 1080), "white"), Image.new("RGB", (1920, 1080), "navy")):
        layer = overlay(scene, Brand(colors=["#1F3A5F"], logo=boxed), card)[0]
        ys, xs = np.nonzero(np.asarray(layer)[:300, :600, 3])  # the corner (the copy is lower)
        assert (ys.min(), xs.min()) == (54, 96)  # no plate round it: the box starts at the corner
        assert ys.max() - ys.min() + 1 == 108  # the box's own height, 10 % of the frame's


@pytest.mark.parametrize("template_id", template_ids())
def test_every_end_card_names_the_business_and_how_to_reach_it(brief, template_id):
    end = end_card(brief, template_id)
    layer, blocks = overlay(end, brief.brand, brand_card(brief.brand, (1920, 1080)))
    shown = {b.slot: " ".join(b.lines) for b in blocks}
    assert shown["business"] == "Harbor Coffee Co."
    assert shown["url"] == "harborcoffee.com/tv"  # as a viewer types it; the QR has it all
    assert shown["phone"] == "(415) 555-0134"
    assert shown["tagline"] == "Small batch. Big flavour."
    # The web address and the phone sit just under the QR code, centred on it.
    qr = qr_box(layer)
    by_slot = {b.slot: b for b in blocks}
    url, phone = by_slot["url"].box, by_slot["phone"].box
    for box in (url, phone):
        assert abs((box[0] + box[2]) / 2 - (qr[0] + qr[2]) / 2) <= 2
    assert 0 <= url[1] - qr[3] <= 0.06 * 1080 and url[3] <= phone[1] + 2
    # The name is what is drawn in its box, and nothing else changes with it.
    other = end.model_copy(update={"copy_text": {**end.copy_text, "business": "Harbor Coffee Cx."}})
    changed = np.any(
        np.asarray(layer)
        != np.asarray(overlay(other, brief.brand, brand_card(brief.brand, (1920, 1080)))[0]),
        axis=-1,
    )
    ys, xs = np.nonzero(changed)
    x0, y0, x1, y1 = by_slot["business"].box
    assert len(xs) > 100 and xs.min() >= x0 and xs.max() < x1 and ys.min() >= y0 and ys.max() < y1


def test_phone_only_when_given(brief):
    size = (1920, 1080)
    card = brand_card(brief.brand, size)
    without = brief.model_copy(update={"phone": ""})
    end = end_card(without)
    assert "phone" not in end.copy_text
    layer, blocks = overlay(end, without.brand, card)
    assert "phone" not in {b.slot for b in blocks}
    url = {b.slot: b for b in blocks}["url"].box
    qr = qr_box(layer)
    # Nothing is drawn under the web address: no empty label, no stray scrim.
    assert np.asarray(layer.getchannel("A"))[url[3] :, qr[0] - 200 :].max() == 0


def test_long_names_and_addresses_wrap_never_cut(brief):
    """A 120-character name (the longest an account may have) and a long web address: every
    word is on screen, at a legible size, inside title-safe and clear of the QR code."""
    name = (
        "The Original Brooklyn Heights Family-Owned Artisanal Coffee Roasters, Bakery "
        "and Neighbourhood Kitchen, Since 1952"
    )
    assert len(name) <= 120
    long = brief.model_copy(
        update={
            "business_name": name,
            "cta_url": "https://www.brooklynheightscoffeeroasters.com/spring-sale-2025/",
        }
    )
    for size in ((1920, 1080), (640, 360)):
        layer, blocks = overlay(end_card(long), long.brand, brand_card(long.brand, size))
        by_slot = {b.slot: b for b in blocks}
        business, url = by_slot["business"], by_slot["url"]
        assert " ".join(business.lines) == name and len(business.lines) <= 3
        # The address breaks after a "." or "/" and joins back to itself.
        assert "".join(url.lines) == "www.brooklynheightscoffeeroasters.com/spring-sale-2025"
        assert all(line.endswith((".", "/", "-")) for line in url.lines[:-1])
        scale = size[1] / 1080
        for block in (business, url):
            assert block.font_px >= 30 * scale - 1
            pad = round(0.35 * block.font_px)
            assert block.box[0] + pad >= 0.05 * size[0] - 1
            assert block.box[2] - pad <= 0.95 * size[0] + 1
        assert business.box[2] - round(0.35 * business.font_px) < qr_box(layer)[0]


def test_a_line_that_cannot_fit_is_refused_before_rendering(brief):
    unbreakable = brief.model_copy(update={"cta_url": "https://" + "x" * 50 + ".com"})
    board = build_storyboard(load_template("product-hero"), unbreakable)
    with pytest.raises(LayoutError, match=r"url: .* does not fit on screen"):
        check_layout(board)
    check_layout(build_storyboard(load_template("product-hero"), brief))  # the brief's own fits
