"""Businesses are the tenants themselves, so these reads are not scoped to one."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.errors import InvalidValue
from storage.models import Business


def create_business(session: Session, name: str) -> Business:
    business = Business(name=_valid_name(name))
    session.add(business)
    session.flush()
    return business


def rename_business(business: Business, name: str) -> None:
    business.name = _valid_name(name)


def _valid_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidValue("a business needs a name")
    if len(name) > 120:
        raise InvalidValue("a business name has at most 120 characters")
    return name


def list_businesses(session: Session) -> list[Business]:
    return list(session.scalars(select(Business).order_by(Business.name, Business.id)))
