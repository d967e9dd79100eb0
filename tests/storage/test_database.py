"""The engine: SQL parameters (emails, token hashes) never reach an error message or a log."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

import storage.database
from storage.database import Database, make_engine
from storage.models import Business, User, UserSession

SECRET_HASH = "5e3c" * 16
EMAIL = "owner@harbor-bakery.test"


def test_integrity_error_hides_the_parameters(tmp_path, caplog):
    db = Database(f"sqlite:///{tmp_path / 'db.sqlite'}")
    db.upgrade()
    with db.session() as session:
        business = Business(name="Harbor Bakery")
        session.add(business)
        session.flush()
        user = User(business_id=business.id, email=EMAIL, password_hash="scrypt$x")
        session.add(user)
        session.flush()
        session.add(UserSession(user_id=user.id, token_hash=SECRET_HASH, expires_at=_soon()))
    caplog.set_level(logging.INFO, logger="sqlalchemy.engine")
    db.engine.echo = True  # statements are logged too: they must not carry the values either
    for duplicate in (
        UserSession(user_id=user.id, token_hash=SECRET_HASH, expires_at=_soon()),
        User(business_id=business.id, email=EMAIL, password_hash="scrypt$y"),
    ):
        with pytest.raises(IntegrityError) as refused, db.session() as session:
            session.add(duplicate)
        assert "UNIQUE" in str(refused.value)  # the error still says what went wrong
        assert SECRET_HASH not in str(refused.value) and EMAIL not in str(refused.value)
        assert "parameters hidden" in str(refused.value)
    assert "INSERT INTO" in caplog.text
    assert SECRET_HASH not in caplog.text and EMAIL not in caplog.text
    db.dispose()


def test_every_backend_hides_parameters(monkeypatch):
    made = []
    real = storage.database.create_engine

    def recording(url, **kw):  # no PostgreSQL driver needed: record, then make an SQLite one
        made.append(kw)
        return real("sqlite://")

    monkeypatch.setattr(storage.database, "create_engine", recording)
    make_engine("postgresql+psycopg://spotforge@db.internal/spotforge")
    make_engine("sqlite:///:memory:")
    assert [kw.get("hide_parameters") for kw in made] == [True, True]


def _soon() -> datetime:
    return datetime.now(UTC) + timedelta(hours=1)
