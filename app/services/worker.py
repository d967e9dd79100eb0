"""The app's background worker: a thread in the web process that makes variant frames and
renders spots from the job queue while the pages stay responsive, and settles an order once its
last final is rendered. Its leases are the short, renewed ones of `work_batch`, so the jobs of a
server that was killed are taken again within seconds."""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from app.services import bulk, orders, renders
from app.services.jobs import Tallies, owner_name, work_batch
from storage import Job

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine

log = logging.getLogger(__name__)

SETTLE_ALL_S = 60.0  # how often a worker looks for orders nobody settled


class Worker:
    """A thread in the app process that works through the job queue while the app serves."""

    def __init__(self, ctx: AppContext, engine: Engine, *, role: str = "app", idle_s: float = 0.25):
        self._ctx, self._engine, self._role = ctx, engine, role
        self._idle_s = idle_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="spotforge-worker", daemon=True)
        self.tallies = Tallies()

    def start(self) -> Worker:
        self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the job in hand (its lease lets another worker finish it otherwise)."""
        self._stop.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        owner = owner_name(self._role)
        handlers = {bulk.KIND: bulk.FrameHandler(owner), renders.KIND: renders.RenderHandler(owner)}
        next_sweep = 0.0
        while not self._stop.is_set():
            if time.monotonic() >= next_sweep:
                self._settle_all()
                next_sweep = time.monotonic() + SETTLE_ALL_S
            try:
                done = work_batch(
                    self._ctx, self._engine, handlers, owner=owner,
                    tallies=self.tallies, batch=self._engine.max_batch,
                )  # fmt: skip
            except Exception:  # the database went away for a moment: try again shortly
                log.exception("the worker could not take a job")
                done = []
            if not done:
                self._stop.wait(self._idle_s)
            for job in done:
                if job.kind == renders.KIND and job.payload["tier"] == "final":
                    self._settle(job)

    def _settle(self, job: Job) -> None:
        try:
            orders.settle(self._ctx, job.business_id, int(job.payload["variant_id"]))
        except Exception:  # the next sweep of every order settles it
            log.exception("could not settle the orders of variant %s", job.payload["variant_id"])

    def _settle_all(self) -> None:
        """Orders whose last final finished with no worker there to settle them (a server
        killed in between, finals the queue gave up on)."""
        try:
            orders.settle_all(self._ctx)
        except Exception:  # the next sweep tries again
            log.exception("could not settle the waiting orders")
