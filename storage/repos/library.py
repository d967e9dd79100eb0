"""Geographies and audiences: the built-in library (shared) plus each business's own."""

from __future__ import annotations

from typing import Any

from storage.models import Audience, Geography
from storage.scope import Scope


class Library:
    def __init__(self, scope: Scope):
        self._scope = scope

    def geographies(self) -> list[Geography]:
        return self._scope.all(self._scope.select(Geography, shared=True).order_by(Geography.name))

    def geography(self, geography_id: int) -> Geography:
        return self._scope.get(Geography, geography_id, shared=True)

    def add_geography(self, name: str, **descriptors: Any) -> Geography:
        return self._scope.add(Geography(name=_name(name), **descriptors))

    def audiences(self) -> list[Audience]:
        return self._scope.all(self._scope.select(Audience, shared=True).order_by(Audience.name))

    def audience(self, audience_id: int) -> Audience:
        return self._scope.get(Audience, audience_id, shared=True)

    def add_audience(self, name: str, **descriptors: Any) -> Audience:
        return self._scope.add(Audience(name=_name(name), **descriptors))


def _name(name: str) -> str:
    if not name.strip():
        raise ValueError("a name is required")
    return name.strip()
