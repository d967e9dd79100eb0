"""Users and their sign-in sessions. Not scoped to a business: signing in is how a request's
business is found."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.errors import InvalidValue
from storage.models import Business, User, UserSession


def create_user(session: Session, business_id: int, email: str, password_hash: str) -> User:
    if session.get(Business, business_id) is None:
        raise InvalidValue(f"business {business_id} does not exist")
    user = User(business_id=business_id, email=email.strip().lower(), password_hash=password_hash)
    try:
        with session.begin_nested():
            session.add(user)
    except IntegrityError:
        raise InvalidValue(f"{user.email} already has an account; sign in instead") from None
    return user


def user_by_email(session: Session, email: str) -> User | None:
    return session.scalars(select(User).where(User.email == email.strip().lower())).one_or_none()


def add_session(session: Session, user_id: int, token_hash: str, expires_at: datetime) -> None:
    session.add(UserSession(user_id=user_id, token_hash=token_hash, expires_at=expires_at))
    session.flush()


def live_session(session: Session, token_hash: str, now: datetime) -> UserSession | None:
    """The live session of this token; None for an unknown or expired one."""
    return session.scalars(
        select(UserSession).where(
            UserSession.token_hash == token_hash, UserSession.expires_at > now
        )
    ).one_or_none()


def live_session_ids(session: Session, now: datetime) -> set[int]:
    return set(session.scalars(select(UserSession.id).where(UserSession.expires_at > now)))


def end_session(session: Session, token_hash: str) -> int | None:
    """End the session of this token; returns its id (None if there was none)."""
    return session.scalar(
        delete(UserSession).where(UserSession.token_hash == token_hash).returning(UserSession.id)
    )


def end_expired_sessions(session: Session, now: datetime) -> None:
    session.execute(delete(UserSession).where(UserSession.expires_at <= now))
