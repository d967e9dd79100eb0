"""Files a business may download: its own assets and renders, never another business's.
Ownership is checked by the asset's row in the business's scope, so a URL guessed or copied
from another account finds nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.services.context import AppContext

SHA256_NAME = re.compile(r"([0-9a-f]{64})\.\w+")


@dataclass(frozen=True)
class Download:
    path: Path
    filename: str  # what the browser saves it as
    media_type: str


def render_download(ctx: AppContext, business_id: int, render_id: int) -> Download:
    with ctx.tenant(business_id) as tenant:
        render = tenant.variants.render(render_id)
        variant = tenant.variants.get(render.variant_id)
        asset = tenant.assets.get(render.asset_id)
        stem = f"spotforge-spot{variant.spot_id}-variant{variant.id}-{render.tier.value}"
        extension = Path(asset.path).suffix
        return Download(tenant.assets.path(asset.id), stem + extension, asset.media_type)


def qc_report(ctx: AppContext, business_id: int, render_id: int) -> dict:
    with ctx.tenant(business_id) as tenant:
        render = tenant.variants.render(render_id)
        if render.qc_report is None:
            raise ValueError(f"render {render_id} has no QC report (it is a still)")
        return dict(render.qc_report)


def owns_stored_file(ctx: AppContext, business_id: int, filename: str) -> bool | None:
    """For a file named as the asset store names them (`<sha256>.<ext>`): whether this business
    owns it. None for any other name (not an asset: an upload, a page resource)."""
    match = SHA256_NAME.fullmatch(filename)
    if match is None:
        return None
    with ctx.tenant(business_id) as tenant:
        return tenant.assets.by_sha256(match.group(1)) is not None
