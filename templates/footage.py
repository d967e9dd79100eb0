"""An owner's own video clip as a scene's moving picture.

ffmpeg decodes only what the scene shows (its first `seconds`; a shorter clip whole, which
`templates.motion` then loops with a crossfade), scaled to cover the frame and cropped around
the owner's focus point in the same pass, at `RATE` frames a second. Each frame is graded toward
the audience's light (`templates.grading`); a product scene's product is laid over every frame
with its edges and shadow, made once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from PIL import Image

from templates.audio import tool
from templates.composite import composite
from templates.grading import grade
from templates.layout import layout_for
from templates.motion import Clip

RATE = 30  # decoded frames a second: the broadcast's 29.97 blends between them


def clip(
    path: Path,
    size: tuple[int, int],
    seconds: float,
    *,
    focus: tuple[float, float] = (0.5, 0.5),
    light: str = "day",
    subject: Image.Image | None = None,
) -> Clip:
    """The clip at `path` as a scene of `seconds` at `size`: at most that long, graded, with
    `subject` (an RGBA cut-out) on it. Raises ValueError if ffmpeg cannot decode a frame."""
    frames = [grade(f, light) for f in _decoded(path, size, seconds, focus)]
    if subject is not None:
        layer = composite(frames[0], subject, size, layout_for(size).product).layer
        frames = [_over(f, layer) for f in frames]
    return Clip(frames, fps=RATE)


def first_frame(
    path: Path, size: tuple[int, int], *, focus=(0.5, 0.5), light: str = "day"
) -> Image.Image:
    """The clip's first picture, cropped and graded as the spot shows it (a key frame's)."""
    return grade(_decoded(path, size, 1 / RATE, focus)[0], light)


def _decoded(path: Path, size, seconds: float, focus) -> list[Image.Image]:
    w, h = size
    fx, fy = (min(max(float(v), 0.0), 1.0) for v in focus)
    crop = f"crop={w}:{h}:(iw-{w})*{fx:.4f}:(ih-{h})*{fy:.4f}"
    scale = f"scale={w}:{h}:force_original_aspect_ratio=increase:flags=lanczos"
    result = subprocess.run(
        [tool(), "-v", "error", "-i", str(path), "-t", f"{seconds + 1 / RATE:.3f}", "-an",
         "-vf", f"fps={RATE},{scale},{crop}", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        capture_output=True, timeout=300, check=False,
    )  # fmt: skip
    frame_bytes = w * h * 3
    count = len(result.stdout) // frame_bytes
    if result.returncode != 0 or count == 0:
        raise ValueError(f"cannot decode the clip: {result.stderr.decode()[-300:]}")
    data = result.stdout
    return [
        Image.frombytes("RGB", (w, h), data[i * frame_bytes : (i + 1) * frame_bytes])
        for i in range(count)
    ]


def _over(frame: Image.Image, layer: Image.Image) -> Image.Image:
    out = frame.convert("RGBA")
    out.alpha_composite(layer)
    return out.convert("RGB")
