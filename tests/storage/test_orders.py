"""The order state machine: the happy path, and clear refusals for every other move."""

from __future__ import annotations

import pytest

from storage import InvalidTransition, InvalidValue
from storage.models import ORDER_TRANSITIONS, OrderStatus
from tests.storage.test_crud import PARAMS

pytestmark = pytest.mark.backends  # on SQLite and on PostgreSQL


@pytest.fixture
def order_id(ctx, business_ids):
    with ctx.tenant(business_ids[0]) as t:
        campaign = t.campaigns.create("Orders")
        spot = t.campaigns.create_spot(
            campaign.id, template_id="product-hero", template_version="1", duration_s=30
        )
        return t.orders.create([t.variants.create(spot.id, PARAMS).id]).id


def test_from_draft_to_delivered(ctx, business_ids, order_id):
    with ctx.tenant(business_ids[0]) as t:
        t.orders.quote(order_id, 29_900)
        for status in ("approved", "rendering", "failed", "rendering", "delivered"):
            t.orders.transition(order_id, status)
    with ctx.tenant(business_ids[0]) as t:
        order = t.orders.get(order_id)
        assert (order.status, order.quote_cents) == (OrderStatus.DELIVERED, 29_900)


def test_approval_needs_a_quote(ctx, business_ids, order_id):
    with ctx.tenant(business_ids[0]) as t:
        with pytest.raises(InvalidTransition) as error:
            t.orders.transition(order_id, "approved")
        assert str(error.value) == (
            "order cannot go from 'draft' to 'approved'; allowed from 'draft': cancelled, quoted"
        )
        t.orders.quote(order_id, 10_000)
        t.orders.transition(order_id, "draft")  # reopened for changes: the quote is void
        assert t.orders.get(order_id).quote_cents is None
        with pytest.raises(InvalidTransition):
            t.orders.transition(order_id, "approved")


@pytest.mark.parametrize("final", [OrderStatus.DELIVERED, OrderStatus.CANCELLED])
def test_final_states_allow_nothing(ctx, business_ids, order_id, final):
    with ctx.tenant(business_ids[0]) as t:
        t.orders.quote(order_id, 100)
        paths = {
            OrderStatus.DELIVERED: ["approved", "rendering", "delivered"],
            OrderStatus.CANCELLED: ["cancelled"],
        }
        for status in paths[final]:
            t.orders.transition(order_id, status)
        for target in OrderStatus:
            with pytest.raises(InvalidTransition, match="none \\(final state\\)"):
                t.orders.transition(order_id, target)


def test_every_state_is_reachable_and_can_end():
    """No state of the machine is unreachable from draft or a dead end short of a final state."""
    reachable, frontier = {OrderStatus.DRAFT}, [OrderStatus.DRAFT]
    while frontier:
        for nxt in ORDER_TRANSITIONS[frontier.pop()] - reachable:
            reachable.add(nxt)
            frontier.append(nxt)
    assert reachable == set(OrderStatus)
    finals = {s for s, nxt in ORDER_TRANSITIONS.items() if not nxt}
    assert finals == {OrderStatus.DELIVERED, OrderStatus.CANCELLED}


def test_unknown_status_and_negative_quote(ctx, business_ids, order_id):
    with ctx.tenant(business_ids[0]) as t:
        with pytest.raises(ValueError, match="'paid' is not a valid OrderStatus"):
            t.orders.transition(order_id, "paid")
        with pytest.raises(InvalidValue, match="cannot be negative"):
            t.orders.quote(order_id, -1)


def test_rendering_orders_are_found_by_variant_and_across_businesses(ctx, business_ids):
    from storage.repos.orders import rendering

    a, b = business_ids
    found = {}
    for business in (a, b):
        with ctx.tenant(business) as t:
            campaign = t.campaigns.create("Orders")
            spot = t.campaigns.create_spot(
                campaign.id, template_id="product-hero", template_version="1", duration_s=15
            )
            shared, other = (t.variants.create(spot.id, PARAMS).id for _ in range(2))
            orders = [t.orders.create([shared]), t.orders.create([shared, other])]
            orders.append(t.orders.create([other]))
            for order in orders:
                t.orders.quote(order.id, 100)
                t.orders.transition(order.id, "approved")
                t.orders.transition(order.id, "rendering")
            t.orders.transition(orders[0].id, "delivered")  # settled already
            found[business] = shared, [o.id for o in orders]
    with ctx.tenant(a) as t:
        shared, ids = found[a]
        assert t.orders.rendering_with(shared) == [ids[1]]
        assert t.orders.rendering_with(found[b][0]) == []  # another business's variant
    with ctx.db.session() as session:
        assert rendering(session) == [(a, ids[1]), (a, ids[2]), *((b, i) for i in found[b][1][1:])]
