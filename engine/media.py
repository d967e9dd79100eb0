"""Writing results to files: stills as PNG, clips as H.264 MP4 through ffmpeg."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from PIL import Image

from engine.errors import EngineError


def save_clip(frames: list[Image.Image], fps: int, path: Path) -> Path:
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise EngineError("ffmpeg is needed to write video files; install ffmpeg")
    width, height = frames[0].size
    command = [
        ffmpeg,
        "-v",
        "error",
        "-y",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "rgb24",
        "-s",
        f"{width}x{height}",
        "-r",
        str(fps),
        "-i",
        "-",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        "-crf",
        "16",
        str(path),
    ]
    data = b"".join(frame.convert("RGB").tobytes() for frame in frames)
    result = subprocess.run(command, input=data, capture_output=True, check=False)
    if result.returncode != 0:
        raise EngineError(f"ffmpeg could not write {path}: {result.stderr.decode()[-400:]}")
    return path


def save_result(images: list[Image.Image], fps: int | None, out: Path) -> list[Path]:
    """A clip to `out` (.mp4); stills to `out`, or `out` with -1, -2... for several."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fps is not None:
        return [save_clip(images, fps, out.with_suffix(".mp4"))]
    if len(images) == 1:
        images[0].save(out)
        return [out]
    paths = [out.with_name(f"{out.stem}-{i}{out.suffix}") for i in range(1, len(images) + 1)]
    for image, path in zip(images, paths, strict=True):
        image.save(path)
    return paths
