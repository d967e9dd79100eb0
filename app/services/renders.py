"""A variant rendered as a spot: preview or broadcast final, QC'd and stored with its report.

The spot's brief (its `copy`) is adapted to the variant's audience, its background is the
generation the variant's parameters name (the same asset the approved preview used, so the final
airs what was approved), and its product is the spot's photo, cut out.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image

from app.services import library
from app.services.audience_copy import adapt
from app.services.backgrounds import background
from engine import Engine
from storage.models import RenderTier
from templates.export import TIERS
from templates.export import render as render_spot
from templates.motion import Still
from templates.spec import load_template
from templates.storyboard import Brief, build_storyboard

if TYPE_CHECKING:
    from app.services.context import AppContext


@dataclass(frozen=True)
class RenderView:
    variant_id: int
    tier: str
    asset_id: int
    path: Path
    qc_passed: bool
    qc_report: dict


def render_variant(
    ctx: AppContext, engine: Engine, business_id: int, variant_id: int, tier: str
) -> RenderView:
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}; one of: {', '.join(TIERS)}")
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(variant_id)
        spot = tenant.campaigns.spot(variant.spot_id)
        template = load_template(spot.template_id)
        brief = Brief.model_validate(spot.copy)
        product_path = tenant.assets.path(int(variant.extra_params["product_asset_id"]))
        preset, seed, recipe = variant.model_id, variant.seed, variant.recipe
        geography_id, audience_id = variant.geography_id, variant.audience_id
    geography = next(g for g in library.geographies(ctx, business_id) if g.id == geography_id)
    audience = next(a for a in library.audiences(ctx, business_id) if a.id == audience_id)
    scene = background(
        ctx, engine, business_id, geography, audience, preset=preset, seed=seed, recipe=recipe
    )
    board = build_storyboard(template, adapt(brief, audience, template))
    photo = Image.open(product_path)
    photo.load()
    cutout = engine.segmenter.cutout(photo)
    with ctx.tenant(business_id) as tenant:
        backdrop = Image.open(tenant.assets.path(scene.asset_id))
        backdrop.load()
    visuals = {
        s.index: Still(backdrop, subject=cutout if s.visual.source == "product" else None)
        for s in board.scenes
        if s.visual.source != "brand"
    }
    with tempfile.TemporaryDirectory(prefix="spotforge-render-") as tmp:
        result = render_spot(board, visuals, TIERS[tier], Path(tmp) / f"variant-{variant_id}.mp4")
        report = result.report.to_dict()
        with ctx.tenant(business_id) as tenant:
            asset = tenant.assets.add(result.path, f"variant-{variant_id}-{tier}.mp4")
            tenant.variants.add_render(
                variant_id,
                tier=RenderTier(tier),
                asset_id=asset.id,
                qc_report=report,
                timings=result.timings,
            )
            path = tenant.assets.path(asset.id)
    return RenderView(variant_id, tier, asset.id, path, result.report.passed, report)
