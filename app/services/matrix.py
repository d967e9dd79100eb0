"""The variant matrix: creatives (spots) x geographies x audiences, sized and costed before
anything runs, so a business sees what it starts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from app.services import library, spots
from app.services.backgrounds import background_request, generation_key
from app.services.errors import UserError
from engine import Engine, preset_for, with_defaults
from storage import NotFound

if TYPE_CHECKING:
    from app.services.context import AppContext

MAX_VARIANTS = 10_000


@dataclass(frozen=True)
class MatrixPlan:
    spot_ids: tuple[int, ...]
    geographies: tuple[library.GeographyView, ...]
    audiences: tuple[library.AudienceView, ...]
    preset: str
    recipe: str
    seed: int
    backgrounds: int  # distinct backgrounds the matrix needs
    backgrounds_cached: int  # of those, already made
    seconds_per_background: float
    # The owner's chosen lines per spot and audience (spots.audience_lines), only where they
    # chose any: what the run airs, and part of what identifies it (bulk.run_key).
    lines: dict[int, dict[int, dict[str, str]]] = field(default_factory=dict)

    @property
    def variants(self) -> int:
        return len(self.spot_ids) * len(self.geographies) * len(self.audiences)

    @property
    def estimated_s(self) -> float:
        """Time to make the backgrounds still missing."""
        return (self.backgrounds - self.backgrounds_cached) * self.seconds_per_background


def plan_matrix(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    spot_ids: list[int],
    geography_ids: list[int],
    audience_ids: list[int],
    *,
    preset: str,
    recipe: str = "balanced",
    seed: int = 0,
) -> MatrixPlan:
    for what, ids in (("spot", spot_ids), ("geography", geography_ids), ("audience", audience_ids)):
        if not ids:
            raise UserError(f"choose at least one {what}")
    count = len(spot_ids) * len(geography_ids) * len(audience_ids)
    if count > MAX_VARIANTS:
        raise UserError(f"{count} variants is more than one run makes ({MAX_VARIANTS})")
    geographies = pick(library.geographies(ctx, business_id), geography_ids, "geography")
    audiences = pick(library.audiences(ctx, business_id), audience_ids, "audience")
    revision = engine.revision(preset)
    with ctx.tenant(business_id) as tenant:
        copies = {spot_id: tenant.campaigns.spot(spot_id).copy for spot_id in spot_ids}
    # One request per distinct background (audiences and spots in the same light share one),
    # hashed once.
    requests = dict.fromkeys(
        background_request(
            g,
            a,
            business_id=business_id,
            preset=preset,
            seed=seed,
            recipe=recipe,
            setting=copy.get("setting", ""),
        )
        for copy in copies.values()
        for g in geographies
        for a in audiences
    )
    keys = [generation_key(request, revision) for request in requests]
    lines = {}
    for spot_id, copy in copies.items():
        chosen = spots.audience_lines(copy)
        mine = {a.id: chosen[a.id] for a in audiences if chosen.get(a.id)}
        if mine:
            lines[spot_id] = mine
    with ctx.tenant(business_id) as tenant:
        cached = len(tenant.generations.existing(keys))  # a query per thousand backgrounds
        typical = tenant.generations.typical_seconds(preset_for(preset).id)
    if typical is None:
        typical = _probe(engine, next(iter(requests)))
    return MatrixPlan(
        tuple(spot_ids),
        tuple(geographies),
        tuple(audiences),
        preset,
        recipe,
        seed,
        len(keys),
        cached,
        typical,
        lines,
    )


def pick(views: list, ids: list[int], what: str) -> list:
    """The views of these ids, in their order, once each; NotFound for one not among them."""
    by_id = {v.id: v for v in views}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise NotFound(what, missing[0])
    return [by_id[i] for i in dict.fromkeys(ids)]


def _probe(engine: Engine, request) -> float:
    """Seconds one background takes, from two short runs (1 and 3 steps): their difference is
    the cost of a step, the rest is the fixed cost of encoding and decoding."""
    steps = with_defaults(request).steps
    timings = []
    for probe_steps in (1, 3):
        began = time.perf_counter()
        engine.generate(replace(request, steps=probe_steps))
        timings.append(time.perf_counter() - began)
    per_step = max(0.0, (timings[1] - timings[0]) / 2)
    return max(timings[0] - per_step, 0.0) + per_step * steps
