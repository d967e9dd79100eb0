"""The content-addressed store: dedupe, crash safety, sniffing, limits."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from storage import AssetStore, AssetTooLarge, InvalidAsset
from tests.samples import png_bytes, wav_bytes


def visible_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and ".tmp" not in p.parts]


def test_same_bytes_are_stored_once(ctx, business_ids):
    data = png_bytes()
    with ctx.tenant(business_ids[0]) as t:
        first = t.assets.add(data, "one.png")
        again = t.assets.add(io.BytesIO(data), "two.png")
        other = t.assets.add(png_bytes((1, 2, 3)), "three.png")
    assert again.id == first.id
    assert other.sha256 != first.sha256
    assert len(visible_files(ctx.assets.root)) == 2
    stored = ctx.assets.path(first.path)
    assert stored.read_bytes() == data and stored.suffix == ".png"


@pytest.mark.parametrize(
    ("make", "media_type"),
    [
        (lambda f: png_bytes(), "image/png"),
        (lambda f: _jpeg(), "image/jpeg"),
        (lambda f: wav_bytes(0.25), "audio/wav"),
        (lambda f: f["mp4"], "video/mp4"),
        (lambda f: f["font"], "font/ttf"),
    ],
)
def test_media_type_comes_from_the_bytes(
    ctx, business_ids, mp4_bytes, font_bytes, make, media_type
):
    data = make({"mp4": mp4_bytes, "font": font_bytes})
    with ctx.tenant(business_ids[0]) as t:
        asset = t.assets.add(data, "misleading-name.txt")
    assert asset.media_type == media_type
    if media_type == "audio/wav":
        assert asset.duration_s == pytest.approx(0.25, abs=0.01)


def _jpeg() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 200, 10)).save(out, format="JPEG")
    return out.getvalue()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"just some text, not an image", "This file type is not recognised; upload a PNG, "),
        (b"%PDF-1.7\n" + b"0" * 100, "This file is application/pdf, which is not accepted; "),
        (png_bytes(size=(300, 300))[:200], "This image is damaged or incomplete; export it again"),
        (b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200, "This video cannot be read; export it "),
        (b"", "This file is empty; choose the file again."),
    ],
    ids=["text", "pdf", "truncated-png", "garbage-mp4", "empty"],
)
def test_invalid_files_are_refused_and_leave_nothing(ctx, business_ids, data, message):
    with ctx.tenant(business_ids[0]) as t, pytest.raises(InvalidAsset) as refused:
        t.assets.add(data, "upload")
    assert str(refused.value).startswith(message)
    assert ".tmp" not in str(refused.value) and ".part" not in str(refused.value)
    with ctx.tenant(business_ids[0]) as t:
        assert t.assets.list() == []
    assert visible_files(ctx.assets.root) == []
    assert list((ctx.assets.root / ".tmp").iterdir()) == []


def test_size_limit(tmp_path):
    store = AssetStore(tmp_path, max_bytes=1000)
    big = png_bytes(size=(200, 200)) + b"\x00" * 1000
    with pytest.raises(AssetTooLarge, match=r"file is too large: the limit is 0\.0 MB"):
        store.put(big)
    with pytest.raises(AssetTooLarge):
        store.put(io.BytesIO(big))  # a stream is cut off as soon as it passes the limit
    assert visible_files(tmp_path) == [] and list((tmp_path / ".tmp").iterdir()) == []


def test_stream_that_breaks_midway_leaves_nothing(tmp_path):
    class Broken(io.RawIOBase):
        def __init__(self):
            self.reads = 0

        def read(self, n=-1):
            self.reads += 1
            if self.reads > 3:
                raise ConnectionResetError("client went away")
            return b"\x89PNG" + b"\x00" * 1000

    store = AssetStore(tmp_path, max_bytes=10**6)
    with pytest.raises(ConnectionResetError):
        store.put(Broken())
    assert visible_files(tmp_path) == [] and list((tmp_path / ".tmp").iterdir()) == []


def test_killed_writer_leaves_no_visible_asset(tmp_path):
    """SIGKILL a real process in the middle of a write: no asset appears, a retry works."""
    writer = textwrap.dedent(
        f"""
        import io, time, sys
        from storage import AssetStore
        from tests.samples import png_bytes
        data = png_bytes(size=(512, 512)) + bytes(4_000_000)

        class Slow(io.RawIOBase):
            pos = 0
            def read(self, n=-1):
                chunk = data[self.pos:self.pos + 65536]
                self.pos += len(chunk)
                time.sleep(0.05)
                return chunk

        AssetStore({str(tmp_path)!r}, max_bytes=10**8).put(Slow())
        print("finished", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", writer], cwd=Path(__file__).parents[2], stdout=subprocess.PIPE
    )
    tmp_dir = tmp_path / ".tmp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        parts = list(tmp_dir.glob("*.part")) if tmp_dir.exists() else []
        if parts and parts[0].stat().st_size > 200_000:
            break
        time.sleep(0.02)
    else:
        pytest.fail("the writer never started writing")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.stdout.read() == b""  # it really died mid-write
    assert visible_files(tmp_path) == []

    # The partial file is left for the janitor; once stale, opening the store removes it.
    [part] = tmp_dir.glob("*.part")
    old = time.time() - 7200
    os.utime(part, (old, old))
    store = AssetStore(tmp_path, max_bytes=10**8)
    assert list(tmp_dir.iterdir()) == []
    blob = store.put(png_bytes(size=(512, 512)))
    assert visible_files(tmp_path) == [tmp_path / blob.path]


def test_paths_cannot_escape_the_store(tmp_path):
    store = AssetStore(tmp_path / "assets", max_bytes=1000)
    with pytest.raises(InvalidAsset, match="outside the store"):
        store.path("../../etc/passwd")


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_messages_are_plain_and_keep_the_detail_for_the_logs(tmp_path, mp4_bytes):
    store = AssetStore(tmp_path / "assets", max_bytes=10**7)
    with pytest.raises(InvalidAsset) as damaged:
        store.put(png_bytes(size=(300, 300))[:200])
    assert str(damaged.value) == (
        "This image is damaged or incomplete; export it again as PNG or JPEG."
    )
    assert damaged.value.__cause__ is not None  # Pillow's own words, for the logs only
    with pytest.raises(InvalidAsset) as unreadable:
        store.put(mp4_bytes[: len(mp4_bytes) // 3])
    assert str(unreadable.value) == "This video cannot be read; export it again as MP4."
    assert ".part" in str(unreadable.value.__cause__)  # ffprobe's stderr, chained

    with pytest.raises(InvalidAsset) as large:
        store.put(png_claiming(12000, 9000))
    assert str(large.value) == (
        "This image is too large: 12000 x 9000 pixels; the limit is 80 megapixels."
    )
    assert list((tmp_path / "assets" / ".tmp").iterdir()) == []


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims this size, with a valid CRC, and no pixel data to speak of."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + kind + body + crc

    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def test_inspect_checks_like_put_and_stores_nothing(tmp_path, mp4_bytes):
    store = AssetStore(tmp_path / "assets", max_bytes=100_000)
    photo = tmp_path / "photo.png"
    photo.write_bytes(png_bytes(size=(40, 30)))
    for source in (photo, photo.read_bytes(), io.BytesIO(photo.read_bytes())):
        info = store.inspect(source)
        assert (info.media_type, info.width, info.height) == ("image/png", 40, 30)
    assert store.inspect(mp4_bytes).duration_s == pytest.approx(1.0, abs=0.1)
    assert visible_files(tmp_path / "assets") == []
    assert list((tmp_path / "assets" / ".tmp").iterdir()) == []
    assert photo.read_bytes() == png_bytes(size=(40, 30))  # the source is only read

    refusals = [
        (b"not an image", InvalidAsset),
        (png_bytes()[:60], InvalidAsset),
        (b"", InvalidAsset),
        (png_bytes() + bytes(100_000), AssetTooLarge),
    ]
    for data, error in refusals:
        for source in (data, io.BytesIO(data)):
            with pytest.raises(error) as inspected:
                store.inspect(source)
            with pytest.raises(error) as put:
                store.put(data)
            assert str(inspected.value) == str(put.value)
    assert visible_files(tmp_path / "assets") == []
    assert list((tmp_path / "assets" / ".tmp").iterdir()) == []
    assert store.put(photo).info == store.inspect(photo)


def test_a_polyglot_image_is_stored_without_its_payload(tmp_path):
    """Bytes after an image's end marker (HTML, script, a ZIP) are where a polyglot hides its
    second meaning. The image is accepted, but only the image is kept: the stored file is the
    picture that was decoded, byte for byte, and deduplicates with the clean upload."""
    store = AssetStore(tmp_path, max_bytes=10**6)
    clean = png_bytes()
    blob = store.put(clean + b"<html><script>alert(document.cookie)</script></html>")
    assert (tmp_path / blob.path).read_bytes() == clean
    assert blob.size == len(clean) and blob.sha256 == store.put(clean).sha256
    assert visible_files(tmp_path) == [tmp_path / blob.path]


def test_put_leaves_no_part_file_whatever_fails(tmp_path, monkeypatch):
    import storage.assets

    store = AssetStore(tmp_path, max_bytes=10**6)

    def interrupted(_path):
        raise KeyboardInterrupt

    def disk_full(*_args):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(storage.assets, "sniff", interrupted)
        with pytest.raises(KeyboardInterrupt):
            store.put(png_bytes())
    with monkeypatch.context() as patch:
        patch.setattr(storage.assets.os, "replace", disk_full)
        with pytest.raises(OSError, match="No space"):
            store.put(png_bytes())
    with pytest.raises(FileNotFoundError):
        store.put(tmp_path / "missing.png")
    assert visible_files(tmp_path) == [] and list((tmp_path / ".tmp").iterdir()) == []


def test_a_zip_is_stored_only_when_the_app_made_it(tmp_path):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as made:
        made.writestr("spot.mp4", b"\0" * 5000)
    data = archive.getvalue()
    with pytest.raises(InvalidAsset, match="application/zip, which is not accepted"):
        AssetStore(tmp_path / "assets", max_bytes=1_000_000).put(data)  # an upload
    store = AssetStore(tmp_path / "assets", max_bytes=1000)
    blob = store.put(data, made=True)  # a delivery package, held to no upload limit
    assert (blob.info.media_type, blob.info.extension) == ("application/zip", "zip")
    assert store.path(blob.path).read_bytes() == data
    assert [p.name for p in (tmp_path / "assets" / ".tmp").iterdir()] == []
