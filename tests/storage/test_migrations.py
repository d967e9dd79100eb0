"""Migrations go up and down from an empty database, and match the models exactly."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from storage import Database, migrate
from storage.models import Base


def _tables(db: Database) -> set[str]:
    return set(inspect(db.engine).get_table_names()) - {"alembic_version"}


def test_up_down_up_from_empty(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    assert migrate.current(db.engine) is None and _tables(db) == set()
    db.upgrade()
    assert migrate.current(db.engine) == migrate.head()
    assert _tables(db) == set(Base.metadata.tables)
    migrate.downgrade(db.engine, "base")
    assert migrate.current(db.engine) is None and _tables(db) == set()
    db.upgrade()
    assert _tables(db) == set(Base.metadata.tables)


def test_models_and_migrations_agree(tmp_path):
    """A model change without its migration fails here, not in a user's database."""
    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    db.upgrade()
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_sqlite_runs_with_wal_and_foreign_keys(tmp_path):
    db = Database(f"sqlite:///{tmp_path / 'm.db'}")
    with db.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
