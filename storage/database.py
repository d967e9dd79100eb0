"""Engine and sessions. SQLite gets WAL and enforced foreign keys; other URLs pass through."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")  # bulk workers and the UI write concurrently
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for `url`. Every backend hides SQL parameters (emails, token hashes) from the
    errors it raises and the statements it logs: `hide_parameters=True`."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, hide_parameters=True)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False}, hide_parameters=True)
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


class Database:
    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A unit of work: committed when the block ends, rolled back if it raises."""
        with self._sessions() as session, session.begin():
            yield session

    def upgrade(self, revision: str = "head") -> None:
        from storage.migrate import upgrade

        upgrade(self.engine, revision)

    def dispose(self) -> None:
        self.engine.dispose()
