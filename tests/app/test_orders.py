"""Quotes, approval and the order's state machine (read without a write, settled where the
finals finish); a bulk run stopped and started again."""

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
from tests.samples import png_bytes
from tests.storage.rows import all_rows
from tests.storage.test_crud import PARAMS


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


SHAPES3 = ("16:9", "9:16", "1:1")
EVERY_SCREEN = ("broadcast", "social-vertical", "social-square")  # one for each shape


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

    run = bulk.start(ctx, engine, business, plan)  # started again: the rest is made
    report = bulk.work(ctx, engine, business, run, lease_s=5)
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
    # Coming back to the spot finds the order; another business finds none of its orders.
    assert orders.newest_for_spot(ctx, business, spot).id == order.id
    assert orders.newest_for_spot(ctx, business_ids[1], spot) is None


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


def test_an_order_is_queued_whole_or_refused_whole(ctx, business_ids):
    """An order of more masters than the renders the app keeps waiting: queued all at once
    while the queue has room; refused while it is busy, left quoted with nothing queued."""
    ctx.settings.max_waiting_renders = 2
    business = business_ids[0]
    queue = JobQueue(ctx.db)
    big = orders.quote(
        ctx, business, _ready_variants(ctx, business, 2), shapes=SHAPES3, destinations=EVERY_SCREEN
    )
    approved = orders.approve(ctx, business, big.id)  # 6 masters, 0 waiting: all queued
    assert approved.status == "rendering" and queue.queued(renders.KIND) == 6
    late = orders.quote(
        ctx, business, _ready_variants(ctx, business, 1), shapes=SHAPES3, destinations=EVERY_SCREEN
    )
    with pytest.raises(Busy, match="busy: 6 renders are waiting"):
        orders.approve(ctx, business, late.id)
    assert orders.status(ctx, business, late.id).status == "quoted"
    assert queue.queued(renders.KIND) == 6  # none of the late order's


def _ready_variants(ctx, business: int, count: int) -> list[int]:
    with ctx.tenant(business) as tenant:
        campaign = tenant.campaigns.create("Finals")
        spot = tenant.campaigns.create_spot(
            campaign.id, template_id="product-hero", template_version="1", duration_s=15
        )
        made = [tenant.variants.create(spot.id, PARAMS) for _ in range(count)]
        for v in made:
            tenant.variants.set_status(v.id, VariantStatus.READY)
        return [v.id for v in made]


def _render_final(ctx, business: int, queue: JobQueue, qc_passed: bool) -> int:
    """What a worker does with the next final job, without the engine: a render, then done."""
    job = queue.lease("worker", kinds=(renders.KIND,))
    variant_id = job.payload["variant_id"]
    with ctx.tenant(business) as tenant:
        asset = tenant.assets.add(png_bytes((variant_id, 0, 0)), f"final-{variant_id}.mp4")
        tenant.variants.add_render(
            variant_id, tier="final", asset_id=asset.id, qc_report={"passed": qc_passed}
        )
    queue.complete(job.id, "worker")
    return variant_id


def test_reading_an_order_changes_nothing_it_is_settled_where_its_finals_finish(ctx, business_ids):
    business = business_ids[0]
    queue = JobQueue(ctx.db)
    variant_ids = _ready_variants(ctx, business, 2)
    order = orders.approve(ctx, business, orders.quote(ctx, business, variant_ids).id)
    assert order.status == "rendering"
    finished = [_render_final(ctx, business, queue, qc_passed=True) for _ in variant_ids]

    before = all_rows(ctx.db)
    seen = orders.status(ctx, business, order.id)
    assert seen.status == "rendering"  # done, but not settled: a read does not settle it
    assert [d.qc_passed for d in seen.deliveries] == [True, True]
    assert all_rows(ctx.db) == before  # not a row, not an updated_at changed

    for variant_id in finished:  # what the worker does after each final
        orders.settle(ctx, business, variant_id)
    delivered = orders.status(ctx, business, order.id)
    assert delivered.status == "delivered" and delivered.deliveries == seen.deliveries
    orders.settle(ctx, business, finished[0])  # settling again changes nothing
    assert orders.status(ctx, business, order.id).status == "delivered"

    # Bought again: its finals are there already, so the order is delivered as it is approved.
    again = orders.approve(ctx, business, orders.quote(ctx, business, variant_ids[:1]).id)
    assert again.status == "delivered"
    assert queue.queued(renders.KIND) == 0  # nothing rendered twice


def test_a_final_given_up_on_with_no_worker_to_say_so_is_settled_as_failed(ctx, business_ids):
    business = business_ids[1]
    queue = JobQueue(ctx.db)
    good, doomed = _ready_variants(ctx, business, 2)
    order = orders.approve(ctx, business, orders.quote(ctx, business, [good, doomed]).id)
    _render_final(ctx, business, queue, qc_passed=True)
    for _attempt in range(3):  # three workers take the other final and die without a word
        assert queue.lease("doomed", 0.01, kinds=(renders.KIND,)) is not None
        time.sleep(0.05)
    assert queue.lease("next", kinds=(renders.KIND,)) is None  # the queue gave up on it

    before = all_rows(ctx.db)
    seen = orders.status(ctx, business, order.id)
    assert seen.status == "rendering" and "stopped responding" in seen.deliveries[1].error
    assert all_rows(ctx.db) == before

    assert orders.settle_all(ctx) == 1  # what a worker runs when it starts
    assert orders.status(ctx, business, order.id).status == "failed"
    assert orders.settle_all(ctx) == 0
    retried = orders.retry(ctx, business, order.id)  # only the final that failed, anew
    assert retried.status == "rendering"
    assert queue.queued(renders.KIND) == 1
