"""The one place where a query is bound to a business."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import Select, event, or_, select
from sqlalchemy.orm import Session

from storage.errors import NotFound, StorageError

M = TypeVar("M")


class Scope:
    def __init__(self, session: Session, business_id: int):
        self.session = session
        self.business_id = business_id
        session.info["tenant"] = business_id

    def select(self, model: type[M], *, shared: bool = False) -> Select[tuple[M]]:
        """Rows of this business; with `shared`, also the built-in rows (business_id NULL)."""
        column = model.business_id  # type: ignore[attr-defined]
        condition = (
            or_(column == self.business_id, column.is_(None))
            if shared
            else (column == self.business_id)
        )
        return select(model).where(condition)

    def get(self, model: type[M], ident: int, *, shared: bool = False) -> M:
        """One row by id; another business's row is reported exactly like a missing one."""
        row = self.session.scalars(
            self.select(model, shared=shared).where(model.id == ident)  # type: ignore[attr-defined]
        ).one_or_none()
        if row is None:
            raise NotFound(model.__name__.lower(), ident)
        return row

    def all(self, query: Select[tuple[M]]) -> list[M]:
        return list(self.session.scalars(query))

    def add(self, row: M, **columns: Any) -> M:
        for name, value in columns.items():
            setattr(row, name, value)
        row.business_id = self.business_id  # type: ignore[attr-defined]
        self.session.add(row)
        self.session.flush()  # assigns the id and surfaces constraint errors here
        return row


@event.listens_for(Session, "before_flush")
def _writes_stay_inside_the_tenant(session: Session, flush_context, instances) -> None:
    """Reads are scoped by query; this scopes writes. A session that opened a tenant may not
    change rows of another business, nor the shared built-in library (business_id NULL)."""
    tenant = session.info.get("tenant")
    if tenant is None:
        return
    for row in (*session.new, *session.dirty, *session.deleted):
        owner = getattr(row, "business_id", tenant)
        if owner != tenant:
            what = "the built-in library" if owner is None else "another business"
            raise StorageError(f"this change would alter {what}'s {type(row).__name__.lower()}")
