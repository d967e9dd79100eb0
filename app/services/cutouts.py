"""Product cut-outs, made once per photo and segmenter and stored like any generated result."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PIL import Image

from app.services.results_cache import Reuse, key_of, stored
from engine import Engine

if TYPE_CHECKING:
    from app.services.context import AppContext


def cutout(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    photo_asset_id: int,
    *,
    tally: Reuse | None = None,
    reuse: bool = True,
) -> Image.Image:
    """The product in a photo as RGBA, everything else transparent. A photo with its own
    transparency keeps it; otherwise the segmenter finds the product."""
    with ctx.tenant(business_id) as tenant:
        photo = tenant.assets.get(photo_asset_id)
        sha, path = photo.sha256, tenant.assets.path(photo.id)
    segmenter = engine.segmenter
    key = key_of({"kind": "cutout", "photo": sha, "segmenter": segmenter.identity})

    def segment() -> tuple[bytes, dict]:
        with Image.open(path) as image:
            image.load()
            png = io.BytesIO()
            segmenter.cutout(image).save(png, format="PNG")
        return png.getvalue(), {"kind": "cutout", "segmenter": segmenter.identity}

    made = stored(
        ctx, business_id, key, f"cutout-{sha[:12]}.png", segment, reuse=reuse, tally=tally
    )
    with ctx.tenant(business_id) as tenant:
        image = Image.open(tenant.assets.path(made.asset_id))
        image.load()
    return image
