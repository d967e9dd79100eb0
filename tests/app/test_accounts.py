"""Accounts: a business and its first user made together, passwords stored only as scrypt
hashes, sessions that sign in, out, and expire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.services import accounts
from storage import accounts as stored
from storage.models import User, UserSession


def test_sign_up_sign_in_and_out(ctx):
    account = accounts.sign_up(ctx, "Harbor Coffee", " Owner@Harbor.test ", "espresso-2026")
    assert (account.email, account.business_name) == ("owner@harbor.test", "Harbor Coffee")
    with ctx.db.session() as session:
        hashed = session.get(User, account.user_id).password_hash
    assert "espresso-2026" not in hashed and hashed.startswith("scrypt$")
    assert accounts.verify_password("espresso-2026", hashed)
    assert not accounts.verify_password("espresso-2027", hashed)

    token = accounts.sign_in(ctx, "OWNER@harbor.test", "espresso-2026")
    assert accounts.account_for(ctx, token) == account
    assert accounts.account_for(ctx, token + "x") is None
    accounts.sign_out(ctx, token)
    assert accounts.account_for(ctx, token) is None


def test_mistakes_are_refused_with_a_reason(ctx):
    accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", "espresso-2026")
    with pytest.raises(ValueError, match="already has an account"):
        accounts.sign_up(ctx, "Harbor Coffee 2", "owner@harbor.test", "espresso-2026")
    with pytest.raises(ValueError, match="at least 10 characters"):
        accounts.sign_up(ctx, "Bakery", "baker@bakery.test", "short")
    with pytest.raises(ValueError, match="email address"):
        accounts.sign_up(ctx, "Bakery", "not-an-email", "long-enough-password")
    with pytest.raises(ValueError, match="needs a name"):
        accounts.sign_up(ctx, "  ", "baker@bakery.test", "long-enough-password")
    for email, password in (("owner@harbor.test", "wrong-password"), ("who@x.test", "x" * 12)):
        with pytest.raises(accounts.SignInFailed, match="wrong email or password"):
            accounts.sign_in(ctx, email, password)


def test_an_expired_session_signs_no_one_in(ctx):
    account = accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", "espresso-2026")
    with ctx.db.session() as session:
        yesterday = datetime.now(UTC) - timedelta(days=1)
        stored.add_session(session, account.user_id, accounts._digest("old-token"), yesterday)
    assert accounts.account_for(ctx, "old-token") is None
    accounts.sign_in(ctx, "owner@harbor.test", "espresso-2026")  # signing in sweeps it away
    with ctx.db.session() as session:
        assert session.query(UserSession).count() == 1
