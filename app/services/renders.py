"""A variant rendered as a spot: preview or broadcast final, QC'd and stored with its report.

Everything comes from what the variant stored: its copy (the brief as adapted to its audience
when it was made; a base variant's is the brief itself, voice-over script and music choice
included: the voice is spoken again from the script, the same samples every time), an uploaded
track, its scene order, its backgrounds (the generations its parameters name, one per seed when
a scene was regenerated on its own) and the stored cut-out of the spot's photo. These are the
assets the approved preview used, so the final airs what was approved.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image

from app.services import provenance
from app.services.cutouts import cutout
from app.services.errors import Busy, UserError
from app.services.jobs import Tallies, ensure_room
from app.services.spots import resolved_brief, scene_visuals, uploaded_track
from app.services.variants import picture_path
from engine import Engine, Priority
from storage import (
    GenerationParams,
    Job,
    JobKey,
    JobQueue,
    RenderTier,
    VariantStatus,
)
from templates.export import TIERS, frames_at, scene_stills, shaped
from templates.export import render as render_spot
from templates.spec import SHAPES, load_template
from templates.storyboard import build_storyboard
from templates.thumbnails import contact_sheet

if TYPE_CHECKING:
    from app.services.context import AppContext

KIND = "variant-render"
PICTURE_SCENE = (320, 180)  # each scene on a variant's picture (all four: 0.075 s of a core)
PICTURE_SCENES = 4  # how many: two rows of two, the sheet 16:9 as a gallery shows it
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
    shape: str = "16:9"


def render_variant(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    variant_id: int,
    tier: str,
    *,
    shape: str = "16:9",
    worker: str | None = None,
) -> RenderView:
    """The variant rendered at `tier` in `shape` (`templates.spec.SHAPES`): the same storyboard,
    timing and sound in every shape, its layout made for that screen; a final is checked by its
    shape's spec (`templates.qc_specs.MASTERS`)."""
    _check(tier, shape)
    made = shaped(TIERS[tier], shape)
    size = (made.width, made.height)
    board, visuals, track, _ = _spot(ctx, engine, business_id, variant_id, size)
    with tempfile.TemporaryDirectory(prefix="spotforge-render-") as tmp:
        out = Path(tmp) / f"variant-{variant_id}.mp4"
        result = render_spot(board, visuals, made, out, track)
        report = result.report.to_dict()
        if tier == "final":  # checked, then signed: every stored copy carries its manifest
            provenance.sign_final(ctx, business_id, variant_id, result.path, shape=shape)
        with ctx.tenant(business_id) as tenant:
            name = f"variant-{variant_id}-{tier}{_suffix(shape)}.mp4"
            asset = tenant.assets.add(result.path, name)
            if tenant.variants.get(variant_id).status in NOT_YET_SEEN:
                tenant.variants.set_status(variant_id, VariantStatus.READY)  # it can be seen now
            render = tenant.variants.add_render(
                variant_id,
                tier=RenderTier(tier),
                asset_id=asset.id,
                qc_report=report,
                timings=result.timings,
                worker=worker,
                shape=shape,
            )
            path = tenant.assets.path(asset.id)
    passed = result.report.passed
    return RenderView(variant_id, render.id, tier, asset.id, path, passed, report, shape)


def keep_picture(ctx: AppContext, engine: Engine, business_id: int, variant_id: int) -> Path:
    """Draw what a gallery shows of the variant, its spot at a glance: the first scenes as
    they air for its place and audience (backgrounds, product, its audience's words and accent
    colour, the logo), two to a row, by the video's own code. Two audiences in one place share
    a key frame; their pictures differ where their spots do. Drawn by the bulk worker with the
    variant's frame; a scene regenerated on its own is made at bulk priority, as its render
    would make it."""
    board, visuals, _, variant = _spot(
        ctx, engine, business_id, variant_id, PICTURE_SCENE, Priority.BULK
    )
    board = board.model_copy(update={"scenes": board.scenes[:PICTURE_SCENES]})
    sheet = contact_sheet(scene_stills(board, visuals, PICTURE_SCENE))
    path = picture_path(ctx, business_id, variant)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            sheet.save(out, format="JPEG", quality=88)
        os.replace(partial, path)  # whole or absent to whoever looks meanwhile
    finally:
        Path(partial).unlink(missing_ok=True)
    return path


def _spot(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    variant_id: int,
    size: tuple[int, int],
    priority: Priority = Priority.INTERACTIVE,
) -> tuple:
    """The variant's storyboard, each scene's picture at `size`, its uploaded track, and its
    row: all from what the variant stored."""
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(variant_id)
        template = load_template(tenant.campaigns.spot(variant.spot_id).template_id)
        params = GenerationParams.of(variant)
        brand_files = params.extra.get("brand_assets", {})
        brief = resolved_brief(tenant, params.extra["copy"], brand_files)
        track = uploaded_track(tenant, brief, brand_files)
    board = build_storyboard(template, brief, params.extra.get("scene_order"))
    product = cutout(ctx, engine, business_id, int(params.extra["product_asset_id"]))
    visuals = scene_visuals(
        ctx, engine, business_id, params, board, size, product, priority=priority
    )
    return board, visuals, track, variant


def enqueue(
    ctx: AppContext,
    business_id: int,
    variant_id: int,
    tier: str,
    *,
    shape: str = "16:9",
    again: bool = False,
) -> int:
    """The job that renders a variant at a tier in a shape: asked twice, the same job, unless
    `again` (a re-render, which makes a new render beside the old one)."""
    return enqueue_all(ctx, business_id, [(variant_id, shape)], tier, again=again)[0]


def enqueue_all(
    ctx: AppContext,
    business_id: int,
    masters: list[tuple[int, str]],
    tier: str,
    *,
    again: bool = False,
) -> list[int]:
    """The jobs rendering each (variant, shape) at a tier, as `enqueue` makes one: queued all
    together once `room_for` them is checked, so an order's finals are never left half
    queued."""
    keys = room_for(ctx, business_id, masters, tier, again=again)
    queue = JobQueue(ctx.db)
    return [
        queue.enqueue(
            KIND,
            {"variant_id": variant_id, "tier": tier, "shape": shape},
            priority=PRIORITY[tier],
            business_id=business_id,
            key=key,
        )
        for (variant_id, shape), key in zip(masters, keys, strict=True)
    ]


def room_for(
    ctx: AppContext,
    business_id: int,
    masters: list[tuple[int, str]],
    tier: str,
    *,
    again: bool = False,
) -> list[JobKey]:
    """The job keys of these renders, once the queue has room for the ones not queued yet:
    refused whole otherwise (the business's share, or "busy, try again" while as many renders
    wait as the app keeps anyone waiting for). Another business's variant is not found."""
    for _, shape in masters:
        _check(tier, shape)
    with ctx.tenant(business_id) as tenant:
        keys = []
        for variant_id, shape in masters:
            tenant.variants.get(variant_id)
            redo = len(tenant.variants.renders(variant_id)) if again else 0
            keys.append(job_key(variant_id, tier, shape, redo))
    queue = JobQueue(ctx.db)
    new = len(keys) - len(queue.ids(keys))
    if new:
        ensure_room(ctx, business_id, new)
        _ensure_capacity(ctx, business_id, queue)
    return keys


def job_key(variant_id: int, tier: str, shape: str = "16:9", redo: int = 0) -> JobKey:
    """The queue's key for rendering a variant at a tier in a shape (a 16:9 one's is the tier's
    alone, as it always was: "final", then "final-9x16", "final-1x1")."""
    return JobKey(KIND, variant_id, f"{tier}{_suffix(shape)}", redo)


def _suffix(shape: str) -> str:
    return "" if shape == "16:9" else "-" + shape.replace(":", "x")


def _check(tier: str, shape: str) -> None:
    if tier not in TIERS:
        raise UserError(f"unknown tier {tier!r}; one of: {', '.join(TIERS)}")
    if shape not in SHAPES:
        raise UserError(f"unknown shape {shape!r}; one of: {', '.join(SHAPES)}")


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


def latest(
    ctx: AppContext, business_id: int, variant_id: int, tier: str, shape: str = "16:9"
) -> RenderView | None:
    with ctx.tenant(business_id) as tenant:
        made = [
            r for r in tenant.variants.renders(variant_id) if r.tier == tier and r.shape == shape
        ]
        if not made:
            return None
        r = made[-1]
        report = r.qc_report or {}
        path = tenant.assets.path(r.asset_id)
        passed = bool(report.get("passed"))
        return RenderView(variant_id, r.id, tier, r.asset_id, path, passed, report, shape)


def spot_preview(
    ctx: AppContext, business_id: int, spot_id: int
) -> tuple[int | None, RenderView | None]:
    """The spot as it now stands (its base variant, None before it has one) and that base's
    newest preview, if one was made."""
    with ctx.tenant(business_id) as tenant:
        base = tenant.variants.base_of(spot_id)
    if base is None:
        return None, None
    return base.id, latest(ctx, business_id, base.id, "preview")


class RenderHandler:
    """Renders a variant as a spot (the `variant-render` job), recording `worker` as its maker."""

    def __init__(self, worker: str):
        self.worker = worker

    def run(self, ctx: AppContext, engine: Engine, job: Job, tallies: Tallies) -> None:
        variant_id, tier = job.payload["variant_id"], job.payload["tier"]
        shape = job.payload.get("shape", "16:9")  # jobs queued before shapes were 16:9
        render_variant(
            ctx, engine, job.business_id, variant_id, tier, shape=shape, worker=self.worker
        )

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
        (picture, f"{s.index + 1}. {s.title} · {s.start:g}–{s.start + s.duration:g} s")
        for picture, s in zip(pictures, scenes, strict=True)
    ]
