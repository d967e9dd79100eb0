"""One storyboard in three shapes (16:9, 9:16, 1:1): each laid out for its screen, the copy whole
inside its title-safe area and the product whole in the frame, with the same timing and sound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from engine.segmentation import Segmenter
from templates.audio import pcm
from templates.export import PREVIEW, render, shaped
from templates.motion import Still, animate
from templates.overlay import MIN_SIZE, LayoutError, overlay, safe_area
from templates.spec import SHAPES, all_templates, load_template
from templates.storyboard import build_storyboard

WORDS = "fresh roasted coffee beans from our harbor roastery delivered every morning"
NAME = (
    "The Original Brooklyn Heights Family-Owned Artisanal Coffee Roasters, Bakery "
    "and Neighbourhood Kitchen, Since 1952, Brooklyn"
)
WEB = "www.harborcoffeeroasters.com/spring-sale/espresso-beans/whole-bean/decaf/"
PHONE = "(415) 555-0134 or (415) 555-0199 ext. 1234"


def longest(slot) -> str:
    """Copy exactly as long as the slot allows, in words a customer would write (cut at the
    limit, the last word shortened)."""
    source = {"web": WEB, "phone": PHONE, "name": NAME}.get(slot.role, WORDS)
    while len(source) < slot.max_chars:
        source = f"{source} {source}"
    text = source[: slot.max_chars]
    return text[:-1] + "s" if text[-1] in " /.-" else text  # no space or break at its end


def preview_size(shape: str) -> tuple[int, int]:
    tier = shaped(PREVIEW, shape)
    return tier.width, tier.height


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_longest_copy_is_whole_and_title_safe_in_every_shape(brief, shape):
    size = preview_size(shape)
    assert size == tuple(side // 3 for side in SHAPES[shape]) and all(s % 2 == 0 for s in size)
    left, top, right, bottom = safe_area(size)
    black = Image.new("RGB", size)  # no scrim is needed on it: every drawn pixel is copy or QR
    for template in all_templates():
        for scene in build_storyboard(template, brief).scenes:
            copy = {slot.slot: longest(slot) for slot in scene.slots}
            assert all(len(copy[s.slot]) == s.max_chars for s in scene.slots)
            long = scene.model_copy(update={"copy_text": copy})
            layer, blocks = overlay(long, brief.brand, black)
            where = (template.id, scene.kind)
            assert {b.slot for b in blocks} == set(copy), where
            for block in blocks:
                shown = block.lines
                glue = "" if block.slot == "url" else " "
                assert glue.join(shown) == copy[block.slot], (where, block)  # every word, once
                assert block.font_px >= MIN_SIZE * min(size) - 1, (where, block)
            # Measured on the drawn layer: nothing outside title-safe, so nothing cut.
            ys, xs = np.nonzero(np.asarray(layer.getchannel("A")))
            assert xs.min() >= left and xs.max() < right, where
            assert ys.min() >= top and ys.max() < bottom, where
            # No block drawn over another.
            for i, a in enumerate(blocks):
                for b in blocks[i + 1 :]:
                    overlap = min(a.box[2], b.box[2]) > max(a.box[0], b.box[0]) and min(
                        a.box[3], b.box[3]
                    ) > max(a.box[1], b.box[1])
                    assert not overlap, (where, a, b)


def test_copy_too_long_for_a_narrow_frame_is_refused_with_its_slot(brief):
    scene = build_storyboard(load_template("product-hero"), brief).scenes[0]
    absurd = scene.model_copy(update={"copy_text": {"headline": "Supercalifragilistic" * 4}})
    overlay(absurd, brief.brand, Image.new("RGB", (640, 360)))  # the wide frame takes it
    with pytest.raises(LayoutError, match=r"headline: .* does not fit on screen"):
        overlay(absurd, brief.brand, Image.new("RGB", preview_size("9:16")))


def products(photos) -> dict[str, Image.Image]:
    """The photo's cut-out and two harder shapes: a long board and a tall bottle."""
    board = Image.new("RGBA", (800, 160), (0, 0, 0, 0))
    ImageDraw.Draw(board).rounded_rectangle((0, 0, 799, 159), radius=70, fill=(200, 40, 40, 255))
    bottle = Image.new("RGBA", (160, 640), (0, 0, 0, 0))
    ImageDraw.Draw(bottle).rectangle((30, 0, 129, 639), fill=(40, 160, 90, 255))
    return {"photo": Segmenter().cutout(photos["product"]), "board": board, "bottle": bottle}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_product_never_leaves_the_frame(brief, photos, shape):
    """Every product scene of every template, at its start, middle and end: where the frame
    differs from the same scene without its product is the product (on black, where its
    shadow does not show). It touches no edge of the frame, and in a 9:16 or 1:1 frame (laid
    out for it) the copy is set clear of it."""
    size = preview_size(shape)
    backdrop = Image.new("RGB", (1920, 1080))
    for name, cutout in products(photos).items():
        for template in all_templates():
            for scene in build_storyboard(template, brief).scenes:
                if scene.visual.source != "product":
                    continue
                _, blocks = overlay(scene, brief.brand, backdrop.resize(size))
                bare = animate(Still(backdrop), scene.motion, scene.duration, size)
                shown = animate(Still(backdrop, cutout), scene.motion, scene.duration, size)
                for t in (0.0, scene.duration / 2, scene.duration):
                    diff = np.abs(
                        np.asarray(shown(t), np.int16) - np.asarray(bare(t), np.int16)
                    ).max(axis=-1)
                    ys, xs = np.nonzero(diff > 24)
                    where = (name, template.id, scene.kind, t)
                    assert len(xs) > 0.01 * size[0] * size[1], where
                    assert xs.min() > 0 and xs.max() < size[0] - 1, where
                    assert ys.min() > 0 and ys.max() < size[1] - 1, where
                    if shape == "16:9":
                        continue  # the broadcast layout is as it always was
                    for block in blocks:
                        x0, y0, x1, y1 = block.box
                        under = (diff[y0:y1, x0:x1] > 24).mean()
                        assert under < 0.05, (where, block.slot, under)


@pytest.fixture(scope="module")
def shaped_previews(tmp_path_factory, brief, photos):
    """product-hero as a preview in each shape: {shape: Export}."""
    out = tmp_path_factory.mktemp("shapes")
    board = build_storyboard(load_template("product-hero"), brief)
    cutout = Segmenter().cutout(photos["product"])
    visuals = {
        s.index: Still(photos["backdrop"], cutout if s.visual.source == "product" else None)
        for s in board.scenes
        if s.visual.source != "brand"
    }
    files = {shape: out / f"{shape.replace(':', 'x')}.mp4" for shape in SHAPES}
    return {shape: render(board, visuals, shaped(PREVIEW, shape), files[shape]) for shape in SHAPES}


def probe(path: Path) -> dict:
    return json.loads(
        subprocess.run(
            ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", str(path)],
            capture_output=True,
            check=True,
        ).stdout
    )


def test_every_shape_has_the_same_timing_and_sound(shaped_previews):
    facts = {}
    for shape, export in shaped_previews.items():
        assert export.report.passed, export.report.text()
        info = probe(export.path)
        video = next(s for s in info["streams"] if s["codec_type"] == "video")
        audio = next(s for s in info["streams"] if s["codec_type"] == "audio")
        assert (video["width"], video["height"]) == preview_size(shape)
        facts[shape] = (
            info["format"]["duration"],
            video["duration"],
            video["nb_frames"],
            video["r_frame_rate"],
            audio["duration"],
        )
    assert len(set(facts.values())) == 1, facts  # to the microsecond and the frame
    sound = {shape: pcm(export.path) for shape, export in shaped_previews.items()}
    assert all(np.array_equal(sound["16:9"], heard) for heard in sound.values())
    assert np.abs(sound["16:9"]).max() > 0.05  # and there is a mix to hear


def test_a_vertical_render_from_the_command_line(tmp_path, brief, photos):
    """`spotforge render --aspect 9:16`: an upright spot, QC'd as its shape's preview (the 9:16
    final against the social-vertical spec is tests/app/test_delivery.py's)."""
    from tests.app.conftest import spotforge_env

    (tmp_path / "brief.json").write_text(brief.model_dump_json())
    photos["backdrop"].save(tmp_path / "street.jpg")
    photos["product"].save(tmp_path / "cup.jpg")
    out = tmp_path / "vertical.mp4"
    spotforge = Path(sys.executable).with_name("spotforge")
    args = ["--template", "product-hero", "--brief", str(tmp_path / "brief.json")]
    args += ["--background", str(tmp_path / "street.jpg"), "--product", str(tmp_path / "cup.jpg")]
    run = subprocess.run(
        [str(spotforge), "render", *args, "--tier", "preview", "--aspect", "9:16", "-o", str(out)],
        env=spotforge_env(tmp_path / "var"),
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(out.with_suffix(".qc.json").read_text())
    upright = shaped(PREVIEW, "9:16")
    assert report["passed"] and report["spec"] == upright.spec.name
    video = next(s for s in probe(out)["streams"] if s["codec_type"] == "video")
    assert (video["width"], video["height"]) == (upright.width, upright.height) == (360, 640)
    bad = subprocess.run(
        [str(spotforge), "render", *args, "--aspect", "4:3", "-o", str(out)],
        env=spotforge_env(tmp_path / "var"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "unknown aspect '4:3'; one of: 16:9, 9:16, 1:1" in bad.stderr
