"""How a request names its session: a bearer token (scripts) or the session cookie (browsers)."""

from __future__ import annotations

from collections.abc import Mapping

COOKIE = "spotforge_session"


def bearer(headers: Mapping[str, str]) -> str | None:
    header = headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None


def token_of(headers: Mapping[str, str], cookies: Mapping[str, str]) -> str | None:
    return bearer(headers) or cookies.get(COOKIE) or None
