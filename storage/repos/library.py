"""Geographies and audiences: the built-in library (shared) plus each business's own."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.errors import InvalidValue
from storage.models import Audience, Geography
from storage.scope import Scope


def install_shared(
    session: Session, geographies: list[dict[str, Any]], audiences: list[dict[str, Any]]
) -> None:
    """Make the built-in library (business_id NULL) equal these entries, matched by name:
    new ones are added and changed ones updated. Businesses' own rows are untouched."""
    for model, entries in ((Geography, geographies), (Audience, audiences)):
        rows = {
            row.name: row
            for row in session.scalars(select(model).where(model.business_id.is_(None)))
        }
        for entry in entries:
            row = rows.get(entry["name"]) or model(business_id=None)
            for name, value in entry.items():
                setattr(row, name, value)
            session.add(row)
    session.flush()


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
        raise InvalidValue("a name is required")
    return name.strip()
