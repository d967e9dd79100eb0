"""Content-addressed file store: the same bytes are stored once, under their sha256.

Writes go to a temporary file in the store and are renamed into place only when complete, so
an interrupted write never leaves a visible asset (rename is atomic on POSIX filesystems).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from storage.errors import AssetTooLarge, InvalidAsset
from storage.media import MediaInfo, sniff

CHUNK = 1 << 20
STALE_TMP_S = 3600  # a temporary file this old belongs to a writer that died


@dataclass(frozen=True)
class StoredBlob:
    sha256: str
    size: int
    path: str  # relative to the store root
    info: MediaInfo


class AssetStore:
    def __init__(self, root: Path, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._tmp = self.root / ".tmp"
        self._tmp.mkdir(parents=True, exist_ok=True)
        self._remove_stale_tmp()

    def put(self, source: bytes | BinaryIO | Path) -> StoredBlob:
        """Store bytes, a binary stream or a file; refuse oversized, corrupt or unknown files."""
        tmp = self._tmp / f"{uuid.uuid4().hex}.part"
        try:
            digest, size = self._copy(source, tmp)
            info = sniff(tmp)
            rel = f"{digest[:2]}/{digest[2:4]}/{digest}.{info.extension}"
            final = self.root / rel
            if final.exists():
                tmp.unlink()
            else:
                final.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, final)
                _fsync_dir(final.parent)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return StoredBlob(digest, size, rel, info)

    def path(self, rel: str) -> Path:
        path = (self.root / rel).resolve()
        if self.root.resolve() not in path.parents:
            raise InvalidAsset(f"asset path {rel!r} is outside the store")
        return path

    def _copy(self, source: bytes | BinaryIO | Path, tmp: Path) -> tuple[str, int]:
        if isinstance(source, Path):
            with source.open("rb") as stream:
                return self._copy(stream, tmp)
        if isinstance(source, bytes | bytearray | memoryview):
            if len(source) > self.max_bytes:
                raise AssetTooLarge(self.max_bytes)
            chunks = iter([bytes(source)])
        else:
            chunks = iter(lambda: source.read(CHUNK), b"")
        digest = hashlib.sha256()
        size = 0
        with tmp.open("wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > self.max_bytes:
                    raise AssetTooLarge(self.max_bytes)
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if size == 0:
            raise InvalidAsset("file is empty")
        return digest.hexdigest(), size

    def _remove_stale_tmp(self) -> None:
        cutoff = time.time() - STALE_TMP_S
        for part in self._tmp.glob("*.part"):
            try:
                if part.stat().st_mtime < cutoff:
                    part.unlink()
            except FileNotFoundError:
                pass  # another process cleaned it first


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
