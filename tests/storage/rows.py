"""Every row of every table, to show that something changed nothing."""

from __future__ import annotations

from sqlalchemy import select

from storage import Database
from storage.models import Base


def all_rows(db: Database) -> dict[str, list[tuple]]:
    """Each table's rows, all columns (updated_at included), in primary-key order."""
    with db.engine.connect() as connection:
        return {
            table.name: [
                tuple(row)
                for row in connection.execute(select(table).order_by(*table.primary_key.columns))
            ]
            for table in Base.metadata.sorted_tables
        }
