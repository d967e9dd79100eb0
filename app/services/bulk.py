"""Bulk variant runs: a planned matrix persisted as variants and jobs, worked through with leases.

Every variant of a run is a row and a job whose idempotency key is the variant's place in the
matrix, so starting the same run again (after a crash or a kill) adds nothing and only works
through what is not done. A worker leases one job at a time; if it dies, the lease expires and
the job is taken again, and a variant that was finished is never made twice (its render is
looked up first). A failure is recorded on the variant and retried with backoff; once out of
attempts the variant stays failed and the others go on.

What a variant makes today is its frame: the spot's product photo cut out and composited on
the geography's background (`templates.composite`), stored as the variant's preview render.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PIL import Image

from app.services import library
from app.services.backgrounds import BackgroundRun, background, background_request
from app.services.matrix import MatrixPlan
from engine import Engine
from engine.loading import preset_for
from engine.version import ENGINE_VERSION
from storage.jobs import JobQueue
from storage.models import RenderTier, Variant, VariantStatus
from storage.repos.variants import GenerationParams
from templates.composite import composite

if TYPE_CHECKING:
    from app.services.context import AppContext

KIND = "variant-frame"
FRAME = (1280, 720)
UNFINISHED = (VariantStatus.PLANNED, VariantStatus.QUEUED, VariantStatus.RENDERING)


@dataclass
class RunReport:
    run: str
    variants: int
    ready: int
    failed: int
    seconds: float
    backgrounds: BackgroundRun
    made: int = 0  # variants this call finished (a resumed run made only the rest)

    @property
    def variants_per_minute(self) -> float:
        return 60 * self.made / self.seconds if self.seconds else 0.0


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
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def start(ctx: AppContext, engine: Engine, business_id: int, plan: MatrixPlan) -> str:
    """Persist the run's variants and jobs; a run started again returns the same key and adds
    nothing. Every spot must have a product photo."""
    run = run_key(business_id, plan)
    preset = preset_for(plan.preset)
    revision = engine.revision(plan.preset)
    queue = JobQueue(ctx.db)
    with ctx.tenant(business_id) as tenant:
        existing = {v.extra_params["matrix_key"] for v in tenant.variants.of_run(run)}
        for spot_id in plan.spot_ids:
            spot = tenant.campaigns.spot(spot_id)
            if not spot.product_assets:
                raise ValueError(f"spot {spot_id} has no product photo to personalize")
            for g in plan.geographies:
                for a in plan.audiences:
                    key = f"{run}:{spot_id}:{g.id}:{a.id}"
                    if key in existing:
                        continue
                    request = background_request(
                        g, a, preset=plan.preset, seed=plan.seed, recipe=plan.recipe
                    )
                    params = GenerationParams(
                        model_id=preset.id,
                        model_revision=revision,
                        task=request.task.value,
                        prompt=request.prompt,
                        seed=plan.seed,
                        steps=preset.steps,
                        guidance=preset.guidance,
                        width=preset.width,
                        height=preset.height,
                        recipe=plan.recipe,
                        engine_version=ENGINE_VERSION,
                        extra={
                            "matrix_key": key,
                            "run": run,
                            "product_asset_id": spot.product_assets[0].id,
                            "frame": list(FRAME),
                        },
                    )
                    tenant.variants.create(spot_id, params, geography_id=g.id, audience_id=a.id)
        pending = [v for v in tenant.variants.of_run(run) if v.status in UNFINISHED]
        for variant in pending:
            if variant.status is VariantStatus.PLANNED:
                tenant.variants.set_status(variant.id, VariantStatus.QUEUED)
        pending_ids = [v.id for v in pending]
    for variant_id in pending_ids:  # the same key again returns the job already there
        queue.enqueue(
            KIND,
            {"variant_id": variant_id},
            business_id=business_id,
            idempotency_key=f"variant-frame:{variant_id}",
        )
    return run


def work(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    plan: MatrixPlan,
    *,
    owner: str | None = None,
    lease_s: float = 60.0,
    reuse: bool = True,
    on_variant: Callable[[int, int], None] = lambda done, total: None,
) -> RunReport:
    """Work through the run's jobs until every variant is ready or failed; report the run.
    Jobs leased by a worker that died are taken again once their lease expires."""
    owner = owner or f"{os.uname().nodename}:{os.getpid()}"
    queue = JobQueue(ctx.db)
    backgrounds = BackgroundRun()
    cutouts: dict[int, Image.Image] = {}
    made = 0
    began = time.perf_counter()
    while True:
        job = queue.lease(owner, lease_s, kinds=(KIND,))
        if job is None:
            report = status_of(ctx, business_id, plan)
            if report.ready + report.failed == report.variants:
                break
            time.sleep(min(1.0, lease_s / 4))  # a dead worker's lease, or a retry's backoff
            continue
        variant_id = int(job.payload["variant_id"])
        try:
            _make_frame(ctx, engine, job.business_id, variant_id, backgrounds, cutouts, reuse)
        except Exception as exc:  # recorded on the variant; the other variants go on
            status = queue.fail(job.id, owner, f"{type(exc).__name__}: {exc}")
            with ctx.tenant(job.business_id) as tenant:
                failed = status.value == "failed"
                tenant.variants.set_status(
                    variant_id,
                    VariantStatus.FAILED if failed else VariantStatus.QUEUED,
                    f"{type(exc).__name__}: {exc}",
                )
            continue
        queue.complete(job.id, owner)
        made += 1
        report = status_of(ctx, business_id, plan)
        on_variant(report.ready + report.failed, report.variants)
    report = status_of(ctx, business_id, plan)
    report.seconds = time.perf_counter() - began
    report.backgrounds = backgrounds
    report.made = made
    return report


def status_of(ctx: AppContext, business_id: int, plan: MatrixPlan) -> RunReport:
    run = run_key(business_id, plan)
    with ctx.tenant(business_id) as tenant:
        counts = tenant.variants.run_counts(run)  # one query, however large the run
    ready, failed = counts[VariantStatus.READY], counts[VariantStatus.FAILED]
    return RunReport(run, sum(counts.values()), ready, failed, 0.0, BackgroundRun())


def rerender_frame(
    ctx: AppContext, engine: Engine, business_id: int, variant_id: int
) -> Image.Image:
    """The variant's frame made again from its stored parameters alone: the background
    generated anew (no cache), the product cut out anew. On the CPU it equals the stored frame
    bit for bit."""
    with ctx.tenant(business_id) as tenant:
        inputs = _inputs(tenant, tenant.variants.get(variant_id))
    frame, _ = _frame(ctx, engine, business_id, inputs, BackgroundRun(), {}, reuse=False)
    return frame


def _inputs(tenant, variant: Variant) -> dict:
    return {
        "product_path": tenant.assets.path(int(variant.extra_params["product_asset_id"])),
        "product_id": int(variant.extra_params["product_asset_id"]),
        "frame": tuple(variant.extra_params["frame"]),
        "preset": variant.model_id,
        "recipe": variant.recipe,
        "seed": variant.seed,
        "geography_id": variant.geography_id,
        "audience_id": variant.audience_id,
    }


def _frame(ctx, engine, business_id, inputs, backgrounds, cutouts, reuse):
    geography_id, audience_id = inputs["geography_id"], inputs["audience_id"]
    geography = next(g for g in library.geographies(ctx, business_id) if g.id == geography_id)
    audience = next(a for a in library.audiences(ctx, business_id) if a.id == audience_id)
    made = background(
        ctx, engine, business_id, geography, audience, preset=inputs["preset"],
        seed=inputs["seed"], recipe=inputs["recipe"], run=backgrounds, reuse=reuse,
    )  # fmt: skip
    product_id = inputs["product_id"]
    if product_id not in cutouts or not reuse:
        photo = Image.open(inputs["product_path"])  # its own alpha, if any, marks the product
        photo.load()
        cutouts[product_id] = engine.segmenter.cutout(photo)
    with ctx.tenant(business_id) as tenant:
        scene = Image.open(tenant.assets.path(made.asset_id))
        return composite(scene, cutouts[product_id], inputs["frame"]).image, made


def _make_frame(ctx, engine, business_id, variant_id, backgrounds, cutouts, reuse) -> None:
    with ctx.tenant(business_id) as tenant:
        variant = tenant.variants.get(variant_id)
        if tenant.variants.renders(variant_id):  # made before a crash, not yet marked ready
            tenant.variants.set_status(variant_id, VariantStatus.READY)
            return
        tenant.variants.set_status(variant_id, VariantStatus.RENDERING)
        inputs = _inputs(tenant, variant)
    frame, made = _frame(ctx, engine, business_id, inputs, backgrounds, cutouts, reuse)
    png = io.BytesIO()
    frame.save(png, format="PNG")
    with ctx.tenant(business_id) as tenant:
        asset = tenant.assets.add(png.getvalue(), f"variant-{variant_id}.png")
        tenant.variants.add_render(
            variant_id, tier=RenderTier.PREVIEW, asset_id=asset.id,
            timings={"background_reused": float(made.reused)},
        )  # fmt: skip
        tenant.variants.set_status(variant_id, VariantStatus.READY)
