"""Content-addressed file store: the same bytes are stored once, under their sha256.

Writes go to a temporary file in the store and are renamed into place only when complete, so
an interrupted write never leaves a visible asset (rename is atomic on POSIX filesystems).
Whatever goes wrong, the temporary file is removed before the error reaches the caller.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from storage.errors import AssetTooLarge, InvalidAsset
from storage.media import IMAGE_DAMAGED, MediaInfo, payload_end, sniff, sniff_made

CHUNK = 1 << 20
STALE_TMP_S = 3600  # a temporary file this old belongs to a writer that died
EMPTY = "This file is empty; choose the file again."
OUTSIDE = "That asset path is outside the store."


@dataclass(frozen=True)
class StoredBlob:
    sha256: str
    size: int
    path: str  # relative to the store root
    info: MediaInfo


@dataclass(frozen=True)
class _Received:
    """An upload copied into .tmp, checked, and cut to its media (see `media.payload_end`)."""

    tmp: Path
    sha256: str
    size: int
    info: MediaInfo


class AssetStore:
    def __init__(self, root: Path, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._tmp = self.root / ".tmp"
        self._tmp.mkdir(parents=True, exist_ok=True)
        self._remove_stale_tmp()

    def put(self, source: bytes | BinaryIO | Path, *, made: bool = False) -> StoredBlob:
        """Store bytes, a binary stream or a file; refuse oversized, corrupt or unknown files.
        Storing bytes already stored repairs their copy if it was changed or deleted since (what
        makes a variant again heals the file it was made of). `made`: a file the app made (a
        delivery package), which may be of a MADE kind and is not held to the upload limit."""
        with self._received(source, durable=True, made=made) as got:
            rel = f"{got.sha256[:2]}/{got.sha256[2:4]}/{got.sha256}.{got.info.extension}"
            final = self.root / rel
            if not (final.exists() and _sha256_of(final) == got.sha256):
                final.parent.mkdir(parents=True, exist_ok=True)
                os.replace(got.tmp, final)
                _fsync_dir(final.parent)
        return StoredBlob(got.sha256, got.size, rel, got.info)

    def inspect(self, source: bytes | BinaryIO | Path) -> MediaInfo:
        """What `put` would store `source` as, storing nothing: the same size limit, the same
        sniffing and the same refusals (AssetTooLarge, InvalidAsset), so a caller can refuse a
        whole upload before any of its files is kept. The bytes pass through a temporary file
        that is removed before this returns or raises. A stream is read to its end (seek back
        before passing it to `put`); a Path or bytes are only read."""
        with self._received(source, durable=False) as got:
            return got.info

    def path(self, rel: str) -> Path:
        path = (self.root / rel).resolve()
        if self.root.resolve() not in path.parents:
            raise InvalidAsset(OUTSIDE)
        return path

    @contextmanager
    def _received(
        self, source: bytes | BinaryIO | Path, durable: bool, made: bool = False
    ) -> Iterator[_Received]:
        """The one way in, for `put` and `inspect`: copy within the size limit, sniff, keep only
        the media itself. The temporary file is gone when the block ends, however it ends
        (`put` renames it into place first)."""
        tmp = self._tmp / f"{uuid.uuid4().hex}.part"
        try:
            digest, size = self._copy(source, tmp, durable, None if made else self.max_bytes)
            info = (sniff_made if made else sniff)(tmp)
            end = payload_end(tmp, info)
            if end < size:
                # Bytes after the image's end marker (a polyglot's HTML, script or ZIP) are
                # dropped; what is kept must still decode to the same image, or it is refused.
                digest, size = _truncate(tmp, end, durable), end
                if sniff(tmp) != info:
                    raise InvalidAsset(IMAGE_DAMAGED)
            yield _Received(tmp, digest, size, info)
        finally:
            tmp.unlink(missing_ok=True)

    def _copy(
        self, source: bytes | BinaryIO | Path, tmp: Path, durable: bool, limit: int | None
    ) -> tuple[str, int]:
        if isinstance(source, Path):
            with source.open("rb") as stream:
                return self._copy(stream, tmp, durable, limit)
        if isinstance(source, bytes | bytearray | memoryview):
            view = memoryview(source)
            if limit is not None and view.nbytes > limit:
                raise AssetTooLarge(self.max_bytes)
            chunks = iter([view.tobytes()])
        else:
            chunks = iter(lambda: source.read(CHUNK), b"")
        digest = hashlib.sha256()
        size = 0
        with tmp.open("wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if limit is not None and size > limit:
                    raise AssetTooLarge(self.max_bytes)
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            if durable:
                os.fsync(out.fileno())
        if size == 0:
            raise InvalidAsset(EMPTY)
        return digest.hexdigest(), size

    def _remove_stale_tmp(self) -> None:
        cutoff = time.time() - STALE_TMP_S
        for part in self._tmp.glob("*.part"):
            try:
                if part.stat().st_mtime < cutoff:
                    part.unlink()
            except FileNotFoundError:
                pass  # another process cleaned it first


def _truncate(tmp: Path, end: int, durable: bool) -> str:
    """Cut `tmp` to its first `end` bytes; the sha256 of what is left."""
    digest = hashlib.sha256()
    with tmp.open("r+b") as file:
        file.truncate(end)
        file.flush()
        if durable:
            os.fsync(file.fileno())
        file.seek(0)
        for chunk in iter(lambda: file.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _sha256_of(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
