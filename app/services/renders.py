"""A variant rendered as a spot: preview or broadcast final, QC'd and stored with its report.

Everything comes from what the variant stored: its copy (the brief as adapted to its audience
when it was made; a base variant's is the brief itself, voice-over script and music choice
included: the voice is spoken again from the script, the same samples every time), an uploaded
track, its scene order, its backgrounds (the generations its parameters name, one per seed when
a scene was regenerated on its own) and the stored cut-out of the spot's photo. These are the
assets the approved preview used, so the final airs what was approved.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image

from app.services.cutouts import cutout
from app.services.errors import Busy, UserError
from app.services.jobs import Tallies, ensure_room
from app.services.spots import resolved_brief, scene_backdrops, uploaded_track
from engine import Engine
from storage import GenerationParams, Job, JobKey, JobQueue, RenderTier, VariantStatus
from templates.export import TIERS, frames_at
from templates.export import render as render_spot
from templates.motion import Still
from templates.spec import load_template
from templates.storyboard import build_storyboard

if TYPE_CHECKING:
    from app.services.context import AppContext

KIND = "variant-render"
NOT_YET_SEEN = (VariantStatus.PLANNED, VariantStatus.QUEUED, VariantStatus.FAILED)
FIRST_GUESS_S = {"preview": 25.0, "final": 90.0}
PRIORITY = {"preview": 10, "final": 5}  # someone is watching a preview; frames wait (0)


@dataclass(frozen=True)
class RenderView:
    variant_id: int
    render_id: int
    tier: str
    asset_id: int
    path: Path
    qc_passed: bool
    qc_report: dict


def render_variant(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    variant_id: int,
    tier: str,
    *,
    worker: str | None = None,
) -> RenderView:
    if tier not in TIERS:
        raise UserError(f"unknown tier {tier!r}; one of: {', '.join(TIERS)}")
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(variant_id)
        spot = tenant.campaigns.spot(variant.spot_id)
        template = load_template(spot.template_id)
        params = GenerationParams.of(variant)
        brand_files = params.extra.get("brand_assets", {})
        brief = resolved_brief(tenant, params.extra["copy"], brand_files)
        track = uploaded_track(tenant, brief, brand_files)
    board = build_storyboard(template, brief, params.extra.get("scene_order"))
    backdrops = scene_backdrops(ctx, engine, business_id, params, board)
    product = cutout(ctx, engine, business_id, int(params.extra["product_asset_id"]))
    visuals = {
        s.index: Still(
            backdrops[s.index], subject=product if s.visual.source == "product" else None
        )
        for s in board.scenes
        if s.visual.source != "brand"
    }
    with tempfile.TemporaryDirectory(prefix="spotforge-render-") as tmp:
        out = Path(tmp) / f"variant-{variant_id}.mp4"
        result = render_spot(board, visuals, TIERS[tier], out, track)
        report = result.report.to_dict()
        with ctx.tenant(business_id) as tenant:
            asset = tenant.assets.add(result.path, f"variant-{variant_id}-{tier}.mp4")
            if tenant.variants.get(variant_id).status in NOT_YET_SEEN:
                tenant.variants.set_status(variant_id, VariantStatus.READY)  # it can be seen now
            render = tenant.variants.add_render(
                variant_id,
                tier=RenderTier(tier),
                asset_id=asset.id,
                qc_report=report,
                timings=result.timings,
                worker=worker,
            )
            path = tenant.assets.path(asset.id)
    return RenderView(variant_id, render.id, tier, asset.id, path, result.report.passed, report)


def enqueue(
    ctx: AppContext, business_id: int, variant_id: int, tier: str, *, again: bool = False
) -> int:
    """The job that renders a variant at a tier: asked twice, the same job, unless `again`
    (a re-render, which makes a new render beside the old one)."""
    if tier not in TIERS:
        raise UserError(f"unknown tier {tier!r}; one of: {', '.join(TIERS)}")
    with ctx.tenant(business_id) as tenant:
        tenant.variants.get(variant_id)  # another business's variant is not found
        key = JobKey(
            KIND, variant_id, tier, len(tenant.variants.renders(variant_id)) if again else 0
        )
    queue = JobQueue(ctx.db)
    if not queue.ids([key]):
        ensure_room(ctx, business_id, 1)
        _ensure_capacity(ctx, business_id, queue)
    return queue.enqueue(
        KIND,
        {"variant_id": variant_id, "tier": tier},
        priority=PRIORITY[tier],
        business_id=business_id,
        key=key,
    )


def _ensure_capacity(ctx: AppContext, business_id: int, queue: JobQueue) -> None:
    """Refuse a new render while as many wait as the app will keep anyone waiting for: a
    "busy, try again" now beats a silent wait of many minutes."""
    waiting = queue.queued(KIND)
    if waiting >= ctx.settings.max_waiting_renders:
        wait = round(waiting * typical_seconds(ctx, business_id, "preview"))
        raise Busy(
            f"Spotforge is busy: {waiting} renders are waiting. Try again in about {wait} s.",
            wait,
        )


def typical_seconds(ctx: AppContext, business_id: int, tier: str) -> float:
    """What a render of this tier has taken here lately (median), for estimates; before the
    first one, what one takes on a 2-core machine."""
    with ctx.tenant(business_id) as tenant:
        seconds = tenant.variants.recent_render_seconds(RenderTier(tier))
    return statistics.median(seconds) if seconds else FIRST_GUESS_S[tier]


def latest(ctx: AppContext, business_id: int, variant_id: int, tier: str) -> RenderView | None:
    with ctx.tenant(business_id) as tenant:
        made = [r for r in tenant.variants.renders(variant_id) if r.tier == tier]
        if not made:
            return None
        r = made[-1]
        report = r.qc_report or {}
        path = tenant.assets.path(r.asset_id)
        passed = bool(report.get("passed"))
        return RenderView(variant_id, r.id, tier, r.asset_id, path, passed, report)


class RenderHandler:
    """Renders a variant as a spot (the `variant-render` job), recording `worker` as its maker."""

    def __init__(self, worker: str):
        self.worker = worker

    def run(self, ctx: AppContext, engine: Engine, job: Job, tallies: Tallies) -> None:
        variant_id, tier = job.payload["variant_id"], job.payload["tier"]
        render_variant(ctx, engine, job.business_id, variant_id, tier, worker=self.worker)

    def failed(self, ctx: AppContext, job: Job, error: str, final: bool) -> None:
        """Nothing beyond the job's own error, which is what the page shows."""


def scene_thumbnails(
    ctx: AppContext, business_id: int, render: RenderView
) -> list[tuple[Image.Image, str]]:
    """A rendered spot's scenes, each as it looks halfway through, with its name and timing."""
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(render.variant_id)
        template = load_template(tenant.campaigns.spot(variant.spot_id).template_id)
        params = GenerationParams.of(variant)
        brief = resolved_brief(tenant, params.extra["copy"], params.extra.get("brand_assets", {}))
    scenes = build_storyboard(template, brief, params.extra.get("scene_order")).scenes
    pictures = frames_at(render.path, [s.start + s.duration / 2 for s in scenes])
    return [
        (picture, f"{s.index + 1}. {s.kind} · {s.start:g}–{s.start + s.duration:g} s")
        for picture, s in zip(pictures, scenes, strict=True)
    ]
