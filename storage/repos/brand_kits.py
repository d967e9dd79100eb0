"""A business's brand kit: one row, what its last brief's brand and end card details were."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from storage.models import Asset, BrandKit
from storage.scope import Scope

FILES = ("logo", "heading_font", "body_font")  # the kit's stored files, by their brief role


class BrandKits:
    def __init__(self, scope: Scope):
        self._scope = scope

    def get(self) -> BrandKit | None:
        return self._scope.session.scalars(self._scope.select(BrandKit)).one_or_none()

    def files(self) -> dict[str, int]:
        """The kit's stored files by role (only those it has)."""
        kit = self.get()
        if kit is None:
            return {}
        ids = {role: getattr(kit, f"{role}_asset_id") for role in FILES}
        return {role: asset for role, asset in ids.items() if asset is not None}

    def save(
        self,
        *,
        colors: Sequence[str],
        files: Mapping[str, int],
        cta_url: str = "",
        phone: str = "",
        tagline: str = "",
    ) -> BrandKit:
        """The kit becomes exactly this (a role missing from `files` has no file); each file
        must be one of this business's assets."""
        for asset in files.values():
            self._scope.get(Asset, asset)
        columns = {f"{role}_asset_id": files.get(role) for role in FILES}
        columns |= {"colors": list(colors), "cta_url": cta_url, "phone": phone, "tagline": tagline}
        kit = self.get()
        if kit is None:
            return self._scope.add(BrandKit(), **columns)
        for name, value in columns.items():
            setattr(kit, name, value)
        return kit
