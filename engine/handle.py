"""What `Engine.submit` returns: the result when it is ready, progress events, and cancel."""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from engine.errors import Cancelled
from engine.requests import Request
from engine.runner import Resolved, Result

_ids = itertools.count(1)


@dataclass(frozen=True)
class Event:
    kind: str  # "queued", "warning", "started", "step", "done", "failed", "cancelled"
    step: int = 0
    total: int = 0
    message: str = ""

    @property
    def final(self) -> bool:
        return self.kind in ("done", "failed", "cancelled")


class Handle:
    def __init__(self, resolved: Resolved):
        self.id = next(_ids)
        self.resolved = resolved
        self.submitted_at = 0.0  # stamped by the scheduler's clock
        self._finished = threading.Event()
        self._cancel = threading.Event()
        self._events: queue.SimpleQueue[Event] = queue.SimpleQueue()
        self._result: Result | None = None
        self._error: BaseException | None = None
        self._on_cancel = lambda handle: None  # set by the engine: drop it from the queue

    @property
    def request(self) -> Request:
        return self.resolved.request

    def result(self, timeout: float | None = None) -> Result:
        """Wait for the result; raises the request's error, `Cancelled`, or `TimeoutError`."""
        if not self._finished.wait(timeout):
            raise TimeoutError(f"request {self.id} did not finish within {timeout} s")
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def cancel(self) -> None:
        """Stop the request: dropped if still queued, interrupted at the next step if running."""
        self._cancel.set()
        self._on_cancel(self)

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def done(self) -> bool:
        return self._finished.is_set()

    def events(self, timeout: float | None = None) -> Iterator[Event]:
        """Progress events in order, ending with the final one."""
        while True:
            event = self._events.get(timeout=timeout)
            yield event
            if event.final:
                return

    # Called by the engine's worker.
    def emit(self, kind: str, step: int = 0, total: int = 0, message: str = "") -> None:
        self._events.put(Event(kind, step, total, message))

    def succeed(self, result: Result) -> None:
        self._result = result
        self._finish(Event("done"))

    def fail(self, error: BaseException) -> None:
        self._error = error
        kind = "cancelled" if isinstance(error, Cancelled) else "failed"
        self._finish(Event(kind, message=str(error)))

    def _finish(self, event: Event) -> None:
        if not self._finished.is_set():
            self._events.put(event)
            self._finished.set()
