"""The scheduler decides what runs next; the worker (engine.worker) runs it.

Pending requests wait in a bounded queue. The next batch starts from the request with the best
effective priority (its priority plus one point for every `aging_s` seconds it has waited, so
bulk work is never starved), and takes along up to `max_batch - 1` others with the same batch
key, best first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from engine.errors import QueueFull
from engine.handle import Handle


class Scheduler:
    def __init__(
        self,
        max_queued: int = 64,
        max_batch: int = 4,
        aging_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.max_queued = max_queued
        self.max_batch = max_batch
        self.aging_s = aging_s
        self._clock = clock
        self._pending: list[Handle] = []
        self._ready = threading.Condition()
        self._closed = False

    def submit(self, handle: Handle) -> None:
        self.submit_all([handle])

    def submit_all(self, handles: list[Handle]) -> None:
        """Queue requests together: the worker sees all of them or none, so compatible ones
        run as one batch. A queue without room for all of them refuses all of them."""
        with self._ready:
            if self._closed:
                raise QueueFull("the engine is shutting down")
            if len(self._pending) + len(handles) > self.max_queued:
                raise QueueFull(
                    f"the queue is full ({self.max_queued} requests waiting); try again shortly"
                )
            now = self._clock()
            for handle in handles:
                handle.submitted_at = now
                self._pending.append(handle)
            self._ready.notify()

    def remove(self, handle: Handle) -> bool:
        """Take a request out of the queue; False if it already left it."""
        with self._ready:
            if handle in self._pending:
                self._pending.remove(handle)
                return True
            return False

    def next_batch(self, timeout: float | None = None) -> list[Handle] | None:
        """Block until work is pending; None once closed and drained, or on timeout."""
        with self._ready:
            if not self._ready.wait_for(lambda: self._pending or self._closed, timeout):
                return None
            if not self._pending:
                return None
            ranked = self._ranked()
            key = ranked[0].resolved.batch_key
            batch = [h for h in ranked if h.resolved.batch_key == key][: self.max_batch]
            for handle in batch:
                self._pending.remove(handle)
            return batch

    def position(self, handle: Handle) -> int | None:
        """0 = next to run; None when not queued."""
        with self._ready:
            ranked = self._ranked()
            return ranked.index(handle) if handle in ranked else None

    def __len__(self) -> int:
        with self._ready:
            return len(self._pending)

    def close(self) -> list[Handle]:
        """Stop accepting work; returns what was still waiting."""
        with self._ready:
            self._closed = True
            left, self._pending = self._pending, []
            self._ready.notify_all()
            return left

    def _ranked(self) -> list[Handle]:
        now = self._clock()  # one reading for all, or later-ranked requests would look older

        def rank(handle: Handle) -> tuple[float, int]:
            effective = int(handle.request.priority) + (now - handle.submitted_at) / self.aging_s
            return (-effective, handle.id)

        return sorted(self._pending, key=rank)
