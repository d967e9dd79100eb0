"""Moving pictures from stills and clips: zoom, pan and parallax (Ken Burns), and generated
clips retimed to the broadcast frame rate.

Each returns `frame(t) -> PIL image` at the output size. Every scene moves a little, and
`grain` gives each frame of a spot a light grain of its own, since on a flat colour no motion
changes a pixel: no two consecutive frames are identical (a broadcast QC rule). A product is
placed by `templates.composite`, so a spot shows it as the stills do: its own pixels, a
feathered outline and a contact shadow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from PIL import Image, ImageOps

from templates.composite import composite
from templates.layout import PRODUCT_DRIFT, PRODUCT_GROWTH, layout_for
from templates.spec import Motion

Frame = Callable[[float], Image.Image]
MIN_DRIFT = 0.02  # even a "still" zooms 2 % over its scene
SWAY = 2 * PRODUCT_DRIFT  # a parallax product's drift across its scene (share of the width)


@dataclass(frozen=True)
class Still:
    """A picture for a scene; `subject` (RGBA cut-out) enables parallax over `image`."""

    image: Image.Image
    subject: Image.Image | None = None
    # Where the picture is cropped to the frame around, as shares of its width and height
    # (an owner's photo: the shop's door, not the sky above it).
    focus: tuple[float, float] = (0.5, 0.5)


@dataclass(frozen=True)
class Clip:
    """Moving pictures for a scene. A generated clip (`fps` None) is retimed to fill its scene;
    an owner's clip (`fps` its frame rate, see `templates.footage`) plays at its own speed,
    trimmed to the scene or, when shorter, looped with a crossfade (never a jump)."""

    frames: list[Image.Image]
    fps: float | None = None
    focus: tuple[float, float] = (0.5, 0.5)


def ease(x: float) -> float:
    """Half smoothstep, half linear: gentle at the ends, yet never at rest, so the picture
    keeps moving to the scene's last frame (a frozen tail would repeat frames)."""
    x = min(max(x, 0.0), 1.0)
    return 0.5 * x * x * (3 - 2 * x) + 0.5 * x


def animate(visual: Still | Clip, motion: Motion, duration: float, size: tuple[int, int]) -> Frame:
    if isinstance(visual, Clip):
        return _retime(visual, size, duration) if visual.fps is None else _play(visual, size)
    z_from, z_to = motion.zoom_from, motion.zoom_to
    if motion.type == "still" or (abs(z_to - z_from) < MIN_DRIFT and motion.type != "pan"):
        z_to = z_from + MIN_DRIFT
    zoom = max(z_from, z_to, 1.0)
    base = _cover(visual.image, size, zoom, visual.focus)
    subject = visual.subject
    placement = layout_for(size).product  # where this shape shows its product
    if subject is not None and motion.type != "parallax":
        # Without parallax the product is part of the picture and moves with it.
        base = composite(base, subject, base.size, placement).image
    if motion.type == "pan":
        return _pan(base, size, max(z_from, 1.06), motion.pan, duration)
    background = _zoom(base, size, z_from, z_to, duration)
    if motion.type != "parallax" or subject is None:
        return background
    # The product, its edges and shadow made once over the scene's first frame, then moved.
    layer = composite(background(0.0), subject, size, placement).layer
    bounds = layer.getbbox()
    assert bounds is not None  # composite refuses an empty cut-out
    layer = layer.crop(bounds)
    anchor_x, anchor_y = size[0] / 2, placement.base_y * size[1]

    def frame(t: float) -> Image.Image:
        # The product grows and drifts faster than the scene behind it: depth from a photo.
        k = ease(t / duration)
        scale = 1 + PRODUCT_GROWTH * k
        moved = layer.resize(
            (round(layer.width * scale), round(layer.height * scale)), Image.Resampling.BILINEAR
        )
        x = anchor_x + (0.5 - k) * SWAY * size[0] - (anchor_x - bounds[0]) * scale
        y = anchor_y - (anchor_y - bounds[1]) * scale
        out = background(t)
        out.paste(moved, (round(x), round(y)), moved)  # clipped at the frame's edges
        return out

    return frame


GRAIN_SIGMA = 1.5  # in 8-bit levels: not seen from a sofa; survives x264 tuned for grain
GRAIN_PLANES = 8


def grain(pixels: np.ndarray, n: int) -> np.ndarray:
    """Frame `n` of a spot with a light, moving monochrome grain.

    A still on a flat colour or a smooth gradient moves by less than a level from one frame to
    the next, so its frames would repeat exactly (a broadcast QC failure) however it is zoomed;
    grain that changes every frame keeps them apart. It is the same for the same frame number,
    so the same spot renders the same file."""
    h, w = pixels.shape[:2]
    plane = _grain_planes(h, w)[n % GRAIN_PLANES]
    flip = (n // GRAIN_PLANES) % 4  # 32 frames before a pattern comes back
    if flip & 1:
        plane = plane[:, ::-1]
    if flip & 2:
        plane = plane[::-1]
    out = pixels.astype(np.int16)
    out += plane[..., None]
    return np.clip(out, 0, 255, out=out).astype(np.uint8)


@cache
def _grain_planes(h: int, w: int) -> np.ndarray:
    rng = np.random.default_rng(20240917)
    planes = rng.normal(0.0, GRAIN_SIGMA, (GRAIN_PLANES, h, w))
    return np.rint(planes).astype(np.int8)


def _cover(
    image: Image.Image, size: tuple[int, int], zoom: float, focus: tuple[float, float]
) -> Image.Image:
    """The image cropped to the output aspect around `focus`, at enough resolution for the
    deepest zoom (scaled once from the picture's full resolution)."""
    w, h = size
    target = (round(w * zoom), round(h * zoom))
    return ImageOps.fit(image.convert("RGB"), target, Image.Resampling.LANCZOS, centering=focus)


def _zoom(base: Image.Image, size, z_from: float, z_to: float, duration: float) -> Frame:
    bw, bh = base.size

    def frame(t: float) -> Image.Image:
        z = z_from + (z_to - z_from) * ease(t / duration)
        cw, ch = bw / z, bh / z  # the base is the output at the deepest zoom
        x0, y0 = (bw - cw) / 2, (bh - ch) / 2
        return base.resize(size, Image.Resampling.BILINEAR, box=(x0, y0, x0 + cw, y0 + ch))

    return frame


def _pan(base: Image.Image, size, zoom: float, direction: str, duration: float) -> Frame:
    bw, bh = base.size
    cw, ch = bw / zoom, bh / zoom
    slack_x, slack_y = bw - cw, bh - ch

    def frame(t: float) -> Image.Image:
        k = ease(t / duration)
        k = {"right": k, "left": 1 - k, "down": k, "up": 1 - k}[direction]
        horizontal = direction in ("left", "right")
        x0 = slack_x * k if horizontal else slack_x / 2
        y0 = slack_y / 2 if horizontal else slack_y * k
        return base.resize(size, Image.Resampling.BILINEAR, box=(x0, y0, x0 + cw, y0 + ch))

    return frame


def _retime(clip: Clip, size, duration: float) -> Frame:
    """A clip stretched or squeezed to fill its scene, shown at any frame rate: neighbouring
    frames are blended, so a slower clip gains in-between frames instead of repeated ones."""
    frames = _fitted(clip, size)
    rate = (len(frames) - 1) / duration

    def frame(t: float) -> Image.Image:
        pos = min(max(t * rate, 0.0), len(frames) - 1.0)
        i = int(pos)
        j = min(i + 1, len(frames) - 1)
        return Image.blend(frames[i], frames[j], pos - i) if j != i else frames[i]

    return frame


LOOP_CROSSFADE_S = 0.5  # an owner's clip shorter than its scene fades from its end to its start


def _play(clip: Clip, size) -> Frame:
    """An owner's clip at its own speed: frame t is the clip at t seconds (neighbours blended
    between its frames). A clip shorter than its scene loops: each pass after the first begins
    with its last `LOOP_CROSSFADE_S` (a third of it at most) fading into its start, so the
    picture flows from the end of one pass into the next without a jump."""
    frames = _fitted(clip, size)
    fps = float(clip.fps or 1.0)
    length = len(frames) / fps
    fade = min(LOOP_CROSSFADE_S, length / 3)
    period = length - fade  # one pass, after the first, as the loop shows it

    def at(u: float) -> Image.Image:
        pos = min(max(u * fps, 0.0), len(frames) - 1.0)
        i = int(pos)
        j = min(i + 1, len(frames) - 1)
        return Image.blend(frames[i], frames[j], pos - i) if j != i else frames[i].copy()

    def frame(t: float) -> Image.Image:
        if t < period or len(frames) < 3:
            return at(t)
        u = t % period
        if u >= fade:
            return at(u)
        return Image.blend(at(u + period), at(u), u / fade)  # the end fading into the start

    return frame


def _fitted(clip: Clip, size) -> list[Image.Image]:
    return [
        ImageOps.fit(f.convert("RGB"), size, Image.Resampling.LANCZOS, centering=clip.focus)
        if f.size != size
        else f.convert("RGB")
        for f in clip.frames
    ]
