"""Refine: the variants a review failed are made again, as lineage, until they pass or the budget
of tries and seconds runs out.

A retry is a child of the failed variant (role "retry"), in the same place and audience, whose
parameters change as its failures ask (`REMEDIES`): another background (the next seed), or the
same parameters made afresh (every stored result made anew, which also repairs a damaged copy),
with its renders made again where QC failed. The child stands in for its parent in the next
review, so a child that fails is retried in its turn, up to `tries` in a line. A variant that
passed, or that the owner approved, is never touched; neither is one still being made.

`start` only writes the children and their jobs (any worker makes them: the app's, a pool's, or
`refine`'s own loop), so a page or an agent can ask for it and follow the variants as they come.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.services import bulk, renders
from app.services.jobs import Tallies, ensure_room, owner_name, work_batch
from app.services.review import RETRY_ROLE, SceneJudge, SpotReview, VariantReview, review_spot
from storage import (
    GenerationParams,
    JobKey,
    JobQueue,
    JobStatus,
    NotFound,
    RenderTier,
    VariantStatus,
)

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine

TRIES = 3  # retries in a line for one variant
SECONDS = 300.0  # a refine run's budget: no new round starts after it
UNTOUCHED = (VariantStatus.APPROVED, VariantStatus.PLANNED, VariantStatus.QUEUED,
             VariantStatus.RENDERING)  # fmt: skip

# What a retry changes when a check fails. "seed": another background, which carries the text
# differently, shows another picture of the place and another light; "afresh": the same
# parameters with every stored result made anew; "render": the failed renders made again.
REMEDIES = {
    "legibility": "seed",
    "product_fidelity": "afresh",
    "background_match": "seed",
    "composition": "afresh",
    "qc": "render",
    "distinct": "seed",
    "integrity": "afresh",
}
FAILED_TO_MAKE = "seed"  # a variant that could not be made at all tries another background
SAID = {"seed": "another background", "afresh": "made afresh", "render": "rendered again"}
ENDED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)


@dataclass(frozen=True)
class Retry:
    variant: int  # the failed variant
    retry: int  # its child, made again
    attempt: int  # 1 for a first retry, 2 for a retry of a retry...
    because: tuple[str, ...]  # the checks it failed
    remedies: tuple[str, ...]  # keys of SAID
    geography: str = ""
    audience: str = ""
    passed: bool | None = None  # as its own review found; None until reviewed

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "retry": self.retry,
            "geography": self.geography,
            "audience": self.audience,
            "attempt": self.attempt,
            "because": list(self.because),
            "changed": [SAID[r] for r in self.remedies],
            "passed": self.passed,
        }


@dataclass
class RefineReport:
    before: SpotReview
    after: SpotReview
    retries: list[Retry] = field(default_factory=list)
    out_of_tries: list[int] = field(default_factory=list)  # still failing, none left
    out_of_time: bool = False  # the seconds ran out with failures left
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.after.to_dict(),
            "retries": [r.to_dict() for r in self.retries],
            "out_of_tries": self.out_of_tries,
            "out_of_time": self.out_of_time,
            "seconds": round(self.seconds, 2),
        }


def start(
    ctx: AppContext, business_id: int, spot_id: int, review: SpotReview, *, tries: int = TRIES
) -> tuple[list[Retry], list[int]]:
    """Write a retry child and its jobs for every variant `review` failed that may be touched
    and has tries left; returns the retries and the failed variants out of tries. A variant
    asked again before its retry was reviewed keeps that retry (asking twice makes one)."""
    failing = [v for v in review.variants if not v.passed and v.status not in UNTOUCHED]
    if not failing:
        return [], []
    with ctx.tenant(business_id) as tenant:
        tenant.campaigns.spot(spot_id)  # another business's spot is not found
        rows = {v.id: v for v in tenant.variants.list(spot_id)}
    pending = {v.parent_id: v for v in rows.values() if v.role == RETRY_ROLE}
    fresh = [v for v in failing if v.id not in pending and _attempt(rows[v.id]) < tries]
    ensure_room(ctx, business_id, len(fresh))
    retries, out_of_tries = [], []
    for reviewed in failing:
        row = rows[reviewed.id]
        if reviewed.id in pending:  # asked again: the retry already made stands
            child = pending[reviewed.id]
            retries.append(Retry(reviewed.id, child.id, _attempt(child),
                                 tuple(child.extra_params.get("because", ())),
                                 tuple(child.extra_params.get("remedies", ())),
                                 reviewed.geography, reviewed.audience))  # fmt: skip
        elif _attempt(row) >= tries:
            out_of_tries.append(reviewed.id)
        else:
            retries.append(_retry(ctx, business_id, row, reviewed))
    return retries, out_of_tries


def fix(
    ctx: AppContext, engine: Engine, business_id: int, spot_id: int, *, tries: int = TRIES
) -> tuple[SpotReview, list[Retry], list[int]]:
    """Review the spot and `start` retries of what failed, for the app's workers to make: the
    review, the retries and the failed variants out of tries."""
    review = review_spot(ctx, engine, business_id, spot_id)
    retries, out_of_tries = start(ctx, business_id, spot_id, review, tries=tries)
    return review, retries, out_of_tries


def refine(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    spot_id: int,
    *,
    tries: int = TRIES,
    seconds: float = SECONDS,
    scene_judge: SceneJudge | None = None,
) -> RefineReport:
    """Review the spot, make its failed variants again with `engine`, review the retries, and
    so on until every variant passes, none has tries left or `seconds` have gone by (the round
    under way finishes; no new one starts). Returns the spot as it stands after."""
    began = time.monotonic()
    review = review_spot(ctx, engine, business_id, spot_id, scene_judge=scene_judge)
    report = RefineReport(review, review)
    current = {v.id: v for v in review.variants}
    order = [v.id for v in review.variants]
    while True:
        if time.monotonic() - began >= seconds:
            report.out_of_time = any(not v.passed for v in current.values())
            break
        made, report.out_of_tries = start(
            ctx, business_id, spot_id, SpotReview(spot_id, list(current.values())), tries=tries
        )
        if not made:
            break
        _make(ctx, engine, business_id, [r.retry for r in made])
        children = review_spot(ctx, engine, business_id, spot_id, scene_judge=scene_judge,
                               variant_ids=[r.retry for r in made])  # fmt: skip
        by_id = {v.id: v for v in children.variants}
        if not by_id:  # nothing came of this round: going on would ask the same again
            break
        for r in made:
            child = by_id.get(r.retry)
            if child is None:  # not made (the queue gave up): its parent's verdicts stand
                continue
            report.retries.append(replace(r, passed=child.passed))
            current.pop(r.variant, None)
            current[child.id] = child
            order[order.index(r.variant)] = child.id
    report.after = SpotReview(spot_id, [current[i] for i in order if i in current])
    report.seconds = time.monotonic() - began
    return report


def summary(report: RefineReport) -> str:
    """What refine did, as a person reads it: each retry and how it went, then what is left."""
    if not report.retries and not report.out_of_tries:
        return "\nNothing to make again: every variant passed or is not to be touched."
    lines = ["", f"Made again ({report.seconds:.0f} s):"]
    outcome = {True: "passed", False: "failed again", None: "not made"}
    for r in report.retries:
        lines.append(
            f"  #{r.variant} {r.geography} · {r.audience} failed {', '.join(r.because)}: "
            f"{' and '.join(SAID[m] for m in r.remedies)} as #{r.retry} (try {r.attempt}), "
            f"{outcome[r.passed]}."
        )
    if report.out_of_tries:
        listed = ", ".join(f"#{i}" for i in report.out_of_tries)
        lines.append(f"Out of tries, still failing: {listed}. Look at them yourself.")
    if report.out_of_time:
        lines.append("Out of time with failures left: run it again to go on.")
    return "\n".join(lines)


def _retry(ctx, business_id: int, parent, reviewed: VariantReview) -> Retry:
    because = tuple(reviewed.failed)
    wanted = {REMEDIES.get(name, FAILED_TO_MAKE) for name in because}
    if parent.status is VariantStatus.FAILED:
        wanted.add(FAILED_TO_MAKE)
    remedies = tuple(r for r in SAID if r in wanted)
    params = GenerationParams.of(parent)
    attempt = _attempt(parent) + 1
    extra = {**params.extra, "role": RETRY_ROLE, "run": None, "retry": attempt,
             "because": list(because), "remedies": list(remedies)}  # fmt: skip
    seed = params.seed + 1 if "seed" in remedies else params.seed
    params = replace(params, seed=seed, extra=extra)
    child = bulk.make_child(ctx, business_id, parent, params, fresh="afresh" in remedies)
    with ctx.tenant(business_id) as tenant:
        failed_tiers = _failed_tiers(tenant.variants.renders(parent.id))
    if "render" in remedies:
        for tier in failed_tiers:
            renders.enqueue(ctx, business_id, child, tier)
    return Retry(parent.id, child, attempt, because, remedies, reviewed.geography,
                 reviewed.audience)  # fmt: skip


def made(ctx: AppContext, business_id: int, retries: list[int]) -> tuple[int, int]:
    """How many of these retries are made (their frames, and renders where asked: done or
    given up), of how many; another business's variant is not found."""
    with ctx.tenant(business_id) as tenant:
        mine = {v.id for v in tenant.variants.some(retries)}
    if missing := [v for v in retries if v not in mine]:
        raise NotFound("variant", missing[0])
    ids = JobQueue(ctx.db).ids(_keys(sorted(mine)))
    return len(mine) - len(_pending(ctx, ids, sorted(mine))), len(mine)


def _make(ctx, engine: Engine, business_id: int, variant_ids: list[int]) -> None:
    """Work the queue until the jobs that make these variants (their frames, and renders where
    asked) are done or given up; another worker may take some of them meanwhile."""
    owner = owner_name("refine")
    handlers = {bulk.KIND: bulk.FrameHandler(owner), renders.KIND: renders.RenderHandler(owner)}
    tallies = Tallies()
    ids = JobQueue(ctx.db).ids(_keys(variant_ids))
    while _pending(ctx, ids, variant_ids):
        if not work_batch(ctx, engine, handlers, owner=owner, tallies=tallies,
                          batch=engine.max_batch):  # fmt: skip
            time.sleep(0.2)  # another worker holds them, or a retry waits out its backoff


def _keys(variant_ids: list[int]) -> list[JobKey]:
    keys = [JobKey(bulk.KIND, v) for v in variant_ids]
    return keys + [JobKey(renders.KIND, v, tier) for v in variant_ids for tier in renders.TIERS]


def _pending(ctx, job_ids: list[int], variant_ids: list[int]) -> set[int]:
    """The variants whose jobs are still to end."""
    queue = JobQueue(ctx.db)
    return {int(job.payload["variant_id"]) for job in map(queue.get, job_ids)
            if job.status not in ENDED} & set(variant_ids)  # fmt: skip


def _attempt(variant) -> int:
    return int(variant.extra_params.get("retry", 0))


def _failed_tiers(rendered) -> list[str]:
    """The tiers whose newest render did not pass its spec (or was never checked)."""
    latest = {r.tier: r for r in rendered if r.tier is not RenderTier.FRAME}
    return [tier.value for tier, r in latest.items() if not _passed(r.qc_report)]


def _passed(qc_report: dict | None) -> bool:
    rules = (qc_report or {}).get("rules") or []
    return bool(rules) and all(rule.get("passed") for rule in rules)
