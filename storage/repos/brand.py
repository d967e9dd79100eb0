"""A business's brand kit: colours, fonts, logo and tagline."""

from __future__ import annotations

import re
from collections.abc import Sequence

from storage.errors import InvalidAsset, InvalidValue
from storage.models import Asset, BrandKit
from storage.scope import Scope

HEX_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")


class Brand:
    def __init__(self, scope: Scope):
        self._scope = scope

    def get(self) -> BrandKit | None:
        return self._scope.session.scalars(self._scope.select(BrandKit)).one_or_none()

    def set(
        self,
        *,
        colors: Sequence[str] = (),
        tagline: str = "",
        logo_asset_id: int | None = None,
        heading_font_asset_id: int | None = None,
        body_font_asset_id: int | None = None,
    ) -> BrandKit:
        bad = [c for c in colors if not HEX_COLOR.match(c)]
        if bad:
            raise InvalidValue(f"colours must look like #1A2B3C; got {', '.join(map(repr, bad))}")
        self._check(logo_asset_id, "image/", "the logo must be an image")
        self._check(heading_font_asset_id, "font/", "the heading font must be a font file")
        self._check(body_font_asset_id, "font/", "the body font must be a font file")
        kit = self.get() or self._scope.add(BrandKit())
        kit.colors = [c.upper() for c in colors]
        kit.tagline = tagline.strip()
        kit.logo_asset_id = logo_asset_id
        kit.heading_font_asset_id = heading_font_asset_id
        kit.body_font_asset_id = body_font_asset_id
        return kit

    def _check(self, asset_id: int | None, media_prefix: str, rule: str) -> None:
        if asset_id is None:
            return
        asset = self._scope.get(Asset, asset_id)
        if not asset.media_type.startswith(media_prefix):
            raise InvalidAsset(f"{rule}, not {asset.media_type}")
