"""Accounts: a business and its first user made together, passwords stored only as scrypt
hashes, sessions that sign in, out, and expire; failed sign-ins throttled per account and per
address, unknown emails exactly like known ones."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest

from app.services import UserError, accounts
from app.services.throttle import FIRST_WAIT_S, FREE, SignInThrottle, Throttled
from storage import accounts as stored
from storage.errors import InvalidValue
from storage.models import User, UserSession


def test_sign_up_sign_in_and_out(ctx):
    accounts.sign_up(ctx, "Harbor Coffee", " Owner@Harbor.test ", "espresso-2026")
    token = accounts.sign_in(ctx, "OWNER@harbor.test", "espresso-2026")
    account = accounts.account_for(ctx, token)
    assert (account.email, account.business_name) == ("owner@harbor.test", "Harbor Coffee")
    with ctx.db.session() as session:
        hashed = session.get(User, account.user_id).password_hash
    assert "espresso-2026" not in hashed and hashed.startswith("scrypt$")
    assert accounts.verify_password("espresso-2026", hashed)
    assert not accounts.verify_password("espresso-2027", hashed)

    second = accounts.account_for(ctx, accounts.sign_in(ctx, "owner@harbor.test", "espresso-2026"))
    assert second.business_id == account.business_id and second.session_id != account.session_id
    assert accounts.account_for(ctx, token + "x") is None
    assert accounts.sign_out(ctx, token) == account.session_id
    assert accounts.account_for(ctx, token) is None
    assert accounts.live_sessions(ctx) == {second.session_id}


def test_mistakes_are_refused_with_a_reason(ctx):
    accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", "espresso-2026")
    with pytest.raises(InvalidValue, match="already has an account"):
        accounts.sign_up(ctx, "Harbor Coffee 2", "owner@harbor.test", "espresso-2026")
    with pytest.raises(UserError, match="at least 10 characters"):
        accounts.sign_up(ctx, "Bakery", "baker@bakery.test", "short")
    with pytest.raises(UserError, match="email address"):
        accounts.sign_up(ctx, "Bakery", "not-an-email", "long-enough-password")
    with pytest.raises(InvalidValue, match="needs a name"):
        accounts.sign_up(ctx, "  ", "baker@bakery.test", "long-enough-password")
    with pytest.raises(UserError, match="do not show on screen"):
        accounts.sign_up(ctx, "\u200b\u200b", "baker@bakery.test", "long-enough-password")
    for email, password in (("owner@harbor.test", "wrong-password"), ("who@x.test", "x" * 12)):
        with pytest.raises(accounts.SignInFailed, match="Wrong email or password"):
            accounts.sign_in(ctx, email, password)


def test_an_expired_session_signs_no_one_in(ctx):
    accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", "espresso-2026")
    account = accounts.account_for(ctx, accounts.sign_in(ctx, "owner@harbor.test", "espresso-2026"))
    with ctx.db.session() as session:
        yesterday = datetime.now(UTC) - timedelta(days=1)
        stored.add_session(session, account.user_id, accounts._digest("old-token"), yesterday)
    assert accounts.account_for(ctx, "old-token") is None
    assert accounts.live_sessions(ctx) == {account.session_id}  # and the expired one is gone
    with ctx.db.session() as session:
        assert session.query(UserSession).count() == 1


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_guessing_waits_longer_after_each_failure_and_unknown_emails_alike(ctx):
    accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", "espresso-2026")
    clock = Clock()
    ctx.throttle = SignInThrottle(clock)
    for email in ("owner@harbor.test", "nobody@harbor.test"):  # a known and an unknown account
        for _ in range(FREE["pair"]):
            with pytest.raises(accounts.SignInFailed):
                accounts.sign_in(ctx, email, "wrong-password", "10.0.0.1")
        with pytest.raises(Throttled, match="try again in") as first:
            accounts.sign_in(ctx, email, "espresso-2026", "10.0.0.1")  # even the right one
        assert first.value.retry_after_s == FIRST_WAIT_S
        clock.now += FIRST_WAIT_S + 1
        with pytest.raises(accounts.SignInFailed):
            accounts.sign_in(ctx, email, "wrong-again-password", "10.0.0.1")
        with pytest.raises(Throttled) as second:
            accounts.sign_in(ctx, email, "wrong-password", "10.0.0.1")
        assert second.value.retry_after_s == 2 * FIRST_WAIT_S  # growing
    # The stranger's guesses held the stranger up, not the owner signing in from elsewhere.
    assert accounts.sign_in(ctx, "owner@harbor.test", "espresso-2026", "10.0.0.4")


def test_one_address_guessing_at_many_accounts_is_throttled(ctx):
    ctx.throttle = SignInThrottle(Clock())
    for i in range(FREE["address"]):
        with pytest.raises(accounts.SignInFailed):
            accounts.sign_in(ctx, f"user{i}@spray.test", "wrong-password", "10.9.9.9")
    with pytest.raises(Throttled):
        accounts.sign_in(ctx, "fresh@spray.test", "wrong-password", "10.9.9.9")
    with pytest.raises(accounts.SignInFailed):  # another address is not held up
        accounts.sign_in(ctx, "fresh@spray.test", "wrong-password", "10.9.9.8")


def test_one_account_guessed_at_from_many_addresses_is_throttled(ctx):
    ctx.throttle = SignInThrottle(Clock())
    for i in range(FREE["account"]):
        with pytest.raises(accounts.SignInFailed):
            accounts.sign_in(ctx, "owner@harbor.test", "wrong-password", f"10.1.{i}.1")
    with pytest.raises(Throttled):
        accounts.sign_in(ctx, "owner@harbor.test", "wrong-password", "10.2.0.1")


def test_guesses_sent_at_once_count_as_if_sent_in_turn():
    throttle = SignInThrottle(Clock())
    with ExitStack() as in_flight:
        for _ in range(FREE["pair"]):  # five tries being checked at the same moment
            in_flight.enter_context(throttle.attempt("owner@harbor.test", "10.0.0.1"))
        with pytest.raises(Throttled):  # a sixth waits for them
            in_flight.enter_context(throttle.attempt("owner@harbor.test", "10.0.0.1"))
    # Tries that ended without an answer (an error) count as neither.
    with throttle.attempt("owner@harbor.test", "10.0.0.1") as settle:
        settle(True)


def test_taken_emails_at_sign_up_count_against_the_address(ctx):
    ctx.throttle = SignInThrottle(Clock())
    accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", "espresso-2026", "10.3.3.3")
    for _ in range(FREE["address"]):
        with pytest.raises(InvalidValue, match="already has an account"):
            accounts.sign_up(ctx, "Probe", "owner@harbor.test", "espresso-2026", "10.3.3.3")
    with pytest.raises(Throttled):
        accounts.sign_up(ctx, "Probe", "someone@else.test", "espresso-2026", "10.3.3.3")
