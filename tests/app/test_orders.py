"""Quotes, approval and the order's state machine; a bulk run stopped and started again."""

from __future__ import annotations

import time

import pytest

from app.services import Busy, UserError, bulk, library, orders, renders, spots
from app.services.jobs import progress
from app.services.matrix import plan_matrix
from engine import Engine
from storage.errors import InvalidTransition
from storage.jobs import JobQueue
from storage.models import VariantStatus
from tests.app.test_bulk import cup, ids, spot_with_photo


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


def test_price_by_length_and_variants():
    assert orders.price_cents({1: (15, 1)}) == 4900
    assert orders.price_cents({1: (15, 3), 2: (30, 1)}) == 4900 + 2 * 900 + 7900


def test_a_run_stops_and_resumes_and_its_variants_are_quoted_and_approved(
    ctx, business_ids, engine
):
    business = business_ids[0]
    spot = spot_with_photo(ctx, business, cup())
    geographies = ids(library.geographies(ctx, business), "Miami", "Denver")
    audiences = ids(library.audiences(ctx, business), "Families")
    plan = plan_matrix(ctx, engine, business, [spot], geographies, audiences, preset="mini-sd")
    run = bulk.start(ctx, engine, business, plan)

    stopped = bulk.cancel(ctx, business, run)  # before any worker took a job
    assert (stopped.cancelled, stopped.ready, stopped.finished) == (2, 0, True)
    with ctx.tenant(business) as tenant:
        made = tenant.variants.of_run(run)
        assert {v.status for v in made} == {VariantStatus.CANCELLED}
    with pytest.raises(UserError, match="not ready yet"):
        orders.quote(ctx, business, [made[0].id])

    bulk.start(ctx, engine, business, plan)  # started again: the rest is made
    report = bulk.work(ctx, engine, business, plan, lease_s=5)
    assert (report.ready, report.cancelled, report.made) == (2, 0, 2)

    order = orders.quote(ctx, business, [v.id for v in made])
    assert (order.status, order.quote_cents, order.quote_text) == ("quoted", 5800, "USD 58.00")
    approved = orders.approve(ctx, business, order.id)
    assert approved.status == "rendering"  # the finals are queued for the worker
    assert all(d.qc_passed is None for d in approved.deliveries)
    job = renders.enqueue(ctx, business, made[0].id, "final")  # the same job, not a second
    assert progress(ctx, business, job).state == "queued"
    with pytest.raises(InvalidTransition, match="cannot go from 'rendering' to 'approved'"):
        orders.approve(ctx, business, order.id)
    with ctx.tenant(business) as tenant:
        assert {tenant.variants.get(v.id).status for v in made} == {VariantStatus.APPROVED}
    with pytest.raises(Exception, match="not found"):
        orders.status(ctx, business_ids[1], order.id)  # another business's order


def test_a_variant_whose_workers_keep_dying_is_failed_and_the_run_ends(ctx, business_ids, engine):
    business = business_ids[1]
    spot = spot_with_photo(ctx, business, cup())
    geographies = ids(library.geographies(ctx, business), "Seattle")
    audiences = ids(library.audiences(ctx, business), "Students")
    plan = plan_matrix(ctx, engine, business, [spot], geographies, audiences, preset="mini-sd")
    run = bulk.start(ctx, engine, business, plan)
    queue = JobQueue(ctx.db)
    for _attempt in range(3):  # three workers take it and die without a word
        while (job := queue.lease("doomed", 0.01, kinds=(bulk.KIND,))) is not None:
            if job.payload["variant_id"] != made_by(ctx, business, run):
                queue.complete(job.id, "doomed")  # the spot's base frame: not this test's
        time.sleep(0.05)
    assert queue.lease("next", kinds=(bulk.KIND,)) is None  # the queue has given up on it
    bulk.reconcile(ctx, business, run)
    report = bulk.run_status(ctx, business, run)
    assert (report.failed, report.finished) == (1, True)
    with ctx.tenant(business) as tenant:
        [variant] = tenant.variants.of_run(run)
        assert "stopped responding" in variant.last_error


def made_by(ctx, business: int, run: str) -> int:
    with ctx.tenant(business) as tenant:
        [variant] = tenant.variants.of_run(run)
        return variant.id


def test_renders_beyond_the_bound_are_answered_busy_at_once(ctx, business_ids, engine):
    """More previews than the app keeps anyone waiting for: the next is refused with when to try
    again, nothing queued for it; one already queued is asked for again freely."""
    ctx.settings.max_waiting_renders = 2
    business, rival = business_ids
    bases = []
    for who in (business, business, rival):
        spot = spot_with_photo(ctx, who, cup())
        base = spots.choose_background(ctx, engine, who, spot, 0, preset="mini-sd")
        bases.append((who, base))
    first, _ = (renders.enqueue(ctx, who, base, "preview") for who, base in bases[:2])
    assert renders.enqueue(ctx, *bases[0], "preview") == first  # the same job, not refused
    with pytest.raises(
        Busy, match=r"busy: 2 renders are waiting\. Try again in about \d+ s"
    ) as busy:
        renders.enqueue(ctx, *bases[2], "preview")  # whoever asks
    assert busy.value.retry_after_s >= 1
    assert JobQueue(ctx.db).queued(renders.KIND) == 2
