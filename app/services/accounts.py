"""Sign-up, sign-in and sessions. A user belongs to one business; every request the web app
serves is resolved to that business, so it reads only that business's data.

Passwords are hashed with scrypt (memory-hard, in the standard library) and a per-user salt;
session tokens are random and only their SHA-256 is stored, so a leaked database signs no one in.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.services.context import AppContext
from app.services.errors import UserError
from app.services.text_rules import clean
from storage import Business, InvalidValue, User, accounts, create_business

SESSION_DAYS = 14
MIN_PASSWORD = 10
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
SCRYPT = {"n": 2**14, "r": 8, "p": 1}  # ~16 MiB and ~50 ms a check


class SignInFailed(UserError):
    """Wrong email or password (which of the two is not said)."""


@dataclass(frozen=True)
class Account:
    """A signed-in user, in one session (a browser, or a script's token)."""

    user_id: int
    email: str
    business_id: int
    business_name: str
    session_id: int


def sign_up(
    ctx: AppContext, business_name: str, email: str, password: str, address: str | None = None
) -> None:
    """A new business with its first user. An email already taken counts against the address
    like a failed sign-in, so sign-up cannot list accounts faster than sign-in can."""
    business_name = clean("business_name", business_name)
    email = email.strip().lower()
    if not EMAIL.match(email) or len(email) > 254:
        raise UserError("Enter an email address like owner@example.com.")
    if len(password) < MIN_PASSWORD:
        raise UserError(f"A password needs at least {MIN_PASSWORD} characters.")
    with ctx.throttle.attempt(None, address) as settle:
        try:
            with ctx.db.session() as session:
                business = create_business(session, business_name)
                accounts.create_user(session, business.id, email, hash_password(password))
        except InvalidValue:
            settle(False)
            raise
        settle(True)


def sign_in(ctx: AppContext, email: str, password: str, address: str | None = None) -> str:
    """A new session token for the user; raises SignInFailed, or Throttled after too many
    failures for this email or from this client address."""
    with ctx.throttle.attempt(email, address) as settle, ctx.db.session() as session:
        user = accounts.user_by_email(session, email)
        # An unknown email costs the same hash as a wrong password: timing tells nothing.
        stored = _UNKNOWN if user is None else user.password_hash
        right = verify_password(password, stored) and user is not None
        settle(right)
        if not right:
            raise SignInFailed("Wrong email or password.")
        now = datetime.now(UTC)
        token = secrets.token_urlsafe(32)
        accounts.add_session(session, user.id, _digest(token), now + timedelta(days=SESSION_DAYS))
    return token


def account_for(ctx: AppContext, token: str | None) -> Account | None:
    """The account signed in with this token; None for no, an unknown or an expired one."""
    if not token:
        return None
    with ctx.db.session() as session:
        found = accounts.live_session(session, _digest(token), datetime.now(UTC))
        if found is None:
            return None
        user = session.get(User, found.user_id)
        return _account(user, session.get(Business, user.business_id), found.id)


def sign_out(ctx: AppContext, token: str) -> int | None:
    """End the token's session; returns its id, so what was made for it can go too."""
    with ctx.db.session() as session:
        return accounts.end_session(session, _digest(token))


def live_sessions(ctx: AppContext) -> set[int]:
    """The ids of the sessions not yet ended or expired (expired ones are deleted here)."""
    now = datetime.now(UTC)
    with ctx.db.session() as session:
        accounts.end_expired_sessions(session, now)
        return accounts.live_session_ids(session, now)


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(password.encode(), salt=salt, **SCRYPT)
    encoded = (base64.b64encode(v).decode() for v in (salt, key))
    return "scrypt${n}${r}${p}$".format(**SCRYPT) + "$".join(encoded)


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, key = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    again = hashlib.scrypt(
        password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p)
    )
    return hmac.compare_digest(again, base64.b64decode(key))


_UNKNOWN = hash_password(secrets.token_urlsafe(16))  # checked against when no user matches


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _account(user: User, business: Business, session_id: int) -> Account:
    return Account(user.id, user.email, business.id, business.name, session_id)
