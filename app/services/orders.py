"""Approve and purchase: a quote for chosen variants in chosen shapes for chosen destinations,
then the finals, QC'd against every destination and delivered as one package.

The order moves through the state machine in `storage.models.ORDER_TRANSITIONS`:
draft -> quoted -> approved -> rendering -> delivered (or failed, then rendering again).
Approving renders a final of each variant in each shape bought (16:9, 9:16, 1:1) from the same
stored parameters and assets as its preview. A destination applies to the shapes whose master
its spec's frame size is (`templates.qc_specs.SPECS`: a CTV destination takes the 16:9 master,
social-vertical the 9:16, social-square the 1:1); each master is checked against every one that
applies. An order is delivered only when every master passes all of them, and then its package
(`delivery.build`: the zip of masters, QC reports and spec sheet) is built once and stored. No
payment processor is involved: approving a quote is the purchase.

Reading an order (`status`) never writes. An order is settled (rendering -> delivered or
failed) where its work finishes: by the worker once a final is rendered or given up on
(`settle`), by `approve` when every final it asks for was rendered already, and by
`settle_all` for the orders whose last final finished while no worker was there to settle
them (a server killed in between, a final the queue gave up on after its workers died).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.services import delivery, renders
from app.services.errors import UserError
from storage import (
    CampaignStatus,
    Job,
    JobQueue,
    JobStatus,
    OrderStatus,
    VariantStatus,
    rendering,
)
from templates import qc
from templates.qc_specs import MASTERS, SPECS
from templates.spec import SHAPES

if TYPE_CHECKING:
    from app.services.context import AppContext

SPOT_PRICE_CENTS = {15: 4900, 30: 7900, 60: 12900}  # the first variant of a spot, by length
EXTRA_VARIANT_CENTS = 900  # each further variant of the same spot
# Each variant in each further shape: the same spot laid out again for another screen, not a
# new spot, so a small price (a 16:9 + 9:16 + 1:1 order of one 15 s variant: 49 + 2 x 15).
EXTRA_SHAPE_CENTS = 1500
SEEN = (VariantStatus.READY, VariantStatus.APPROVED)  # what can be ordered
# What an order can be bought for: every destination spec but the preview, never delivered.
DESTINATIONS = tuple(name for name in SPECS if name != "preview")
LABELS = {name: SPECS[name].name for name in DESTINATIONS}  # as the owner reads them


@dataclass(frozen=True)
class Delivery:
    """One master: a variant in one shape, with its verdict per destination that applies."""

    variant_id: int
    render_id: int | None
    asset_id: int | None
    qc_passed: bool | None  # None: not rendered, or not yet checked against every destination
    error: str | None = None
    shape: str = "16:9"
    verdicts: tuple[tuple[str, bool | None], ...] = ()  # (destination, passed; None: unchecked)


@dataclass(frozen=True)
class OrderView:
    id: int
    status: str
    quote_cents: int | None
    currency: str
    variant_ids: tuple[int, ...]
    deliveries: tuple[Delivery, ...] = ()
    shapes: tuple[str, ...] = ("16:9",)
    destinations: tuple[str, ...] = ("broadcast",)
    package_asset_id: int | None = None

    @property
    def quote_text(self) -> str:
        if self.quote_cents is None:
            return "no quote yet"
        return f"{self.currency} {self.quote_cents / 100:,.2f}"


def price_cents(durations_by_spot: dict[int, tuple[int, int]], shapes: int = 1) -> int:
    """{spot: (duration_s, variants)} -> the price: a spot's first variant at the price of its
    length, each further one at EXTRA_VARIANT_CENTS, and every variant in each shape beyond
    the first at EXTRA_SHAPE_CENTS."""
    total = 0
    for duration, count in durations_by_spot.values():
        if count:
            base = SPOT_PRICE_CENTS.get(duration, SPOT_PRICE_CENTS[60])
            total += base + (count - 1) * EXTRA_VARIANT_CENTS
            total += count * (shapes - 1) * EXTRA_SHAPE_CENTS
    return total


def applies(destination: str, shape: str) -> bool:
    """Whether a destination takes the master of this shape: its spec's frame size is it."""
    spec = SPECS[destination]
    return (spec.width, spec.height) == SHAPES[shape]


def check_choice(shapes, destinations) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The shapes and destinations of an order, each known, each destination served by one
    of the shapes; a sentence saying what is wrong otherwise."""
    shapes, destinations = tuple(dict.fromkeys(shapes)), tuple(dict.fromkeys(destinations))
    if not shapes:
        raise UserError("Choose at least one shape: 16:9, 9:16 or 1:1.")
    if not destinations:
        raise UserError(f"Choose at least one destination: {', '.join(DESTINATIONS)}.")
    for shape in shapes:
        if shape not in SHAPES:
            raise UserError(f"There is no shape {shape!r}; choose from {', '.join(SHAPES)}.")
    for name in destinations:
        if name not in DESTINATIONS:
            raise UserError(
                f"There is no destination {name!r}; choose from {', '.join(DESTINATIONS)}."
            )
        if not any(applies(name, shape) for shape in shapes):
            needs = next(s for s in SHAPES if applies(name, s))
            raise UserError(
                f"{SPECS[name].name} takes a {needs} master, and this order has none: "
                f"add the {needs} shape, or leave {name} out."
            )
    for shape in shapes:  # a master no destination takes would be sold unchecked
        if not any(applies(name, shape) for name in destinations):
            takers = [n for n in DESTINATIONS if applies(n, shape)]
            raise UserError(
                f"No destination chosen takes a {shape} master: add "
                f"{' or '.join(LABELS[n] for n in takers)}, or leave {shape} out."
            )
    return shapes, destinations


def quote(
    ctx: AppContext,
    business_id: int,
    variant_ids: list[int],
    *,
    shapes=("16:9",),
    destinations=("broadcast",),
) -> OrderView:
    """A quoted order for ready variants (each must have been seen: ready or approved), each
    in every shape, for every destination."""
    shapes, destinations = check_choice(shapes, destinations)
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
        order = tenant.orders.create(
            [v.id for v in chosen], shapes=shapes, destinations=destinations
        )
        tenant.orders.quote(order.id, price_cents(counts, len(shapes)))
        return _view(order)


def approve(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """Approve the quote (the purchase) and start rendering the finals. Refused, with the order
    left quoted, when the queue has no room for them. A final rendered already (the variant
    was bought before) is not rendered again: when all of them were, the order is delivered
    (or failed) at once."""
    with ctx.tenant(business_id) as tenant:
        order = tenant.orders.get(order_id)
        masters = [(v.id, shape) for v in order.variants for shape in order.shapes]
    renders.room_for(ctx, business_id, masters, "final")
    with ctx.tenant(business_id) as tenant:
        order = tenant.orders.transition(order_id, OrderStatus.APPROVED)
        for v in order.variants:
            tenant.variants.set_status(v.id, VariantStatus.APPROVED)
            campaign = tenant.campaigns.spot(v.spot_id).campaign_id
            tenant.campaigns.set_status(campaign, CampaignStatus.ACTIVE)  # bought: it will air
        tenant.orders.transition(order_id, OrderStatus.RENDERING)
    renders.enqueue_all(ctx, business_id, masters, "final")
    return settle_order(ctx, business_id, order_id)


def retry(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """A failed order rendered again: each final that failed or missed QC, anew."""
    order = settle_order(ctx, business_id, order_id)  # its last final may have just failed
    failed = [(d.variant_id, d.shape) for d in order.deliveries if not d.qc_passed]
    renders.room_for(ctx, business_id, failed, "final", again=True)
    with ctx.tenant(business_id) as tenant:
        tenant.orders.transition(order_id, OrderStatus.RENDERING)
    renders.enqueue_all(ctx, business_id, failed, "final", again=True)
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
    deliveries = tuple(
        _delivery(ctx, business_id, v, shape, view.destinations)
        for v in view.variant_ids
        for shape in view.shapes
    )
    return replace(view, deliveries=deliveries)


def newest_for_spot(ctx: AppContext, business_id: int, spot_id: int) -> OrderView | None:
    """The business's newest order of the spot's variants, as it stands: what the page shows
    again when the owner comes back to the spot."""
    with ctx.tenant(business_id) as tenant:
        order_id = tenant.orders.newest_for_spot(spot_id)
    return None if order_id is None else status(ctx, business_id, order_id)


def settle(ctx: AppContext, business_id: int, variant_id: int) -> None:
    """Settle the rendering orders this variant is in (its final just finished or was given
    up on)."""
    with ctx.tenant(business_id) as tenant:
        order_ids = tenant.orders.rendering_with(variant_id)
    for order_id in order_ids:
        settle_order(ctx, business_id, order_id)


def settle_order(ctx: AppContext, business_id: int, order_id: int) -> OrderView:
    """A rendering order whose finals are all done becomes delivered (every master passed
    every destination that applies; its package is built and stored) or failed (a master
    failed a check or could not be rendered); any other order is left as it is. A master not
    yet checked against a destination is checked here first. Settling twice changes nothing
    more."""
    seen = status(ctx, business_id, order_id)
    if seen.status != OrderStatus.RENDERING or not _all_rendered(seen.deliveries):
        return seen
    if _check_destinations(ctx, business_id, seen.deliveries):
        seen = status(ctx, business_id, order_id)
    passed = all(d.qc_passed for d in seen.deliveries)
    package = delivery.build(ctx, business_id, seen) if passed else None
    with ctx.tenant(business_id) as tenant:
        order = tenant.orders.get(order_id)
        if order.status is OrderStatus.RENDERING:  # not settled meanwhile by another worker
            if package is not None:
                tenant.orders.set_package(order_id, package)
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


def _all_rendered(deliveries: tuple[Delivery, ...]) -> bool:
    return all(d.render_id is not None or d.error for d in deliveries)


def _check_destinations(ctx: AppContext, business_id: int, deliveries) -> bool:
    """Check each rendered master that passed its own QC against the destinations it was not
    yet checked for (a decode and a loudness pass each); whether any was."""
    checked = False
    for d in deliveries:
        if d.render_id is None or d.qc_passed is False:
            continue
        for destination in (name for name, verdict in d.verdicts if verdict is None):
            final = renders.latest(ctx, business_id, d.variant_id, "final", shape=d.shape)
            report = qc.check(final.path, SPECS[destination]).to_dict()
            with ctx.tenant(business_id) as tenant:
                tenant.variants.add_destination_report(d.render_id, destination, report)
            checked = True
    return checked


def verdicts(report: dict, shape: str, destinations) -> tuple[tuple[str, bool | None], ...]:
    """A master's verdict per destination that applies to its shape: the check it had when it
    was made stands for the destination whose spec that was; any other, as checked since."""
    others = report.get("destinations", {})
    shown = []
    for name in destinations:
        if not applies(name, shape):
            continue
        if SPECS[name] is MASTERS[shape]:
            shown.append((name, bool(report.get("passed"))))
        else:
            shown.append((name, others[name]["passed"] if name in others else None))
    return tuple(shown)


def _delivery(
    ctx: AppContext, business_id: int, variant_id: int, shape: str, destinations
) -> Delivery:
    final = renders.latest(ctx, business_id, variant_id, "final", shape=shape)
    job = _final_job(ctx, variant_id, shape)
    if job is not None and job.status is JobStatus.FAILED:
        error = job.last_error or "the render failed"
        return Delivery(variant_id, None, None, None, error, shape)
    if final is None or (job is not None and job.status is not JobStatus.DONE):
        return Delivery(variant_id, None, None, None, None, shape)
    shown = verdicts(final.qc_report, shape, destinations)
    passed: bool | None = final.qc_passed and all(v is not False for _, v in shown)
    if passed and any(v is None for _, v in shown):
        passed = None  # not yet checked against every destination
    return Delivery(variant_id, final.render_id, final.asset_id, passed, None, shape, shown)


def _final_job(ctx: AppContext, variant_id: int, shape: str) -> Job | None:
    return JobQueue(ctx.db).latest(renders.job_key(variant_id, "final", shape))


def _view(order, deliveries: tuple[Delivery, ...] = ()) -> OrderView:
    return OrderView(
        order.id,
        order.status.value,
        order.quote_cents,
        order.currency,
        tuple(v.id for v in order.variants),
        deliveries,
        tuple(order.shapes),
        tuple(order.destinations),
        order.package_asset_id,
    )
