"""What a file really is, from its bytes (never its name), and its dimensions.

Accepted kinds are the ones a spot is made of: still images, video clips, audio beds and
brand fonts. Anything else, or a file whose bytes do not decode, is refused.

Every refusal is an `InvalidAsset` whose message is one plain sentence a shop owner can act
on: never a server path, a decoder's own text or ffprobe's output. Those stay on the chained
exception (`raise ... from exc`), for the logs.
"""

from __future__ import annotations

import json
import math
import mmap
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import filetype
from PIL import Image, ImageFont

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
# Kinds only the app makes, never accepted from an upload: a delivery package.
MADE: dict[str, tuple[str, str]] = {"zip": ("application/zip", "zip")}
MAX_IMAGE_PIXELS = 80_000_000  # well above 8K; refuses decompression bombs
# Pillow's own format names for each image type we accept (a camera JPEG may open as MPO).
IMAGE_FORMATS = {"image/png": {"PNG"}, "image/jpeg": {"JPEG", "MPO"}, "image/webp": {"WEBP"}}

UNSUPPORTED = (
    "{what}; upload a PNG, JPEG or WebP image, an MP4, MOV or WebM video, "
    "WAV, MP3 or M4A audio, or a TTF or OTF font."
)
IMAGE_DAMAGED = "This image is damaged or incomplete; export it again as PNG or JPEG."
IMAGE_TOO_LARGE = (
    "This image is too large{size}; the limit is {limit} megapixels."  # size: ": W x H pixels"
)
VIDEO_UNREADABLE = "This video cannot be read; export it again as MP4."
VIDEO_NO_PICTURE = "This video has no picture; export it again as MP4."
AUDIO_UNREADABLE = "This audio file cannot be read; export it again as WAV or MP3."
AUDIO_NO_SOUND = "This audio file has no sound; export it again as WAV or MP3."
FONT_DAMAGED = "This font file is damaged; export it again as TTF or OTF."
NO_FFPROBE = "This server cannot check video or audio files yet; upload images or fonts."


class ProbeFailed(RuntimeError):
    """ffprobe refused a file; chained under the InvalidAsset so its stderr reaches the logs."""


@dataclass(frozen=True)
class MediaInfo:
    media_type: str
    extension: str
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None


def sniff_made(path: Path) -> MediaInfo:
    """`sniff` for a file the app made itself: the MADE kinds are accepted too."""
    kind = filetype.guess(str(path))
    if kind is not None and kind.extension in MADE and zipfile.is_zipfile(path):
        return MediaInfo(*MADE[kind.extension])
    return sniff(path)


def sniff(path: Path) -> MediaInfo:
    """What the file at `path` is; InvalidAsset if it is not an accepted kind or does not decode.

    Reads only: the caller owns the file (see `payload_end` for what of it is worth keeping).
    """
    kind = filetype.guess(str(path))
    if kind is not None and kind.extension == "ttf" and _head(path, 4) == b"OTTO":
        kind = filetype.get_type(ext="otf")
    if kind is None or kind.extension not in ACCEPTED:
        what = f"This file is {kind.mime}, which is not accepted" if kind else None
        raise InvalidAsset(UNSUPPORTED.format(what=what or "This file type is not recognised"))
    media_type, extension = ACCEPTED[kind.extension]
    family = media_type.split("/")[0]
    if family == "image":
        return _image(path, media_type, extension)
    if family in ("video", "audio"):
        return _audiovisual(path, media_type, extension)
    return _font(path, media_type, extension)


def payload_end(path: Path, info: MediaInfo) -> int:
    """How many leading bytes of the file are the media itself.

    An image ends at its format's end marker (PNG's IEND chunk, JPEG's EOI, WebP's RIFF size);
    whatever follows is not part of the picture. That is where a polyglot carries its second
    meaning (HTML or script, a ZIP archive): the store keeps only the bytes before it, so what
    is stored and served is exactly the image that was decoded. An image without its end
    marker is incomplete, and refused. A multi-picture JPEG (MPO, from some cameras) keeps
    its first picture, the one decoded. Payloads inside an image (a PNG text chunk, a JPEG
    comment) stay: they are inert in a file kept and served as its sniffed image type. Video,
    audio and fonts are kept whole; their containers allow trailing data.
    """
    size = path.stat().st_size
    if not info.media_type.startswith("image/") or size == 0:
        return size
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if info.media_type == "image/png":
            end = _png_end(data)
        elif info.media_type == "image/jpeg":
            end = _jpeg_end(data)
        else:
            end = _webp_end(data)
    if end is None or end > size:
        raise InvalidAsset(IMAGE_DAMAGED)
    return end


def _head(path: Path, n: int) -> bytes:
    with path.open("rb") as file:
        return file.read(n)


def _image(path: Path, media_type: str, extension: str) -> MediaInfo:
    try:
        # Only the decoder its first bytes name: no other Pillow plugin gets to look at it.
        with Image.open(path, formats=sorted(IMAGE_FORMATS[media_type])) as image:
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise InvalidAsset(_too_large(f": {width} x {height} pixels"))
            if image.format not in IMAGE_FORMATS[media_type]:
                raise InvalidAsset(IMAGE_DAMAGED)  # its first bytes and its decoder disagree
            image.load()  # decodes every pixel: a truncated or corrupt file fails here
    except InvalidAsset:
        raise
    except Image.DecompressionBombError as exc:  # so large that Pillow refuses to open it
        raise InvalidAsset(_too_large("")) from exc
    except Exception as exc:  # hostile bytes may fail any way inside a decoder
        raise InvalidAsset(IMAGE_DAMAGED) from exc
    if width < 1 or height < 1:
        raise InvalidAsset(IMAGE_DAMAGED)
    return MediaInfo(media_type, extension, width, height)


def _too_large(size: str) -> str:
    return IMAGE_TOO_LARGE.format(size=size, limit=MAX_IMAGE_PIXELS // 1_000_000)


def _png_end(data: mmap.mmap) -> int | None:
    """The end of the IEND chunk, walking the chunks from the signature."""
    pos, n = 8, len(data)
    while pos + 12 <= n:
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        pos += 12 + length
        if kind == b"IEND":
            return pos
    return None


def _jpeg_end(data: mmap.mmap) -> int | None:
    """The end of the EOI marker, walking the segments and the entropy-coded scans."""
    pos, n = 2, len(data)
    while True:
        pos = data.find(b"\xff", pos)  # libjpeg, too, skips stray bytes between segments
        if pos < 0:
            return None
        while pos < n and data[pos] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos >= n:
            return None
        marker = data[pos]
        pos += 1
        if marker == 0xD9:  # EOI
            return pos
        if marker == 0x00 or marker == 0x01 or 0xD0 <= marker <= 0xD7:
            continue  # a stuffed byte, TEM or a restart marker: no length follows
        if pos + 2 > n:
            return None
        pos += int.from_bytes(data[pos : pos + 2], "big")
        if marker == 0xDA:  # SOS: scan data up to the next marker that is not RSTn or 0xFF00
            while True:
                pos = data.find(b"\xff", pos)
                if pos < 0 or pos + 1 >= n:
                    return None
                following = data[pos + 1]
                if following == 0x00 or 0xD0 <= following <= 0xD7:
                    pos += 2
                    continue
                break


def _webp_end(data: mmap.mmap) -> int | None:
    """RIFF's own length: the 8-byte header plus the size it declares."""
    if len(data) < 12 or data[:4] != b"RIFF":
        return None
    return 8 + int.from_bytes(data[4:8], "little")


def _audiovisual(path: Path, media_type: str, extension: str) -> MediaInfo:
    is_video = media_type.startswith("video/")
    unreadable = VIDEO_UNREADABLE if is_video else AUDIO_UNREADABLE
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        raise InvalidAsset(NO_FFPROBE)
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
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise InvalidAsset(unreadable) from exc
    if result.returncode != 0:
        raise InvalidAsset(unreadable) from ProbeFailed(result.stderr.strip()[:2000])
    try:
        probe = json.loads(result.stdout)
        streams = [s for s in probe.get("streams", []) if isinstance(s, dict)]
        duration = _duration(probe.get("format", {}).get("duration"))
    except (ValueError, TypeError, AttributeError) as exc:
        raise InvalidAsset(unreadable) from exc
    if not is_video:
        if not any(s.get("codec_type") == "audio" for s in streams):
            raise InvalidAsset(AUDIO_NO_SOUND)
        return MediaInfo(media_type, extension, duration_s=duration)
    video = next((s for s in streams if s.get("codec_type") == "video"), None)
    if video is None:
        raise InvalidAsset(VIDEO_NO_PICTURE)
    width, height = video.get("width"), video.get("height")
    if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
        raise InvalidAsset(VIDEO_NO_PICTURE)
    return MediaInfo(media_type, extension, width, height, duration)


def _duration(value: object) -> float | None:
    """ffprobe's duration in seconds, or None where it gives none (or nonsense)."""
    if value is None:
        return None
    seconds = float(value)  # a JSON string such as "1.000000"
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _font(path: Path, media_type: str, extension: str) -> MediaInfo:
    try:
        ImageFont.truetype(str(path), 24).getbbox("Spotforge")
    except Exception as exc:  # as for images: any failure means a damaged font
        raise InvalidAsset(FONT_DAMAGED) from exc
    return MediaInfo(media_type, extension)
