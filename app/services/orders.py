"""Approve and purchase: a quote for chosen variants, then the broadcast finals, delivered.

The order moves through the state machine in `storage.models.ORDER_TRANSITIONS`:
draft -> quoted -> approved -> rendering -> delivered (or failed, then rendering again).
Approving renders each variant's final from the same stored parameters and assets as its
preview; an order is delivered only when every final passes broadcast QC. No payment processor
is involved: approving a quote is the purchase.

Reading an order (`status`) never writes. An order is settled (rendering -> delivered or
failed) where its work finishes: by the worker once a final is rendered or given up on
(`settle`), by `approve` when every final it asks for was rendered already, and by
`settle_all` for the orders whose last final finished while no worker was there to settle
them (a server killed in between, a final the queue gave up on after its workers died).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.services import renders
from app.services.errors import UserError
from app.services.jobs import ensure_room
from storage import (
    CampaignStatus,
    Job,
    JobKey,
    JobQueue,
    JobStatus,
    OrderStatus,
    VariantStatus,
    rendering,
)

if TYPE_CHECKING:
    from app.services.context import AppContext

SPOT_PRICE_CENTS = {15: 4900, 30: 7900, 60: 12900}  # the first variant of a spot, by length
EXTRA_VARIANT_CENTS = 900  # each further variant of the same spot
SEEN = (VariantStatus.READY, VariantStatus.APPROVED)  # what can be ordered


@dataclass(frozen=True)
class Delivery:
    variant_id: int
    render_id: int | None
    asset_id: int | None
    qc_passed: bool | None  # None: not rendered yet
    error: str | None = None


@dataclass(frozen=True)
class OrderView:
    id: int
    status: str
    quote_cents: int | None
    currency: str
    variant_ids: tuple[int, ...]
    deliveries: tuple[Delivery, ...] = ()

    @property
    def quote_text(self) -> str:
        if self.quote_cents is None:
            return "no quote yet"
        return f"{self.currency} {self.quote_cents / 100:,.2f}"


def price_cents(durations_by_spot: dict[int, tuple[int, int]]) -> int:
    """{spot: (duration_s, variants)} -> the price: a spot's first variant at the price of its
    length, each further one at EXTRA_VARIANT_CENTS."""
    total = 0
    for duration, count in durations_by_spot.values():
        if count:
            base = SPOT_PRICE_CENTS.get(duration, SPOT_PRICE_CENTS[60])
            total += base + (count - 1) * EXTRA_VARIANT_CENTS
    return total


def quote(ctx: AppContext, business_id: int, variant_ids: list[int]) -> OrderView:
    """A quoted order for ready variants (each must have been seen: ready or approved)."""
    with ctx.tenant(business_id) as tenant:
        chosen = [tenant.variants.get(v) for v in dict.fromkeys(variant_ids)]
        if not chosen:
            raise UserError("choose at least one variant to order")
        not_ready = [v.id for v in chosen if v.status not in SEEN]
        if not_ready:
            raise UserError(f"variant {not_ready[0]} is not ready yet; order it once it is")
        counts: dict[int, tuple[int, int]] = {}
        for v in chosen:
            duration = tenant.campaigns.spot(v.spot_id).duration_s
            counts[v.spot_id] = (duration, counts.get(v.spot_id, (duration, 0))[1] + 1)
        order = tenant.orders.create([v.id for v in chosen])
        tenant.orders.quote(order.id, price_cents(counts))
        return _view(order)


def approve(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """Approve the quote (the purchase) and start rendering the finals. Refused, with the order
    left quoted, when the queue has no room for them. A final rendered already (the variant
    was bought before) is not rendered again: when all of them were, the order is delivered
    (or failed) at once."""
    with ctx.tenant(business_id) as tenant:
        count = len(tenant.orders.get(order_id).variants)
    ensure_room(ctx, business_id, count)
    with ctx.tenant(business_id) as tenant:
        order = tenant.orders.transition(order_id, OrderStatus.APPROVED)
        for v in order.variants:
            tenant.variants.set_status(v.id, VariantStatus.APPROVED)
            campaign = tenant.campaigns.spot(v.spot_id).campaign_id
            tenant.campaigns.set_status(campaign, CampaignStatus.ACTIVE)  # bought: it will air
        tenant.orders.transition(order_id, OrderStatus.RENDERING)
        variant_ids = [v.id for v in order.variants]
    for variant_id in variant_ids:
        renders.enqueue(ctx, business_id, variant_id, "final")
    return settle_order(ctx, business_id, order_id)


def retry(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """A failed order rendered again: each final that failed or missed QC, anew."""
    order = settle_order(ctx, business_id, order_id)  # its last final may have just failed
    failed = [d.variant_id for d in order.deliveries if not d.qc_passed]
    ensure_room(ctx, business_id, len(failed))
    with ctx.tenant(business_id) as tenant:
        tenant.orders.transition(order_id, OrderStatus.RENDERING)
    for variant_id in failed:
        renders.enqueue(ctx, business_id, variant_id, "final", again=True)
    return status(ctx, business_id, order_id)


def cancel(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    settle_order(ctx, business_id, order_id)  # a failed order may be cancelled
    with ctx.tenant(business_id) as tenant:
        tenant.orders.transition(order_id, OrderStatus.CANCELLED)
    return status(ctx, business_id, order_id)


def status(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """The order as it stands, with where each final is. A read: it changes nothing, so an
    order whose finals are all done reads "rendering" until it is settled (`settle`)."""
    with ctx.tenant(business_id) as tenant:
        order = tenant.orders.get(order_id)
        view = _view(order)
    deliveries = tuple(_delivery(ctx, business_id, v) for v in view.variant_ids)
    return replace(view, deliveries=deliveries)


def settle(ctx: AppContext, business_id: int, variant_id: int) -> None:
    """Settle the rendering orders this variant is in (its final just finished or was given
    up on)."""
    with ctx.tenant(business_id) as tenant:
        order_ids = tenant.orders.rendering_with(variant_id)
    for order_id in order_ids:
        settle_order(ctx, business_id, order_id)


def settle_order(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """A rendering order whose finals are all done becomes delivered (every final passed QC)
    or failed (a final failed QC or could not be rendered); any other order is left as it is.
    Settling twice changes nothing more."""
    seen = status(ctx, business_id, order_id)
    if seen.status != OrderStatus.RENDERING or not _all_done(seen.deliveries):
        return seen
    passed = all(d.qc_passed for d in seen.deliveries)
    with ctx.tenant(business_id) as tenant:
        order = tenant.orders.get(order_id)
        if order.status is OrderStatus.RENDERING:  # not settled meanwhile by another worker
            tenant.orders.transition(
                order_id, OrderStatus.DELIVERED if passed else OrderStatus.FAILED
            )
        return replace(_view(order), deliveries=seen.deliveries)


def settle_all(ctx: AppContext) -> int:
    """Settle every business's rendering orders whose finals are all done; how many were. For a
    worker to run when it starts (and now and then), so an order never stays rendering because
    no worker was there when its last final finished."""
    with ctx.db.session() as session:
        waiting = rendering(session)
    settled = 0
    for business_id, order_id in waiting:
        settled += settle_order(ctx, business_id, order_id).status != OrderStatus.RENDERING
    return settled


def _all_done(deliveries: tuple[Delivery, ...]) -> bool:
    return all(d.qc_passed is not None or d.error for d in deliveries)


def _delivery(ctx: AppContext, business_id: int, variant_id: int) -> Delivery:
    final = renders.latest(ctx, business_id, variant_id, "final")
    job = _final_job(ctx, variant_id)
    if job is not None and job.status is JobStatus.FAILED:
        return Delivery(variant_id, None, None, None, job.last_error or "the render failed")
    if final is None or (job is not None and job.status is not JobStatus.DONE):
        return Delivery(variant_id, None, None, None)
    return Delivery(variant_id, final.render_id, final.asset_id, final.qc_passed)


def _final_job(ctx: AppContext, variant_id: int) -> Job | None:
    return JobQueue(ctx.db).latest(JobKey(renders.KIND, variant_id, "final"))


def _view(order, deliveries: tuple[Delivery, ...] = ()) -> OrderView:
    return OrderView(
        order.id,
        order.status.value,
        order.quote_cents,
        order.currency,
        tuple(v.id for v in order.variants),
        deliveries,
    )
