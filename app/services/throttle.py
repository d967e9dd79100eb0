"""Sign-in throttling: failures counted per account from one address, per account, and per
address.

A handful of failures are free; past them the key waits before its next try, twice as long after
each further failure, up to a cap. A try is reserved before its password hash is computed, so
guesses sent in parallel count as if sent one after another, and a throttled try costs the
server nothing. Unknown emails count exactly like known ones, so the throttle says nothing about
which accounts exist. The account on its own has a far larger allowance than the account from
one address: a stranger's guesses lock the stranger out long before they lock out the owner.

The counters live in the server process: one process serves the pages (README, "Security").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from app.services.errors import TryLater

FREE = {"pair": 5, "address": 20, "account": 50}  # an office or a café shares one address
FIRST_WAIT_S = 15.0
MAX_WAIT_S = 15 * 60.0
FORGET_S = 60 * 60.0  # failures older than this are forgotten


class Throttled(TryLater):
    """Too many failed sign-ins; the message says when to try again."""


@dataclass
class _Failures:
    count: int = 0
    pending: int = 0  # tries reserved and not yet settled
    last: float = 0.0
    wait_until: float = 0.0


class SignInThrottle:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[tuple[str, str], _Failures] = {}

    @contextmanager
    def attempt(self, email: str | None, address: str | None) -> Iterator[Callable[[bool], None]]:
        """Reserve a try, or raise Throttled; the block calls the function it is given with
        whether the password was right. A block that raises counts as neither. With no email
        (a sign-up) only the address counts."""
        keys = self._reserve(email, address)
        settled = False

        def settle(right: bool) -> None:
            nonlocal settled
            settled = True
            self._settle(keys, right)

        try:
            yield settle
        finally:
            if not settled:
                self._release(keys)

    def _reserve(self, email: str | None, address: str | None) -> list[tuple[str, str]]:
        keys = _named(email, address)
        now = self._clock()
        with self._lock:
            found = [self._keys.setdefault(k, _Failures()) for k in keys]
            for f in found:
                if now - f.last > FORGET_S and not f.pending:
                    f.count, f.wait_until = 0, 0.0
            wait = max((f.wait_until - now for f in found), default=0.0)
            # Tries in flight count as failures until they are settled.
            over = any(f.count + f.pending >= FREE[k[0]] for k, f in zip(keys, found, strict=True))
            if wait <= 0 and over and any(f.pending for f in found):
                wait = 1.0  # the tries in flight decide whether this key must wait
            if wait > 0:
                seconds = max(1, round(wait))
                raise Throttled(
                    f"Too many failed sign-ins: try again in {seconds} s, or reset your password.",
                    seconds,
                )
            for f in found:
                f.pending += 1
            return keys

    def _settle(self, keys: list[tuple[str, str]], right: bool) -> None:
        now = self._clock()
        with self._lock:
            for kind, key in keys:
                f = self._keys[(kind, key)]
                f.pending -= 1
                if right and kind != "address":  # one good password must not unlock
                    f.count, f.wait_until = 0, 0.0  # guessing at every other account
                    continue
                if right:
                    continue
                f.count, f.last = f.count + 1, now
                beyond = f.count - FREE[kind]
                if beyond >= 0:
                    f.wait_until = now + min(MAX_WAIT_S, FIRST_WAIT_S * 2**beyond)
            self._forget_old(now)

    def _release(self, keys: list[tuple[str, str]]) -> None:
        with self._lock:
            for k in keys:
                self._keys[k].pending -= 1

    def _forget_old(self, now: float) -> None:
        if len(self._keys) > 10_000:  # bounded memory under a spray of addresses
            old = [k for k, f in self._keys.items() if now - f.last > FORGET_S and not f.pending]
            for key in old:
                del self._keys[key]


def _named(email: str | None, address: str | None) -> list[tuple[str, str]]:
    account = None if email is None else email.strip().lower()
    keys = [] if account is None else [("account", account)]
    if address:
        keys.append(("address", address))
        if account is not None:
            keys.append(("pair", f"{account} {address}"))
    return keys
