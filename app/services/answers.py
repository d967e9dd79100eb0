"""Idempotent API calls: a call made again with the same idempotency key (an agent retrying
after a timeout, a burst of the same request) gets the first call's answer, and its work is
done once. Without a key every call is answered afresh."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.services.errors import UserError

if TYPE_CHECKING:
    from app.services.context import AppContext

MAX_KEY = 200


class StillAnswering(UserError):
    """The first call with this key has not finished: asking again shortly gets its answer."""


def answered(
    ctx: AppContext,
    business_id: int,
    endpoint: str,
    key: str | None,
    compute: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """`compute()`'s answer, kept under (business, endpoint, key); the kept one if this key
    was answered before. A call that fails keeps nothing, so its retry does the work."""
    key = (key or "").strip()
    if not key:
        return compute()
    if len(key) > MAX_KEY or not key.isprintable():
        raise UserError(f"An idempotency key is up to {MAX_KEY} printable characters.")
    with ctx.tenant(business_id) as tenant:
        earlier = tenant.answers.claim(endpoint, key)
        kept = None if earlier is None else earlier.response
    if earlier is not None:
        if kept is None:
            raise StillAnswering(
                "A call with this idempotency key is still being answered: ask again in a "
                "moment for its answer."
            )
        return kept
    try:
        response = compute()
    except BaseException:
        with ctx.tenant(business_id) as tenant:
            tenant.answers.release(endpoint, key)
        raise
    with ctx.tenant(business_id) as tenant:
        tenant.answers.keep(endpoint, key, response)
    return response
