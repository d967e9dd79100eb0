"""A business's files: its rows point into the shared content-addressed store."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from sqlalchemy.exc import IntegrityError

from storage.assets import AssetStore
from storage.models import Asset
from storage.scope import Scope


class Assets:
    def __init__(self, scope: Scope, store: AssetStore):
        self._scope = scope
        self._store = store

    def add(
        self,
        source: bytes | BinaryIO | Path,
        original_name: str = "",
        *,
        library: bool = False,
        made: bool = False,
    ) -> Asset:
        """Store a file for this business; adding the same bytes again returns the same asset.
        With `library`, it is one of the business's own pictures, named as it was uploaded
        there (adding it there again, under another name, keeps the first). With `made`, a
        file the app made itself (`AssetStore.put`)."""
        blob = self._store.put(source, made=made)
        existing = self._scope.session.scalars(
            self._scope.select(Asset).where(Asset.sha256 == blob.sha256)
        ).one_or_none()
        if existing is None:
            try:
                with self._scope.session.begin_nested():
                    existing = self._add_row(blob, blob.info, original_name)
            except IntegrityError:  # the same bytes, uploaded at the same moment by this business
                existing = self.by_sha256(blob.sha256)
        if library and not existing.in_library:
            existing.in_library = True
            existing.original_name = Path(original_name).name[:255] or existing.original_name
            self._scope.session.flush()
        return existing

    def _add_row(self, blob, info, original_name: str) -> Asset:
        return self._scope.add(
            Asset(
                sha256=blob.sha256,
                media_type=info.media_type,
                bytes=blob.size,
                width=info.width,
                height=info.height,
                duration_s=info.duration_s,
                path=blob.path,
                original_name=Path(original_name).name[:255],
            )
        )

    def get(self, asset_id: int) -> Asset:
        return self._scope.get(Asset, asset_id)

    def by_sha256(self, sha256: str) -> Asset | None:
        return self._scope.session.scalars(
            self._scope.select(Asset).where(Asset.sha256 == sha256)
        ).one_or_none()

    def path(self, asset_id: int) -> Path:
        """The file on disk, for an asset this business owns."""
        return self._store.path(self.get(asset_id).path)

    def library(self) -> list[Asset]:
        """The business's own pictures, in the order they were uploaded."""
        return self._scope.all(
            self._scope.select(Asset).where(Asset.in_library.is_(True)).order_by(Asset.id)
        )

    def list(self, media_prefix: str = "") -> list[Asset]:
        query = self._scope.select(Asset).order_by(Asset.id)
        if media_prefix:
            query = query.where(Asset.media_type.startswith(media_prefix))
        return self._scope.all(query)
