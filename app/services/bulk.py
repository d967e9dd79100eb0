"""Bulk variant runs: a planned matrix persisted as variants and jobs, worked through with leases.

Every variant of a run is a row and a job whose idempotency key is the variant's place in the
matrix, so starting the same run again (after a crash or a kill) adds nothing and only works
through what is not done. A worker leases one job at a time; if it dies, the lease expires and
the job is taken again, and a variant that was finished is never made twice (its render is
looked up first). A failure is recorded on the variant and retried with backoff; once out of
attempts the variant stays failed and the others go on.

Lineage: each spot has a base variant, the creative as briefed (the product on the brief's own
setting); every personalized variant is its child. What a variant makes here is its frame: the
spot's product photo cut out and composited on the variant's background (`templates.composite`),
stored as the variant's first render; whole spots are rendered on demand (`renders`).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from PIL import Image

from app.services import pictures, spots
from app.services.audience_copy import aired
from app.services.backgrounds import (
    Background,
    background,
    background_request,
    backgrounds,
    stored_request,
    variant_light,
)
from app.services.cutouts import cutout
from app.services.errors import UserError
from app.services.jobs import Tallies, ensure_room, owner_name, work_batch
from app.services.matrix import MatrixPlan
from app.services.renders import keep_picture
from app.services.results_cache import Reuse
from engine import Engine, Priority, TextToImage
from storage import (
    LEASE_S,
    GenerationParams,
    Job,
    JobKey,
    JobQueue,
    NotFound,
    RenderTier,
    VariantStatus,
)
from templates.composite import composite

if TYPE_CHECKING:
    from app.services.context import AppContext

log = logging.getLogger(__name__)

KIND = "variant-frame"
UNFINISHED = (VariantStatus.PLANNED, VariantStatus.QUEUED, VariantStatus.RENDERING)
TO_MAKE = (*UNFINISHED, VariantStatus.CANCELLED)  # starting a run again resumes a cancelled one


@dataclass
class RunReport:
    run: str
    variants: int
    ready: int
    failed: int
    seconds: float
    backgrounds: Reuse
    cutouts: Reuse
    made: int = 0  # variants this call made ready (a resumed run made only the rest)
    cancelled: int = 0
    workers: dict[str, int] = field(default_factory=dict)  # frames each worker made, whole run

    @property
    def finished(self) -> bool:
        return self.ready + self.failed + self.cancelled == self.variants

    @property
    def variants_per_minute(self) -> float:
        return 60 * self.made / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict:
        return {
            "run": self.run,
            "variants": self.variants,
            "ready": self.ready,
            "failed": self.failed,
            "cancelled": self.cancelled,
            "made_now": self.made,
            "seconds": round(self.seconds, 2),
            "variants_per_minute": round(self.variants_per_minute, 2),
            "backgrounds": self.backgrounds.to_dict(),
            "cutouts": self.cutouts.to_dict(),
            "workers": self.workers,
        }


def run_key(business_id: int, plan: MatrixPlan) -> str:
    spec = {
        "business": business_id,
        "spots": list(plan.spot_ids),
        "geographies": [g.id for g in plan.geographies],
        "audiences": [a.id for a in plan.audiences],
        "preset": plan.preset,
        "recipe": plan.recipe,
        "seed": plan.seed,
    }
    # Lines chosen since a run started make another run, whose variants all air them; with
    # none chosen, a plan keeps the key it had before owners chose lines.
    if plan.lines:
        spec["lines"] = plan.lines
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def start(ctx: AppContext, engine: Engine, business_id: int, plan: MatrixPlan) -> str:
    """Persist the run's variants and jobs; a run started again returns the same key and adds
    nothing. Every spot must have a product photo. Rows are written in bulk statements, so a
    10,000-variant run starts in a few seconds."""
    run = run_key(business_id, plan)
    revision = engine.revision(plan.preset)
    with ctx.tenant(business_id) as tenant:
        counts = tenant.variants.run_counts(run)
    # New jobs: the variants not yet planned, the cancelled ones asked again, and the bases.
    more = plan.variants - sum(counts.values()) + counts[VariantStatus.CANCELLED]
    ensure_room(ctx, business_id, more + len(plan.spot_ids))  # before any row
    bases = {
        spot_id: spots.base_variant(
            ctx, engine, business_id, spot_id, preset=plan.preset, recipe=plan.recipe
        )
        for spot_id in plan.spot_ids
    }
    with ctx.tenant(business_id) as tenant:
        planned = tenant.variants.run_cells(run)
        pending = []
        for spot_id in plan.spot_ids:
            spot = tenant.campaigns.spot(spot_id)
            if not spot.product_assets:
                raise UserError(f"spot {spot_id} has no product photo to personalize")
            base = tenant.variants.get(bases[spot_id])
            if base.status is not VariantStatus.FAILED and not tenant.variants.frames([base.id]):
                pending.append(base.id)  # its key frame, too
                if base.status in (VariantStatus.PLANNED, VariantStatus.CANCELLED):
                    tenant.variants.set_status(base.id, VariantStatus.QUEUED)
            brief = spots.brief_of(spot.copy)
            # The copy as it airs for each audience, shared by its variants in every place.
            lines = plan.lines.get(spot_id, {})
            inputs = {
                a.id: spots.variant_inputs(spot, aired(brief, a, lines.get(a.id, {})))
                for a in plan.audiences
            }
            cells = [
                (
                    spots.generation_params(
                        background_request(g, a, business_id=business_id, preset=plan.preset,
                                           seed=plan.seed, recipe=plan.recipe,
                                           setting=brief.setting),
                        revision,
                        {"matrix_key": f"{run}:{spot_id}:{g.id}:{a.id}", "run": run,
                         **_set_in(inputs[a.id], g, variant_light(brief.setting, a.time_of_day))},
                    ),
                    g.id,
                    a.id,
                )
                for g in plan.geographies
                for a in plan.audiences
                if (spot_id, g.id, a.id) not in planned
            ]  # fmt: skip
            tenant.variants.create_many(spot_id, cells, parent_id=base.id)
        tenant.variants.set_run_status(
            run, VariantStatus.QUEUED, among=(VariantStatus.PLANNED, VariantStatus.CANCELLED)
        )
        pending += tenant.variants.run_ids(run, TO_MAKE)
    jobs = {_job_key(v): {"variant_id": v} for v in pending}
    JobQueue(ctx.db).enqueue_many(KIND, jobs, business_id=business_id)  # known keys: no new job
    return run


def _set_in(inputs: dict, geography, light: str) -> dict:
    """A variant's inputs in `geography` in `light`: set in the place's own picture where the
    business gave it one, else in the place's generated background (the brief's picture is
    where the spot as briefed is set, as its setting's words are); the business's pictures are
    graded toward the light."""
    extra = {k: v for k, v in inputs.items() if k != spots.BACKGROUND}
    if geography.background is not None:
        extra[spots.BACKGROUND] = geography.background.as_json()
    if spots.BACKGROUND in extra or extra.get(spots.SCENE_PICTURES):
        extra["light"] = light
    return extra


def cancel(ctx: AppContext, business_id: int, run: str) -> RunReport:
    """Stop a run: its variants not yet started are withdrawn (and marked cancelled); the one a
    worker is making finishes. Starting the run again makes the rest."""
    with ctx.tenant(business_id) as tenant:
        waiting = tenant.variants.run_ids(run, UNFINISHED)
    withdrawn = JobQueue(ctx.db).withdraw([_job_key(v) for v in waiting])
    with ctx.tenant(business_id) as tenant:
        for key in withdrawn:
            tenant.variants.set_status(
                key.variant_id, VariantStatus.CANCELLED, "the run was stopped"
            )
    return run_status(ctx, business_id, run)


class FrameHandler:
    """Makes variants' frames (the `variant-frame` job), several at once: their backgrounds are
    all asked of the engine before any is waited for, so it runs compatible ones as one batch.
    Each frame records `worker` as its maker."""

    def __init__(self, worker: str, reuse: bool = True):
        self.worker = worker
        self.reuse = reuse  # False: every background and cut-out made anew (to measure reuse)

    def run(self, ctx: AppContext, engine: Engine, job: Job, tallies: Tallies) -> None:
        failure = self.run_batch(ctx, engine, [job], tallies)[job.id]
        if failure is not None:
            raise failure

    def run_batch(
        self, ctx: AppContext, engine: Engine, jobs: list[Job], tallies: Tallies
    ) -> dict[int, Exception | None]:
        outcomes: dict[int, Exception | None] = {}
        # By business, and by whether stored results may be reused: a job with "fresh" in its
        # payload (refine remaking a variant whose files were damaged) makes them all anew.
        todo: dict[tuple[int, bool], list[tuple[Job, GenerationParams]]] = {}
        for job in jobs:
            try:
                params = _start_frame(ctx, job.business_id, int(job.payload["variant_id"]))
            except Exception as exc:
                outcomes[job.id] = exc
                continue
            if params is None:  # made before a crash
                outcomes[job.id] = None
            else:
                reuse = self.reuse and not job.payload.get("fresh")
                todo.setdefault((job.business_id, reuse), []).append((job, params))
        for (business_id, reuse), items in todo.items():
            scenes = self._backgrounds(ctx, engine, business_id, items, tallies, outcomes, reuse)
            for job, params in items:
                if job.id in outcomes:
                    continue
                try:
                    frame = _composed(ctx, engine, business_id, params, scenes[job.id],
                                      tallies, reuse)  # fmt: skip
                    variant_id = int(job.payload["variant_id"])
                    _picture(ctx, engine, business_id, variant_id)
                    _keep_frame(ctx, business_id, variant_id, frame, scenes[job.id], self.worker)
                    outcomes[job.id] = None
                except Exception as exc:
                    outcomes[job.id] = exc
        return outcomes

    def _backgrounds(self, ctx, engine, business_id, items, tallies, outcomes, reuse) -> dict:
        """Each job's generated background; None for one set in the business's own picture."""
        own = {job.id: None for job, params in items if _own(params) is not None}
        items = [(job, params) for job, params in items if job.id not in own]
        return own | self._generated(ctx, engine, business_id, items, tallies, outcomes, reuse)

    def _generated(self, ctx, engine, business_id, items, tallies, outcomes, reuse) -> dict:
        if not items:
            return {}
        requests = [_bulk_request(params) for _, params in items]
        try:
            made = backgrounds(ctx, engine, business_id, requests, tally=tallies.backgrounds,
                               reuse=reuse)  # fmt: skip
            return {job.id: m for (job, _), m in zip(items, made, strict=True)}
        except Exception:  # one bad request: the others are made one by one, each its own fate
            found = {}
            for (job, _), request in zip(items, requests, strict=True):
                try:
                    found[job.id] = background(
                        ctx, engine, business_id, request,
                        tally=tallies.backgrounds, reuse=reuse,
                    )  # fmt: skip
                except Exception as exc:
                    outcomes[job.id] = exc
            return found

    def failed(self, ctx: AppContext, job: Job, error: str, final: bool) -> None:
        with ctx.tenant(job.business_id) as tenant:
            status = VariantStatus.FAILED if final else VariantStatus.QUEUED
            tenant.variants.set_status(int(job.payload["variant_id"]), status, error)


def work(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    run: str,
    *,
    owner: str | None = None,
    lease_s: float = LEASE_S,
    reuse: bool = True,
    on_variant: Callable[[int, int], None] = lambda done, total: None,
) -> RunReport:
    """Work through the run's jobs until every variant is ready or failed; report the run.
    Each job's lease is renewed while its variant is made; the jobs of a worker that died are
    taken again once their lease expires (`lease_s`, short: LEASE_S unless a test says less).
    Other workers (a pool's actors, another `spotforge bulk`) may work on the same run."""
    owner = owner or owner_name("bulk")
    handlers = {KIND: FrameHandler(owner, reuse)}
    tallies = Tallies()
    ready_before = run_status(ctx, business_id, run).ready
    began = time.perf_counter()
    while True:
        done = work_batch(ctx, engine, handlers, owner=owner, lease_s=lease_s, tallies=tallies,
                          batch=engine.max_batch)  # fmt: skip
        report = run_status(ctx, business_id, run)
        if done:
            on_variant(report.ready + report.failed, report.variants)
        elif report.finished:
            break
        else:
            reconcile(ctx, business_id, report.run)
            time.sleep(min(1.0, lease_s / 4))  # a dead worker's lease, or a retry's backoff
    report.seconds = time.perf_counter() - began
    report.backgrounds, report.cutouts = tallies.backgrounds, tallies.cutouts
    report.made = report.ready - ready_before
    report.workers = workers_of(ctx, business_id, run)
    return report


def workers_of(ctx: AppContext, business_id: int, run: str) -> dict[str, int]:
    """How many of the run's frames each worker made, whichever process asks."""
    with ctx.tenant(business_id) as tenant:
        return tenant.variants.run_workers(run)


def reconcile(ctx: AppContext, business_id: int, run: str) -> None:
    """Mark failed the variants whose job the queue gave up on without a worker reporting it
    (its workers kept dying), so the run can finish."""
    with ctx.tenant(business_id) as tenant:
        waiting = tenant.variants.run_ids(run, UNFINISHED)
    if not waiting:
        return
    gave_up = JobQueue(ctx.db).failed([_job_key(v) for v in waiting])
    with ctx.tenant(business_id) as tenant:
        for key, error in gave_up.items():
            tenant.variants.set_status(key.variant_id, VariantStatus.FAILED, error)


def run_status(ctx: AppContext, business_id: int, run: str) -> RunReport:
    with ctx.tenant(business_id) as tenant:
        counts = tenant.variants.run_counts(run)  # one query, however large the run
    ready = counts[VariantStatus.READY] + counts[VariantStatus.APPROVED]
    failed, cancelled = counts[VariantStatus.FAILED], counts[VariantStatus.CANCELLED]
    total = sum(counts.values())
    if total == 0:  # another business's run is reported as a missing one
        raise NotFound("run", run)
    return RunReport(run, total, ready, failed, 0.0, Reuse(), Reuse(), cancelled=cancelled)


def _job_key(variant_id: int) -> JobKey:
    return JobKey(KIND, variant_id)


def make_child(
    ctx: AppContext, business_id: int, parent, params: GenerationParams, *, fresh: bool = False
) -> int:
    """A child of `parent` (in its place and audience) made from `params`, queued for its frame
    like a run's variants (`fresh`: every stored result it needs made anew); its id. The
    child's role and what it changed are in `params.extra`."""
    with ctx.tenant(business_id) as tenant:
        child = tenant.variants.create(
            parent.spot_id, params, geography_id=parent.geography_id,
            audience_id=parent.audience_id, parent_id=parent.id,
        )  # fmt: skip
        tenant.variants.set_status(child.id, VariantStatus.QUEUED)
    payload = {"variant_id": child.id, "fresh": True} if fresh else {"variant_id": child.id}
    JobQueue(ctx.db).enqueue(KIND, payload, business_id=business_id, key=_job_key(child.id))
    return child.id


def rerender_frame(
    ctx: AppContext, engine: Engine, business_id: int, variant_id: int
) -> Image.Image:
    """The variant's frame made again from its stored parameters alone: the background
    generated anew (no cache), the product cut out anew. On the CPU it equals the stored frame
    bit for bit."""
    with ctx.tenant(business_id) as tenant:
        params = GenerationParams.of(tenant.variants.get(variant_id))
    frame, _ = _frame(ctx, engine, business_id, params, Tallies(), reuse=False)
    return frame


def _bulk_request(params: GenerationParams) -> TextToImage:
    # Nobody is watching a bulk frame: the engine serves a preview or a final first.
    return replace(stored_request(params), priority=Priority.BULK)


def _frame(
    ctx, engine, business_id, params: GenerationParams, tallies: Tallies, reuse: bool
) -> tuple[Image.Image, Background | None]:
    made = None
    if _own(params) is None:
        request = _bulk_request(params)
        made = background(ctx, engine, business_id, request, tally=tallies.backgrounds, reuse=reuse)
    return _composed(ctx, engine, business_id, params, made, tallies, reuse), made


def _own(params: GenerationParams) -> pictures.Backdrop | None:
    """The business's own picture a variant's key frame is set in, if it is."""
    return pictures.Backdrop.of(params.extra.get(spots.BACKGROUND))


def _composed(
    ctx, engine, business_id, params, made: Background | None, tallies, reuse
) -> Image.Image:
    """The variant's frame: its product's cut-out on its background (`made`), or on the
    business's own picture as the spot shows it (cropped, graded) when `made` is None."""
    product_id = int(params.extra["product_asset_id"])
    product = cutout(ctx, engine, business_id, product_id, tally=tallies.cutouts, reuse=reuse)
    size = tuple(params.extra["frame"])
    with ctx.tenant(business_id) as tenant:
        if made is None:
            light = params.extra.get("light", "day")
            scene = pictures.key_frame(tenant, _own(params), light=light, size=size)
        else:
            scene = Image.open(tenant.assets.path(made.asset_id))
        return composite(scene, product, size).image


def _start_frame(ctx, business_id: int, variant_id: int) -> GenerationParams | None:
    """Mark the variant being made and return what makes it; None if its frame exists."""
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(variant_id)
        made = tenant.variants.renders(variant_id)
        if any(r.tier is RenderTier.FRAME for r in made):  # made before a crash, not marked
            tenant.variants.set_status(variant_id, VariantStatus.READY)
            return None
        tenant.variants.set_status(variant_id, VariantStatus.RENDERING)
        return GenerationParams.of(variant)


def _picture(ctx, engine, business_id: int, variant_id: int) -> None:
    """The variant's picture for the gallery, drawn before its frame is kept (a gallery shows a
    variant once its frame is). Not drawn is no failure of the variant: its frame shows."""
    try:
        keep_picture(ctx, engine, business_id, variant_id)
    except Exception:
        log.exception("variant %s: its picture was not drawn; the gallery shows its frame",
                      variant_id)  # fmt: skip


def _keep_frame(
    ctx,
    business_id: int,
    variant_id: int,
    frame: Image.Image,
    made: Background | None,
    worker: str,
) -> None:
    png = io.BytesIO()
    frame.save(png, format="PNG")
    with ctx.tenant(business_id) as tenant:
        # A worker too slow for its lease may find the job's next holder was quicker.
        if not tenant.variants.frames([variant_id]):
            asset = tenant.assets.add(png.getvalue(), f"variant-{variant_id}.png")
            tenant.variants.add_render(
                variant_id, tier=RenderTier.FRAME, asset_id=asset.id,
                timings={"background_reused": float(made is not None and made.reused)},
                worker=worker,
            )  # fmt: skip
        tenant.variants.set_status(variant_id, VariantStatus.READY)
