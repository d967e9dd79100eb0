"""Uploads fuzzed at the asset store: damaged images, decompression bombs, polyglots, wrong
types and oversized files, given as bytes, as streams and as files.

Whatever comes in, exactly one of two things happens:

- it is accepted as one of the accepted kinds, with a sane MediaInfo; the one stored file
  hashes to its name and is a prefix of the upload (trailing bytes may be dropped, none added),
  and an image re-opens as the same picture;
- it is refused with InvalidAsset or AssetTooLarge, whose message is one short plain sentence
  (no path, no '.part', no traceback, no exception class name), and no asset file appears.

Either way `inspect` says the same as `put`, and the store's .tmp folder is empty afterwards.
"""

from __future__ import annotations

import builtins
import contextlib
import gzip
import hashlib
import io
import math
import random
import re
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from PIL import Image

from storage import AssetStore, AssetTooLarge, InvalidAsset
from storage.media import ACCEPTED, IMAGE_DAMAGED, IMAGE_FORMATS, MAX_IMAGE_PIXELS
from tests.conftest import DEJAVU
from tests.samples import wav_bytes

pytestmark = pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")

MAX_BYTES = 300_000
HOW = st.sampled_from(["bytes", "stream", "trickle", "path"])
EXCEPTION_NAMES = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
} | {
    "UnidentifiedImageError",
    "DecompressionBombError",
    "ProbeFailed",
    "InvalidAsset",
    "AssetTooLarge",
    "StorageError",
    "CalledProcessError",
    "TimeoutExpired",
}
PATHLIKE = re.compile(r"(?:/[\w.\-]+){2,}|[A-Za-z]:\\")
TOO_LARGE = "This image is too large"
UNRECOGNISED = "This file type is not recognised; "
EMPTY = "This file is empty; choose the file again."


def fuzz(n: int):
    return settings(
        max_examples=n,
        deadline=None,
        database=None,  # nothing written into the working tree; each run draws afresh
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- the property every upload must satisfy ---------------------------------------------------


@dataclass(frozen=True)
class Accepted:
    info: object
    kept: bytes


@dataclass(frozen=True)
class Refused:
    error: InvalidAsset | AssetTooLarge

    @property
    def message(self) -> str:
        return str(self.error)


class Trickle(io.RawIOBase):
    """A stream that hands over a few bytes at a time, as a slow client does."""

    def __init__(self, data: bytes, step: int = 7919):
        self._data, self._pos, self._step = data, 0, step

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        chunk = self._data[self._pos : self._pos + min(n if n >= 0 else self._step, self._step)]
        self._pos += len(chunk)
        return chunk


def upload(data: bytes, how: str = "bytes", max_bytes: int = MAX_BYTES) -> Accepted | Refused:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "assets"
        store = AssetStore(root, max_bytes)

        def source():
            if how == "stream":
                return io.BytesIO(data)
            if how == "trickle":
                return Trickle(data)
            if how == "path":
                path = Path(scratch) / "upload.png"  # the name never matters
                path.write_bytes(data)
                return path
            return data

        try:
            inspected = store.inspect(source())
        except (InvalidAsset, AssetTooLarge) as exc:
            inspected = exc
        assert _leftovers(root) == ([], [])  # inspect stores nothing, leaves nothing
        try:
            blob = store.put(source())
        except (InvalidAsset, AssetTooLarge) as exc:
            _assert_plain(exc, scratch, max_bytes)
            _note(f"refused: {exc}")
            assert type(inspected) is type(exc) and str(inspected) == str(exc)
            assert _leftovers(root) == ([], [])
            return Refused(exc)
        stored = root / blob.path
        assert _leftovers(root) == ([stored], [])
        assert inspected == blob.info
        kept = stored.read_bytes()
        assert hashlib.sha256(kept).hexdigest() == blob.sha256 == stored.name.split(".")[0]
        assert blob.size == len(kept) and stored.suffix == f".{blob.info.extension}"
        assert data.startswith(kept)  # trailing bytes may be dropped; nothing is added
        _assert_sane(blob.info, kept)
        _note(f"accepted: {blob.info.media_type}" + (" (trimmed)" if len(kept) < len(data) else ""))
        return Accepted(blob.info, kept)


def _note(outcome: str) -> None:
    """For --hypothesis-show-statistics: how often each outcome came up."""
    with contextlib.suppress(InvalidArgument):  # raised in a plain (non-Hypothesis) test
        event(re.split("[:;]", outcome)[0])


def _leftovers(root: Path) -> tuple[list[Path], list[Path]]:
    visible = [
        p for p in root.rglob("*") if p.is_file() and ".tmp" not in p.relative_to(root).parts
    ]
    return visible, list((root / ".tmp").iterdir())


def _assert_plain(exc: Exception, scratch: str, max_bytes: int) -> None:
    message = str(exc)
    assert 0 < len(message) < 200, message
    assert "\n" not in message and "Traceback" not in message, message
    assert scratch not in message and ".part" not in message and ".tmp" not in message, message
    assert not PATHLIKE.search(message), message
    assert not any(name in message for name in EXCEPTION_NAMES), message
    if isinstance(exc, AssetTooLarge):
        assert message == str(AssetTooLarge(max_bytes))
    else:  # one sentence, written for a person
        assert message[0].isupper() and message.endswith(".") and ". " not in message, message


def _assert_sane(info, kept: bytes) -> None:
    assert (info.media_type, info.extension) in ACCEPTED.values()
    family = info.media_type.split("/")[0]
    if family == "image":
        assert isinstance(info.width, int) and isinstance(info.height, int)
        assert info.width >= 1 and info.height >= 1
        assert info.width * info.height <= MAX_IMAGE_PIXELS
        assert info.duration_s is None
        with Image.open(io.BytesIO(kept)) as again:  # what we keep is the image we checked
            assert again.format in IMAGE_FORMATS[info.media_type]
            assert again.size == (info.width, info.height)
            again.load()
    elif family == "video":
        assert info.width >= 1 and info.height >= 1
    else:
        assert info.width is None and info.height is None
    if family in ("video", "audio") and info.duration_s is not None:
        assert math.isfinite(info.duration_s) and info.duration_s >= 0
    if family == "font":
        assert info.duration_s is None


# --- real files to start from ----------------------------------------------------------------


@cache
def picture(fmt: str, mode: str, size: tuple[int, int], seed: int, option: int) -> bytes:
    rng = random.Random(seed)
    if seed % 3 == 0:  # flat colour: compresses to almost nothing
        image = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    else:
        image = Image.frombytes("RGB", size, rng.randbytes(size[0] * size[1] * 3))
    if fmt == "JPEG" and mode not in ("RGB", "L"):
        mode = "RGB"
    image = image.convert(mode)
    options = {
        "PNG": [{}, {"optimize": True}, {"compress_level": 0}],
        "JPEG": [{"quality": 75}, {"progressive": True}, {"quality": 95, "subsampling": 0}],
        "WEBP": [{}, {"lossless": True}, {"quality": 10}],
    }[fmt]
    out = io.BytesIO()
    image.save(out, format=fmt, **options[option % 3])
    return out.getvalue()


images = st.builds(
    picture,
    st.sampled_from(["PNG", "JPEG", "WEBP"]),
    st.sampled_from(["RGB", "RGBA", "L", "P"]),
    st.tuples(st.integers(1, 40), st.integers(1, 40)),
    st.integers(0, 2**16),
    st.integers(0, 2),
)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def png_claiming(width: int, height: int, depth: int = 8, colour: int = 0, idat=b"") -> bytes:
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([depth, colour, 0, 0, 0])
    body = _chunk(b"IDAT", idat or zlib.compress(b"\x00" * 256)) + _chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + body


@cache
def real_png_bomb() -> bytes:
    """A complete, valid 1-bit PNG of 9000 x 9000 pixels (81 MP) in a few kilobytes."""
    row = b"\x00" + bytes(9000 // 8)
    return png_claiming(9000, 9000, depth=1, idat=zlib.compress(row * 9000, 9))


def zip_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("index.html", "<script>alert(1)</script>")
    return out.getvalue()


PAYLOADS = [
    b"<html><body><script>alert(document.cookie)</script></body></html>",
    b"<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>",
    b"<?php system($_GET['c']); ?>",
    b"\n//<![CDATA[\nfetch('/api/keys').then(r => r.text())\n//]]>",
    zip_bytes(),
]

NOT_ACCEPTED = {
    "pdf": b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n",
    "zip": zip_bytes(),
    "elf": b"\x7fELF\x02\x01\x01\x00" + bytes(120),
    "windows-exe": b"MZ\x90\x00" + bytes(60) + b"PE\x00\x00" + bytes(64),
    "gzip": gzip.compress(b"hello" * 100),
    "text": b"Fresh bread every morning from 6am!\n",
    "json": b'{"name": "Harbor Bakery"}',
    "html-named-png": b"<!DOCTYPE html><html><script>alert(1)</script></html>",
    "svg-with-script": b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
    "gif-html-polyglot": b"GIF89a/*" + bytes(8) + b"*/=1;alert(document.domain);//<script>",
    "shell": b"#!/bin/sh\nrm -rf /\n",
}


def _other_format(fmt: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (9, 9, 9)).save(out, format=fmt)
    return out.getvalue()


# --- the properties ---------------------------------------------------------------------------


@fuzz(40)
@given(images, HOW)
def test_real_images_are_kept_byte_for_byte(data, how):
    got = upload(data, how)
    assert isinstance(got, Accepted), got
    assert got.kept == data
    with Image.open(io.BytesIO(data)) as image:
        assert (got.info.width, got.info.height) == image.size


@fuzz(120)
@given(images, st.data())
def test_a_truncated_image_is_refused(data, draw):
    cut = draw.draw(st.integers(0, len(data) - 1), label="cut")
    got = upload(data[:cut], draw.draw(HOW, label="how"))
    assert isinstance(got, Refused), got
    assert (
        got.message == IMAGE_DAMAGED
        or got.message.startswith(UNRECOGNISED)
        or (got.message == EMPTY)
    )


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 2**20), st.integers(1, 255)),
    st.tuples(st.just("cut"), st.integers(0, 2**20)),
    st.tuples(st.just("insert"), st.integers(0, 2**20), st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), st.integers(0, 2**20), st.integers(1, 64)),
)


def mutate(data: bytes, ops) -> bytes:
    out = bytearray(data)
    for op in ops:
        at = op[1] % (len(out) + 1)
        if op[0] == "flip" and at < len(out):
            out[at] ^= op[2]
        elif op[0] == "cut":
            del out[at:]
        elif op[0] == "insert":
            out[at:at] = op[2]
        elif op[0] == "delete":
            del out[at : at + op[2]]
    return bytes(out)


@fuzz(800)
@given(images, st.lists(mutation, min_size=1, max_size=4), HOW)
def test_damaged_images_are_refused_or_kept_safely(data, ops, how):
    upload(mutate(data, ops), how)  # `upload` checks every property either way


@fuzz(120)
@given(images, st.one_of(st.sampled_from(PAYLOADS), st.binary(min_size=1, max_size=2000)), HOW)
def test_a_polyglot_image_is_kept_without_its_payload(data, payload, how):
    """A valid image with HTML, script, a ZIP or anything else after its end marker decodes
    as that image, so it is accepted: but only the image is stored (and later served), byte for
    byte the picture that was decoded, and it deduplicates with the clean upload."""
    got = upload(data + payload, how)
    assert isinstance(got, Accepted), got
    assert got.kept == data


@fuzz(20)
@given(images, st.sampled_from(PAYLOADS[:4]), HOW)
def test_a_payload_in_front_of_an_image_is_refused(data, payload, how):
    got = upload(payload + data, how)
    assert isinstance(got, Refused) and got.message.startswith(UNRECOGNISED), got


@pytest.mark.parametrize("name", sorted(NOT_ACCEPTED))
def test_wrong_types_are_refused(name):
    got = upload(NOT_ACCEPTED[name], "path")
    assert isinstance(got, Refused), got
    assert got.message.startswith((UNRECOGNISED, "This file is ")), got.message


@pytest.mark.parametrize("fmt", ["GIF", "BMP", "TIFF", "ICO"])
def test_images_of_other_formats_are_refused(fmt):
    got = upload(_other_format(fmt), "bytes")
    assert isinstance(got, Refused) and "which is not accepted" in got.message, got


def test_empty_is_refused():
    for how in ("bytes", "stream", "trickle", "path"):
        got = upload(b"", how)
        assert isinstance(got, Refused) and got.message == EMPTY


@fuzz(200)
@given(st.one_of(st.binary(max_size=4000), st.text(max_size=400).map(str.encode)), HOW)
def test_arbitrary_bytes_are_refused_or_kept_safely(data, how):
    upload(data, how)


@fuzz(80)
@given(
    st.integers(1, 2**31 - 1).flatmap(
        lambda w: st.tuples(st.just(w), st.integers(MAX_IMAGE_PIXELS // w + 1, 2**31 - 1))
    ),
    st.sampled_from([(8, 0), (1, 0), (8, 2), (16, 6), (8, 3)]),
    HOW,
)
def test_a_png_claiming_a_huge_size_is_refused(size, depth_colour, how):
    depth, colour = depth_colour
    got = upload(png_claiming(*size, depth=depth, colour=colour), how)
    assert isinstance(got, Refused), got
    assert got.message.startswith(TOO_LARGE) or got.message == IMAGE_DAMAGED, got.message


def test_a_tiny_file_that_decodes_to_over_80_megapixels_is_refused():
    bomb = real_png_bomb()
    assert len(bomb) < 50_000
    got = upload(bomb, "stream")
    assert isinstance(got, Refused)
    assert got.message == "This image is too large: 9000 x 9000 pixels; the limit is 80 megapixels."


@pytest.mark.parametrize(
    ("fmt", "size", "message"),
    [
        ("JPEG", (10000, 9000), "This image is too large: 10000 x 9000 pixels; the limit is 80 "),
        ("JPEG", (65000, 65000), "This image is too large; the limit is 80 megapixels."),
        ("WEBP", (10000, 9000), "This image is too large: 10000 x 9000 pixels; the limit is 80 "),
        ("WEBP", (16383, 16383), "This image is too large; the limit is 80 megapixels."),
    ],
)
def test_jpeg_and_webp_headers_claiming_a_huge_size_are_refused(fmt, size, message):
    data = bytearray(picture(fmt, "RGB", (20, 20), 3, 0))
    if fmt == "JPEG":
        sof = data.find(b"\xff\xc0")
        data[sof + 5 : sof + 9] = size[1].to_bytes(2, "big") + size[0].to_bytes(2, "big")
    else:
        assert data[12:16] == b"VP8 "
        data[26:30] = size[0].to_bytes(2, "little") + size[1].to_bytes(2, "little")
    got = upload(bytes(data), "bytes")
    assert isinstance(got, Refused) and got.message.startswith(message), got


@fuzz(30)
@given(images, st.integers(-40, 40), HOW)
def test_the_size_limit_is_exact_whatever_the_source(data, over, how):
    """Padded to around the limit: accepted up to max_bytes (the padding is dropped after the
    end marker), refused above it, from bytes, a stream, a trickling stream or a file."""
    padded = data + bytes(MAX_BYTES + over - len(data))
    got = upload(padded, how)
    if len(padded) <= MAX_BYTES:
        assert isinstance(got, Accepted) and got.kept == data, got
    else:
        assert isinstance(got, Refused) and isinstance(got.error, AssetTooLarge), got


@pytest.mark.parametrize("how", ["bytes", "stream", "trickle", "path"])
def test_a_huge_file_is_refused(how):
    got = upload(picture("PNG", "RGB", (40, 40), 1, 0) + bytes(3 * MAX_BYTES), how)
    assert isinstance(got, Refused) and isinstance(got.error, AssetTooLarge)


# --- audio, video and fonts: each example runs ffprobe or FreeType, so only a few ------------


@fuzz(20)
@given(st.lists(mutation, min_size=1, max_size=3), HOW)
def test_damaged_audio_is_refused_or_kept_safely(ops, how):
    got = upload(mutate(wav_bytes(0.05), ops), how)
    if isinstance(got, Accepted):
        assert got.info.media_type == "audio/wav"


@fuzz(20)
@given(st.data())
def test_damaged_video_is_refused_or_kept_safely(mp4_bytes, data):
    ops = data.draw(st.lists(mutation, min_size=1, max_size=3), label="ops")
    got = upload(mutate(mp4_bytes, ops), data.draw(HOW, label="how"))
    if isinstance(got, Refused):
        assert got.message.startswith(("This video ", UNRECOGNISED, "This file is ")), got


def test_a_polyglot_video_is_kept_whole(mp4_bytes):
    """Video and audio are kept whole: nothing decodes them in the browser from the store, and
    their containers allow trailing data. Accepted as video, hashed as uploaded."""
    got = upload(mp4_bytes + PAYLOADS[0], "stream")
    assert isinstance(got, Accepted) and got.info.media_type == "video/mp4"
    assert got.kept == mp4_bytes + PAYLOADS[0]


@fuzz(15)
@given(st.lists(mutation, min_size=1, max_size=2), st.sampled_from(["bytes", "path"]))
def test_damaged_fonts_are_refused_or_kept_safely(ops, how):
    font = DEJAVU.read_bytes()
    got = upload(mutate(font, ops), how, max_bytes=len(font) + 100)
    if isinstance(got, Refused):
        assert isinstance(got.error, InvalidAsset)
