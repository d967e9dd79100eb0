"""Review: every variant of a spot scored by named checks before a person sees it.

The checks (`CHECKS`), each in the module of what it reads: legibility in `text_checks`;
product_fidelity, background_match, composition, qc, distinct and integrity in
`picture_checks`. Their verdicts are in `verdicts`, what they judge is loaded by `subjects`, and
what they measure with is in `reading`.

Refine (`refine`: failed variants made again as lineage children) builds on this module:
`review_spot` can review some variants against all the spot's others (`variant_ids`), each
`VariantReview` carries the variant's status (approved ones are never touched), and a retry
child (role "retry") stands in for its parent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from app.services.errors import UserError
from app.services.review.picture_checks import (
    background_match,
    composition,
    distinct,
    integrity,
    product_fidelity,
    qc,
)
from app.services.review.subjects import RETRY_ROLE, Panel, Subject, _subjects
from app.services.review.text_checks import legibility
from app.services.review.verdicts import SceneJudge, SpotReview, VariantReview, Verdict, not_judged
from engine import scene_judge as scene_judges
from storage import VariantStatus

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine

__all__ = [
    "CHECKS",
    "RETRY_ROLE",
    "SceneJudge",
    "SpotReview",
    "VariantReview",
    "Verdict",
    "review_spot",
    "table",
]

Check = Callable[[Subject, Panel], Verdict]


CHECKS: dict[str, Check] = {
    "legibility": legibility,
    "product_fidelity": product_fidelity,
    "background_match": background_match,
    "composition": composition,
    "qc": qc,
    "distinct": distinct,
    "integrity": integrity,
}
NEEDS_FRAME = (legibility, product_fidelity, composition, distinct)


def review_spot(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    spot_id: int,
    *,
    variant_ids: Iterable[int] | None = None,
    checks: Iterable[str] | None = None,
    scene_judge: SceneJudge | None = None,
) -> SpotReview:
    """Score the spot's variants (its base and every personalized variant; a retry stands in
    for its parent): each against every check, and against each other for distinctness.
    `variant_ids` reviews only those (still compared with all the others), `checks` runs only
    those (names of CHECKS); `scene_judge` stands in for the engine's judge of every model.
    Another business's spot raises NotFound, as a missing one does.
    The engine is asked only for the stored cut-out of the product photo (made once, if it was
    never made)."""
    began = time.perf_counter()
    names = list(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise UserError(f"unknown check {unknown[0]!r}; one of: {', '.join(CHECKS)}")
    subjects = _subjects(ctx, engine, business_id, spot_id)
    panel = Panel(subjects, scene_judges if scene_judge is None else lambda _: scene_judge)
    wanted = None if variant_ids is None else set(variant_ids)
    reviews = []
    for subject in subjects:
        if wanted is not None and subject.id not in wanted:
            continue
        verdicts, seconds = {}, {}
        for name in names:
            check = CHECKS[name]
            t0 = time.perf_counter()
            verdicts[name] = _judged(check, subject, panel)
            seconds[name] = time.perf_counter() - t0
        reviews.append(
            VariantReview(subject.id, subject.geography, subject.audience,
                          subject.status.value, verdicts, seconds)
        )  # fmt: skip
    return SpotReview(spot_id, reviews, time.perf_counter() - began)


def _judged(check: Check, subject: Subject, panel: Panel) -> Verdict:
    if check in NEEDS_FRAME and subject.frame_path is None:
        if subject.status is VariantStatus.FAILED:
            reason = subject.last_error or "no reason was recorded"
            return Verdict(False, 0.0, f"This variant could not be made: {reason}")
        return not_judged(f"Not made yet (it is {subject.status.value}).")
    if check in NEEDS_FRAME and subject.frame is None:
        return Verdict(False, 0.0, "Its key frame cannot be read as a picture.")
    return check(subject, panel)


def table(review: SpotReview) -> str:
    """The review as a person reads it: a line per variant with each check's verdict, then why
    each failure failed, then what could not be judged (once per check and reason)."""
    mark = {True: "pass", False: "FAIL", None: "-"}
    failed = [v for v in review.variants if not v.passed]
    head = (
        f"Spot {review.spot_id}: {len(review.variants)} variants reviewed, "
        f"{len(review.variants) - len(failed)} passed, {len(failed)} failed "
        f"({review.seconds_per_variant:.1f} s a variant)."
    )
    names = list(review.variants[0].checks) if review.variants else list(CHECKS)
    rows = [["id", "place", "audience", "result", *names]]
    for v in review.variants:
        verdicts = [mark[v.checks[name].passed] for name in names]
        rows.append([f"#{v.id}", v.geography, v.audience, mark[v.passed], *verdicts])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [head, ""]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
              for row in rows]  # fmt: skip
    if failed:
        lines += ["", "Why:"]
        for v in failed:
            for name in v.failed:
                lines.append(f"  #{v.id} {v.geography} · {v.audience}, {name}: "
                             f"{v.checks[name].why}")  # fmt: skip
    unjudged: dict[tuple[str, str], int] = {}
    for v in review.variants:
        for name, verdict in v.checks.items():
            if verdict.passed is None:
                unjudged[name, verdict.why] = unjudged.get((name, verdict.why), 0) + 1
    if unjudged:
        lines += ["", "Not judged (neither passes nor fails a variant):"]
        for (name, reason), count in unjudged.items():
            lines.append(f"  {name}, {count} variant{'s' if count > 1 else ''}: {reason}")
    return "\n".join(lines)
