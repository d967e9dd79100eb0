"""What a file really is, from its bytes (never its name), and its dimensions.

Accepted kinds are the ones a spot is made of: still images, video clips, audio beds and
brand fonts. Anything else, or a file whose bytes do not decode, is refused.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import filetype
from PIL import Image, ImageFont, UnidentifiedImageError

from storage.errors import InvalidAsset

# filetype's extension -> (media type we record, file extension we store under)
ACCEPTED: dict[str, tuple[str, str]] = {
    "png": ("image/png", "png"),
    "jpg": ("image/jpeg", "jpg"),
    "webp": ("image/webp", "webp"),
    "mp4": ("video/mp4", "mp4"),
    "m4v": ("video/mp4", "mp4"),
    "mov": ("video/quicktime", "mov"),
    "webm": ("video/webm", "webm"),
    "wav": ("audio/wav", "wav"),
    "mp3": ("audio/mpeg", "mp3"),
    "m4a": ("audio/mp4", "m4a"),
    "ttf": ("font/ttf", "ttf"),
    "otf": ("font/otf", "otf"),
}
MAX_IMAGE_PIXELS = 80_000_000  # well above 8K; refuses decompression bombs


@dataclass(frozen=True)
class MediaInfo:
    media_type: str
    extension: str
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None


def sniff(path: Path) -> MediaInfo:
    kind = filetype.guess(str(path))
    if kind is not None and kind.extension == "ttf" and path.read_bytes()[:4] == b"OTTO":
        kind = filetype.get_type(ext="otf")
    if kind is None or kind.extension not in ACCEPTED:
        found = kind.mime if kind else "unrecognised data"
        raise InvalidAsset(
            f"unsupported file type ({found}); accepted: images (PNG, JPEG, WebP), "
            "video (MP4, MOV, WebM), audio (WAV, MP3, M4A) and fonts (TTF, OTF)"
        )
    media_type, extension = ACCEPTED[kind.extension]
    family = media_type.split("/")[0]
    if family == "image":
        return _image(path, media_type, extension)
    if family in ("video", "audio"):
        return _audiovisual(path, media_type, extension)
    return _font(path, media_type, extension)


def _image(path: Path, media_type: str, extension: str) -> MediaInfo:
    try:
        with Image.open(path) as image:
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise InvalidAsset(f"image is too large: {width}x{height} pixels")
            image.load()  # decodes every pixel: a truncated or corrupt file fails here
    except Image.DecompressionBombError as exc:
        raise InvalidAsset(f"image is too large: {exc}") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise InvalidAsset(f"image file is corrupt or truncated: {exc}") from exc
    return MediaInfo(media_type, extension, width, height)


def _audiovisual(path: Path, media_type: str, extension: str) -> MediaInfo:
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        raise InvalidAsset("ffprobe is needed to accept video and audio files; install ffmpeg")
    try:
        result = subprocess.run(
            [
                ffprobe,
                "-v",
                "error",
                "-print_format",
                "json",
                "-show_format",
                "-show_streams",
                str(path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired as exc:
        raise InvalidAsset(f"{media_type} file could not be read in time") from exc
    if result.returncode != 0:
        raise InvalidAsset(f"{media_type} file is corrupt: {result.stderr.strip()[:300]}")
    probe = json.loads(result.stdout)
    streams = probe.get("streams", [])
    video = next((s for s in streams if s.get("codec_type") == "video"), None)
    if media_type.startswith("video/") and (video is None or "width" not in video):
        raise InvalidAsset("video file has no readable video stream")
    if media_type.startswith("audio/") and not any(s.get("codec_type") == "audio" for s in streams):
        raise InvalidAsset("audio file has no audio stream")
    duration = probe.get("format", {}).get("duration")
    return MediaInfo(
        media_type,
        extension,
        width=video["width"] if media_type.startswith("video/") else None,
        height=video["height"] if media_type.startswith("video/") else None,
        duration_s=float(duration) if duration is not None else None,
    )


def _font(path: Path, media_type: str, extension: str) -> MediaInfo:
    try:
        ImageFont.truetype(str(path), 24).getbbox("Spotforge")
    except OSError as exc:
        raise InvalidAsset(f"font file is corrupt: {exc}") from exc
    return MediaInfo(media_type, extension)
