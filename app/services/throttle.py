"""Sign-in throttling: failures counted per account and per client address.

A handful of failures are free; past them the key waits before its next try, twice as long after
each further failure, up to a cap. A throttled try is answered at once, before any password hash
is computed, so guessing costs the guesser time and the server nothing. Unknown emails count
exactly like known ones, so the throttle says nothing about which accounts exist.

The counters live in the server process: one process serves the pages (README, "Security").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.services.errors import TryLater

FREE = {"account": 5, "address": 20}  # an office or a café shares one address
FIRST_WAIT_S = 15.0
MAX_WAIT_S = 15 * 60.0
FORGET_S = 60 * 60.0  # failures older than this are forgotten


class Throttled(TryLater):
    """Too many failed sign-ins; the message says when to try again."""


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    wait_until: float = 0.0


class SignInThrottle:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[tuple[str, str], _Failures] = {}

    def check(self, email: str, address: str | None) -> None:
        """Raise Throttled when this account or this address must wait."""
        now = self._clock()
        with self._lock:
            waits = [f.wait_until - now for f in self._failures(email, address, now)]
        wait = max(waits, default=0.0)
        if wait > 0:
            seconds = max(1, round(wait))
            raise Throttled(
                f"Too many failed sign-ins: try again in {seconds} s, or reset your password.",
                seconds,
            )

    def failed(self, email: str, address: str | None) -> None:
        now = self._clock()
        with self._lock:
            for kind, key in self._named(email, address):
                f = self._keys.setdefault((kind, key), _Failures())
                if now - f.last > FORGET_S:
                    f.count = 0
                f.count, f.last = f.count + 1, now
                beyond = f.count - FREE[kind]
                if beyond >= 0:
                    f.wait_until = now + min(MAX_WAIT_S, FIRST_WAIT_S * 2**beyond)
            self._forget_old(now)

    def succeeded(self, email: str) -> None:
        """The account's own count starts again (the address's does not: one good password
        must not unlock guessing at every other account)."""
        with self._lock:
            self._keys.pop(("account", _account_key(email)), None)

    def _failures(self, email: str, address: str | None, now: float) -> list[_Failures]:
        found = (self._keys.get(k) for k in self._named(email, address))
        return [f for f in found if f is not None and now - f.last <= FORGET_S]

    @staticmethod
    def _named(email: str, address: str | None) -> list[tuple[str, str]]:
        keys = [("account", _account_key(email))]
        if address:
            keys.append(("address", address))
        return keys

    def _forget_old(self, now: float) -> None:
        if len(self._keys) > 10_000:  # bounded memory under a spray of addresses
            for key in [k for k, f in self._keys.items() if now - f.last > FORGET_S]:
                del self._keys[key]


def _account_key(email: str) -> str:
    return email.strip().lower()
