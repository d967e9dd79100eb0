"""Results made once per business and found again by a hash of everything that determines them
(backgrounds, cut-outs). A run counts what it asked for and what was already there."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.services.context import AppContext


@dataclass
class Reuse:
    asked: int = 0
    reused: int = 0

    @property
    def reuse_ratio(self) -> float:
        return self.reused / self.asked if self.asked else 0.0

    def to_dict(self) -> dict[str, float]:
        return {"asked": self.asked, "reused": self.reused, "ratio": round(self.reuse_ratio, 3)}

    def __add__(self, other: Reuse) -> Reuse:  # what several workers reused in all
        return Reuse(self.asked + other.asked, self.reused + other.reused)


@dataclass(frozen=True)
class Stored:
    asset_id: int
    key: str
    reused: bool
    params: dict[str, Any]


def key_of(determined: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(determined, sort_keys=True).encode()).hexdigest()


def is_stored(ctx: AppContext, business_id: int, key: str) -> bool:
    with ctx.tenant(business_id) as tenant:
        return tenant.generations.get(key) is not None


def stored(
    ctx: AppContext,
    business_id: int,
    key: str,
    name: str,
    make: Callable[[], tuple[bytes, dict[str, Any]]],
    *,
    reuse: bool = True,
    tally: Reuse | None = None,
) -> Stored:
    """The result under `key`: the stored one, or `make()`'s bytes and params stored as asset
    `name`. `reuse=False` makes it regardless (to measure what reuse saves, or to replace a
    damaged copy) and records what it made as the result under `key`."""
    with ctx.tenant(business_id) as tenant:
        cached = tenant.generations.get(key) if reuse else None
        result = None if cached is None else Stored(cached.asset_id, key, True, cached.params)
    if result is None:
        began = time.perf_counter()
        data, params = make()
        with ctx.tenant(business_id) as tenant:
            asset = tenant.assets.add(data, name)
            row = tenant.generations.add(
                key, asset, params, time.perf_counter() - began, replace=not reuse
            )
            result = Stored(row.asset_id, key, False, row.params)
    if tally is not None:
        tally.asked += 1
        tally.reused += result.reused
    return result
