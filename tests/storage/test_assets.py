"""The content-addressed store: dedupe, crash safety, sniffing, limits."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time
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
        (b"just some text, not an image", "unsupported file type \\(unrecognised data\\)"),
        (b"%PDF-1.7\n" + b"0" * 100, "unsupported file type \\(application/pdf\\)"),
        (png_bytes(size=(300, 300))[:200], "image file is corrupt or truncated"),
        (b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200, "video/mp4 file is corrupt"),
        (b"", "file is empty"),
    ],
    ids=["text", "pdf", "truncated-png", "garbage-mp4", "empty"],
)
def test_invalid_files_are_refused_and_leave_nothing(ctx, business_ids, data, message):
    with ctx.tenant(business_ids[0]) as t, pytest.raises(InvalidAsset, match=message):
        t.assets.add(data, "upload")
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
