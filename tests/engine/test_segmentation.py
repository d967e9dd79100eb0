"""Subject cutout on real photographs that scikit-image ships."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw
from skimage import data

from engine.segmentation import Refinement, Segmenter, _refine


@pytest.fixture(scope="module")
def segmenter():
    return Segmenter()


def coverage(mask: Image.Image, box: tuple[int, int, int, int]) -> float:
    x0, y0, x1, y1 = box
    return float((np.asarray(mask)[y0:y1, x0:x1] > 127).mean())


@pytest.mark.parametrize(
    ("name", "subject", "background"),
    [
        # (image, a box inside the subject, a box of plain background), in pixels
        ("coffee", (250, 120, 350, 220), (0, 0, 60, 400)),  # the cup; the table's left edge
        ("astronaut", (170, 160, 250, 400), (420, 0, 512, 60)),  # her head and torso; the wall
        ("rocket", (315, 150, 328, 350), (40, 0, 140, 120)),  # the rocket; the dusk sky
    ],
)
def test_mask_covers_the_subject(segmenter, name, subject, background):
    photo = Image.fromarray(getattr(data, name)()).convert("RGB")
    mask = segmenter.mask(photo)
    assert mask.size == photo.size and mask.mode == "L"
    assert coverage(mask, subject) > 0.95
    assert coverage(mask, background) < 0.05


def test_existing_alpha_is_kept(segmenter):
    rgba = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    ImageDraw.Draw(rgba).ellipse((16, 16, 48, 48), fill=(200, 0, 0, 255))
    assert segmenter.mask(rgba).tobytes() == rgba.getchannel("A").tobytes()
    cut = segmenter.cutout(rgba)
    assert cut.getpixel((32, 32)) == (200, 0, 0, 255) and cut.getpixel((2, 2))[3] == 0


def test_opaque_alpha_is_not_taken_as_a_mask(segmenter):
    photo = Image.fromarray(data.coffee()).convert("RGBA")  # alpha 255 everywhere
    assert coverage(segmenter.mask(photo), (0, 0, 60, 400)) < 0.05


def test_refinement_fills_holes_and_drops_specks():
    saliency = np.zeros((100, 100), dtype=np.float32)
    saliency[20:80, 20:80] = 1.0
    saliency[40:60, 40:60] = 0.0  # a hole, e.g. a shoe's opening
    saliency[2:4, 2:4] = 1.0  # a speck of sensor noise
    mask = np.asarray(_refine(saliency, (100, 100), Refinement(feather_px=0)))
    assert mask[50, 50] == 255 and mask[3, 3] == 0 and mask[10, 10] == 0
    raw = np.asarray(
        _refine(
            saliency, (100, 100), Refinement(feather_px=0, fill_holes=False, keep_largest=False)
        )
    )
    assert raw[50, 50] == 0 and raw[3, 3] == 255


def test_a_photo_is_cut_out_once(segmenter, monkeypatch):
    photo = Image.fromarray(data.chelsea()).convert("RGB")
    first = segmenter.mask(photo)
    calls = []
    monkeypatch.setattr(segmenter, "_saliency", lambda image: calls.append(image))
    again = segmenter.mask(photo.copy())  # equal pixels, another object
    assert calls == [] and again.tobytes() == first.tobytes()
    again.paste(0, (0, 0, 10, 10))  # the caller's copy: the remembered mask is unchanged
    assert segmenter.mask(photo).tobytes() == first.tobytes()
