"""A business's cache of engine results, keyed by a hash of everything that determines them."""

from __future__ import annotations

import statistics
from collections.abc import Collection
from typing import Any

from sqlalchemy.exc import IntegrityError

from storage.models import Asset, Generation
from storage.scope import Scope


class Generations:
    def __init__(self, scope: Scope):
        self._scope = scope

    def get(self, key: str) -> Generation | None:
        return self._scope.session.scalars(
            self._scope.select(Generation).where(Generation.key == key)
        ).one_or_none()

    def existing(self, keys: Collection[str]) -> set[str]:
        """Which of these keys have a cached result, in a query per thousand keys (not one a
        key): what planning a large matrix asks."""
        wanted = sorted(set(keys))
        found: set[str] = set()
        for i in range(0, len(wanted), 1000):
            query = (
                self._scope.select(Generation)
                .where(Generation.key.in_(wanted[i : i + 1000]))
                .with_only_columns(Generation.key)
            )
            found.update(self._scope.session.scalars(query))
        return found

    def add(
        self,
        key: str,
        asset: Asset,
        params: dict[str, Any],
        seconds: float,
        *,
        replace: bool = False,
    ) -> Generation:
        """Record a result; if the same key was recorded meanwhile, that record is kept, unless
        `replace` (the result was made anew on purpose: it becomes the record)."""
        if replace and (existing := self.get(key)) is not None:
            existing.asset_id, existing.params, existing.seconds = asset.id, params, seconds
            self._scope.session.flush()
            return existing
        try:
            with self._scope.session.begin_nested():
                row = Generation(key=key, asset_id=asset.id, params=params, seconds=seconds)
                return self._scope.add(row)
        except IntegrityError:
            existing = self.get(key)
            if existing is None:
                raise
            return existing

    def typical_seconds(self, model_id: str) -> float | None:
        """Median cost of this business's recent results from one model, for estimates."""
        rows = self._scope.all(
            self._scope.select(Generation).order_by(Generation.id.desc()).limit(200)
        )
        costs = [r.seconds for r in rows if r.params.get("model_id") == model_id]
        return statistics.median(costs) if costs else None
