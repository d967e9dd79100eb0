"""Orders: a quote for a set of approved variants, moved through an explicit state machine."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.errors import InvalidTransition, InvalidValue
from storage.models import (
    ORDER_TRANSITIONS,
    Asset,
    Order,
    OrderStatus,
    Variant,
    order_variants,
)
from storage.scope import Scope


def rendering(session: Session) -> list[tuple[int, int]]:
    """Every business's orders still rendering, as (business id, order id), oldest first: what
    a worker settles after a restart (an order whose last final finished, or was given up on,
    while no worker was there to settle it)."""
    query = (
        select(Order.business_id, Order.id)
        .where(Order.status == OrderStatus.RENDERING)
        .order_by(Order.id)
    )
    return [(business_id, order_id) for business_id, order_id in session.execute(query)]


class Orders:
    def __init__(self, scope: Scope):
        self._scope = scope

    def create(
        self,
        variant_ids: Sequence[int],
        *,
        shapes: Sequence[str] = ("16:9",),
        destinations: Sequence[str] = ("broadcast",),
    ) -> Order:
        """An order of these variants, each in every shape, for every destination (names the
        app has checked)."""
        if not variant_ids:
            raise InvalidValue("an order needs at least one variant")
        if not shapes or not destinations:
            raise InvalidValue("an order needs at least one shape and one destination")
        variants = [self._scope.get(Variant, v) for v in dict.fromkeys(variant_ids)]
        return self._scope.add(
            Order(
                variants=variants,
                shapes=list(dict.fromkeys(shapes)),
                destinations=list(dict.fromkeys(destinations)),
            )
        )

    def set_package(self, order_id: int, asset_id: int) -> Order:
        """The delivery zip, stored once (a second one for the same order is refused)."""
        order = self.get(order_id)
        asset = self._scope.get(Asset, asset_id)  # another business's asset is not found
        if order.package_asset_id not in (None, asset.id):
            raise InvalidValue("this order's package is stored already")
        order.package_asset_id = asset.id
        return order

    def get(self, order_id: int) -> Order:
        return self._scope.get(Order, order_id)

    def list(self) -> list[Order]:
        return self._scope.all(self._scope.select(Order).order_by(Order.id.desc()))

    def rendering_with(self, variant_id: int) -> list[int]:
        """The ids of this business's rendering orders that include the variant, in one query."""
        query = (
            self._scope.select(Order)
            .join(order_variants, order_variants.c.order_id == Order.id)
            .where(order_variants.c.variant_id == variant_id)
            .where(Order.status == OrderStatus.RENDERING)
            .with_only_columns(Order.id)
            .order_by(Order.id)
        )
        return list(self._scope.session.scalars(query))

    def newest_for_spot(self, spot_id: int) -> int | None:
        """The id of this business's newest order with a variant of the spot (None: none)."""
        query = (
            self._scope.select(Order)
            .join(order_variants, order_variants.c.order_id == Order.id)
            .join(Variant, Variant.id == order_variants.c.variant_id)
            .where(Variant.spot_id == spot_id)
            .with_only_columns(Order.id)
            .order_by(Order.id.desc())
            .limit(1)
        )
        return self._scope.session.scalar(query)

    def quote(self, order_id: int, amount_cents: int, currency: str = "USD") -> Order:
        if amount_cents < 0:
            raise InvalidValue("a quote cannot be negative")
        order = self.transition(order_id, OrderStatus.QUOTED)
        order.quote_cents = amount_cents
        order.currency = currency.upper()
        return order

    def transition(self, order_id: int, target: OrderStatus | str) -> Order:
        order = self.get(order_id)
        target = OrderStatus(target)
        allowed = ORDER_TRANSITIONS[order.status]
        if target not in allowed:
            raise InvalidTransition(
                "order", order.status.value, target.value, sorted(s.value for s in allowed)
            )
        order.status = target
        if target is OrderStatus.DRAFT:
            order.quote_cents = None  # back to editing: the old quote no longer holds
        return order
