"""Subject cutout for product photos.

An image that already has a meaningful alpha channel keeps it. Otherwise a salient-object
model finds the subject: by default the bundled U²-Net-p (ONNX, runs on CPU in ~0.1 s); any
model of the same family with one image input and a saliency map as first output (u2net,
isnet-general-use) can be given instead for higher quality. The raw map is then refined:
thresholded, holes filled, stray specks dropped, edges feathered.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter
from scipy import ndimage

from engine.errors import ModelUnavailable

BUNDLED_MODEL = Path(__file__).parent / "weights" / "u2netp.onnx"
CACHED_MASKS = 32
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


@dataclass(frozen=True)
class Refinement:
    threshold: float = 0.5  # saliency above this is subject
    fill_holes: bool = True
    keep_largest: bool = True  # drop specks not connected to the main subject
    min_part: float = 0.02  # ...but keep other parts at least this share of the largest
    feather_px: float = 1.5  # Gaussian blur radius of the edge


class Segmenter:
    def __init__(self, model_path: Path | None = None, refinement: Refinement = Refinement()):
        import onnxruntime as ort

        path = Path(model_path or BUNDLED_MODEL)
        if not path.is_file():
            raise ModelUnavailable(f"segmentation model not found at {path}")
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        model_input = self._session.get_inputs()[0]
        self._input_name = model_input.name
        side = model_input.shape[-1]
        self._side = side if isinstance(side, int) else 320
        self.refinement = refinement
        self._path = path
        self._masks: OrderedDict[bytes, Image.Image] = OrderedDict()
        self._lock = threading.Lock()

    @cached_property
    def identity(self) -> str:
        """What this segmenter computes: its model file's hash and its refinement, so a stored
        cut-out is found again only by a segmenter that would make the same one."""
        weights = hashlib.sha256(self._path.read_bytes()).hexdigest()[:16]
        return f"{self._path.stem}:{weights}:{self.refinement}"

    def mask(self, image: Image.Image) -> Image.Image:
        """The subject as an 8-bit mask at the image's size (255 = subject).

        Masks are remembered by the image's pixels: every variant made from one product photo
        pays for its cut-out once."""
        alpha = _meaningful_alpha(image)
        if alpha is not None:
            return alpha
        key = hashlib.sha256(f"{image.mode}{image.size}".encode() + image.tobytes()).digest()
        with self._lock:
            if key in self._masks:
                self._masks.move_to_end(key)
                return self._masks[key].copy()
        mask = _refine(self._saliency(image.convert("RGB")), image.size, self.refinement)
        with self._lock:
            self._masks[key] = mask
            while len(self._masks) > CACHED_MASKS:
                self._masks.popitem(last=False)
        return mask.copy()

    def cutout(self, image: Image.Image) -> Image.Image:
        """The image as RGBA with everything but the subject transparent."""
        rgba = image.convert("RGBA")
        rgba.putalpha(self.mask(image))
        return rgba

    def _saliency(self, image: Image.Image) -> np.ndarray:
        small = image.resize((self._side, self._side), Image.Resampling.LANCZOS)
        x = np.asarray(small, dtype=np.float32) / 255.0
        x = x / max(float(x.max()), 1e-6)
        x = ((x - MEAN) / STD).transpose(2, 0, 1)[None]
        out = self._session.run(None, {self._input_name: x.astype(np.float32)})[0][0, 0]
        lo, hi = float(out.min()), float(out.max())
        return (out - lo) / max(hi - lo, 1e-6)


def _meaningful_alpha(image: Image.Image) -> Image.Image | None:
    if image.mode not in ("RGBA", "LA", "PA") and "transparency" not in image.info:
        return None
    alpha = image.convert("RGBA").getchannel("A")
    low, _ = alpha.getextrema()
    return alpha if low < 250 else None  # an all-opaque alpha says nothing about the subject


def _refine(saliency: np.ndarray, size: tuple[int, int], r: Refinement) -> Image.Image:
    full = (
        np.asarray(
            Image.fromarray((saliency * 255).astype(np.uint8)).resize(
                size, Image.Resampling.BILINEAR
            ),
            dtype=np.float32,
        )
        / 255.0
    )
    subject = full > r.threshold
    if r.keep_largest and subject.any():
        labels, count = ndimage.label(subject)
        if count > 1:
            sizes = ndimage.sum(subject, labels, range(1, count + 1))
            keep = np.flatnonzero(sizes >= r.min_part * sizes.max()) + 1
            subject = np.isin(labels, keep)
    if r.fill_holes:
        subject = ndimage.binary_fill_holes(subject)
    mask = Image.fromarray((subject * 255).astype(np.uint8))
    if r.feather_px > 0:
        mask = mask.filter(ImageFilter.GaussianBlur(r.feather_px))
    return mask
