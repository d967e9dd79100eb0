"""Migrations go up and down from an empty database, and match the models exactly, on SQLite
and on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from storage import Database, migrate
from storage.models import Base


def _tables(db: Database) -> set[str]:
    return set(inspect(db.engine).get_table_names()) - {"alembic_version"}


def _database(tmp_path, database_url: str | None) -> Database:
    return Database(database_url or f"sqlite:///{tmp_path / 'm.db'}")


@pytest.mark.backends
def test_up_down_up_from_empty(tmp_path, database_url):
    db = _database(tmp_path, database_url)
    assert migrate.current(db.engine) is None and _tables(db) == set()
    db.upgrade()
    assert migrate.current(db.engine) == migrate.head()
    assert _tables(db) == set(Base.metadata.tables)
    migrate.downgrade(db.engine, "base")
    assert migrate.current(db.engine) is None and _tables(db) == set()
    db.upgrade()
    assert _tables(db) == set(Base.metadata.tables)


@pytest.mark.backends
def test_models_and_migrations_agree(tmp_path, database_url):
    """A model change without its migration fails here, not in a user's database."""
    db = _database(tmp_path, database_url)
    db.upgrade()
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


@pytest.mark.backends
def test_scenes_and_brand_kits_go_and_come_back_empty_with_the_data_kept(tmp_path, database_url):
    db = _database(tmp_path, database_url)
    migrate.upgrade(db.engine, "0007")
    assert {"scenes", "brand_kits"} <= _tables(db)
    with db.engine.begin() as connection:
        connection.execute(
            text("INSERT INTO businesses VALUES (1, 'Harbor', :t, :t)"),
            {"t": datetime(2026, 12, 1, 10, tzinfo=UTC)},
        )
    migrate.upgrade(db.engine, "0009")  # 0010 makes brand_kits again, a new one
    assert not {"scenes", "brand_kits"} & _tables(db)
    migrate.downgrade(db.engine, "0007")
    assert {"scenes", "brand_kits"} <= _tables(db)
    db.upgrade()
    with db.engine.connect() as connection:
        assert connection.execute(text("SELECT name FROM businesses")).scalars().all() == ["Harbor"]
    db.dispose()


def test_sqlite_runs_with_wal_and_foreign_keys(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
