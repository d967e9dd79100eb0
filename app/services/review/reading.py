"""What the checks measure with: OCR of the copy as drawn (RapidOCR) and how close it reads to
the copy, QR decoding, the WCAG contrast of a text block on the final pixels, and the perceptual
signature of a frame that distinct compares.
"""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image
from scipy import ndimage
from scipy.fft import dctn

from templates.overlay import LEADING, contrast_ratio, relative_luminance

if TYPE_CHECKING:
    from app.services.review.subjects import Panel, Subject


@cache
def _ocr():
    from rapidocr import RapidOCR  # imports OpenCV; only a review needs it

    return RapidOCR(params={"Global.log_level": "error"})


def read_line(image: Image.Image) -> str:
    """The text of a picture of one line (recognition only: where the line is, is known)."""
    result = _ocr()(np.asarray(image.convert("RGB")), use_det=False, use_cls=False)
    return " ".join(t.strip() for t in result.txts or ()).strip()


def read_block(picture: Image.Image, letters: np.ndarray, box, font_px: int) -> str:
    """The text of a block of copy as drawn: each of its lines (found from where its letters
    are) read on its own, joined by spaces."""
    left, top = box[:2]
    read = []
    for y0, y1 in _line_bands(letters, font_px):
        xs = np.nonzero(letters[y0:y1].any(axis=0))[0]
        pad = max(2, round(0.3 * font_px))
        crop = (left + xs.min() - pad, top + y0 - pad, left + xs.max() + 1 + pad, top + y1 + pad)
        read.append(read_line(picture.crop(crop)))
    return " ".join(read)


def _line_bands(letters: np.ndarray, font_px: int) -> list[tuple[int, int]]:
    """The rows of each line of letters: runs of inked rows (an accent or the dot of an i joined
    to its line), a run as tall as several lines split evenly."""
    inked = np.flatnonzero(letters.any(axis=1))
    if not inked.size:
        return []
    gap = max(2, round(0.12 * font_px))
    splits = np.flatnonzero(np.diff(inked) > gap)
    starts = [inked[0], *inked[splits + 1]]
    ends = [*inked[splits] + 1, inked[-1] + 1]
    line_h = LEADING * font_px
    bands = []
    for y0, y1 in zip(starts, ends, strict=True):
        n = max(1, round((y1 - y0) / line_h))
        edges = np.linspace(y0, y1, n + 1).round().astype(int)
        bands += list(itertools.pairwise(edges))
    return [(int(a), int(b)) for a, b in bands]


def read_qr(image: Image.Image) -> str:
    import cv2

    text, _, _ = cv2.QRCodeDetector().detectAndDecode(np.asarray(image.convert("RGB")))
    return text or ""


def _address(url: str) -> str:
    """A web address as a viewer types it: no scheme, no trailing slash, any case."""
    plain = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url.strip(), flags=re.IGNORECASE)
    return plain.rstrip("/").lower()


def _normalised(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).casefold()
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return re.sub(r"[^0-9a-z%]+", "", plain)


def _similarity(read: str, wanted: str) -> float:
    a, b = _normalised(read), _normalised(wanted)
    if not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b).ratio()


def _letters(alpha: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The block's letters: where the overlay is fully opaque (scrims never are)."""
    left, top, right, bottom = box
    return alpha[top:bottom, left:right] == 255


def measured_contrast(
    pixels: np.ndarray, alpha: np.ndarray, box: tuple[int, int, int, int]
) -> float | None:
    """WCAG contrast of a text block as drawn: its letters' luminance against the hardest tenth
    of what is around them (the brightest for light letters, the darkest for dark ones)."""
    letters = _letters(alpha, box)
    core = ndimage.binary_erosion(letters)
    if core.sum() < 20:
        core = letters
    around = ~ndimage.binary_dilation(letters, iterations=3)
    if core.sum() == 0 or around.sum() < 20:
        return None
    left, top, right, bottom = box
    lum = relative_luminance(pixels[top:bottom, left:right] / 255.0)
    text, ground = float(np.median(lum[core])), lum[around]
    worst = np.percentile(ground, 90 if text > np.median(ground) else 10)
    return contrast_ratio(text, float(worst))


def _signature(subject: Subject, panel: Panel) -> tuple[np.ndarray, np.ndarray] | None:
    """A perceptual hash (63 bits of the DCT of a 32x32 grey thumbnail) and the 8x8 colours of
    the frame with the product taken out (each row bridged across the product's box), so two
    frames compare by their backgrounds alone."""
    if subject.id not in panel.signatures:
        frame, expected = subject.frame, subject.expected
        signature = None
        if frame is not None:
            box = expected.box if expected is not None and frame.size == subject.size else None
            small = _without_box(frame, box, (64, 36))
            grey = Image.fromarray((small @ np.array([0.299, 0.587, 0.114])).astype(np.float32))
            dct = dctn(np.asarray(grey.resize((32, 32), Image.Resampling.BILINEAR)), norm="ortho")
            low = dct[:8, :8].ravel()[1:]  # without the mean brightness
            colours = Image.fromarray(small.round().astype(np.uint8)).resize((8, 8), Image.BOX)
            signature = (low > np.median(low), np.asarray(colours, dtype=np.float64))
        panel.signatures[subject.id] = signature
    return panel.signatures[subject.id]


def _without_box(frame: Image.Image, box, size: tuple[int, int]) -> np.ndarray:
    """The frame at `size`, each row of `box` (if any) bridged from its left to its right."""
    small = np.asarray(frame.resize(size, Image.Resampling.BOX), dtype=np.float64).copy()
    if box is None:
        return small
    sx, sy = size[0] / frame.width, size[1] / frame.height
    left = max(int(box[0] * sx) - 1, 0)
    right = min(int(np.ceil(box[2] * sx)), size[0] - 1)
    top, bottom = int(box[1] * sy), min(int(np.ceil(box[3] * sy)), size[1])
    k = np.linspace(0, 1, right - left + 1)[None, :, None]
    small[top:bottom, left : right + 1] = (
        small[top:bottom, left, None] * (1 - k) + small[top:bottom, right, None] * k
    )
    return small
