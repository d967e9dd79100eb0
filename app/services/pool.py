"""A pool of engine workers on Ray: `spotforge bulk --workers N` and, with `SPOTFORGE_WORKERS`,
the server's worker.

Each actor is a process owning one Engine: one GPU where the cluster has GPUs, one CPU thread
otherwise (on 2 cores, two one-thread engines outrun one two-thread engine). The actors lease
from the job table like any other worker, with the same short leases and heartbeats, so Ray only
places, watches and restarts them: what each makes is decided by the table. A killed actor is
restarted and its call retried; the job it held is taken again once its lease runs out, and a
frame already stored is never made again. Without an address the pool starts a local Ray and
stops it after.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ray
from ray.exceptions import RayActorError

from app.config import Settings
from app.services import bulk
from app.services.errors import TryLater, UserError
from app.services.jobs import owner_name
from app.services.results_cache import Reuse
from storage import LEASE_S

if TYPE_CHECKING:
    from app.services.context import AppContext

log = logging.getLogger(__name__)

RESTARTS = 3  # a worker killed more often than this (out of memory each time) stays down
LOCAL_OBJECT_STORE_BYTES = 128 * 1024**2  # the pool passes ids and names, never pictures
POLL_S = 0.5


class PoolStopped(TryLater):
    """Every worker of the pool died before the run was finished."""


def worker_settings(settings: Settings) -> dict[str, Any]:
    """The settings an actor opens its context and engine with: everything resolved here, so
    an actor started in another folder (or on another machine, sharing the database and the
    asset store) works on the same data."""
    fields = settings.model_dump(exclude={"workers", "ray_address"})
    resolved = {
        "data_dir": settings.data_dir.resolve(),
        "database_url": settings.resolved_database_url,
        "asset_dir": settings.resolved_asset_dir,
        "model_dir": settings.resolved_model_dir,
        "web_dir": settings.resolved_web_dir,
    }
    return {**fields, **resolved}


@ray.remote(max_restarts=RESTARTS, max_task_retries=RESTARTS)
class EngineWorker:
    """One engine in its own process, working through the job table: a run's frames when the
    driver asks (`work_run`), or, with `serve`, every kind of job from the start."""

    def __init__(self, settings: dict[str, Any], cpu_threads: int | None, serve: bool):
        import torch
        from diffusers.utils import logging as diffusers_logging
        from transformers.utils import logging as transformers_logging

        from app.services.context import AppContext, open_engine

        if cpu_threads:
            torch.set_num_threads(cpu_threads)
        # What an actor prints reaches the driver's terminal: warnings and errors, no bars.
        diffusers_logging.disable_progress_bar()
        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()
        self._settings = Settings(**settings)
        self._ctx = AppContext.open(self._settings)
        self._engine = open_engine(self._settings)
        self._name = owner_name("ray")
        if serve:  # in __init__, so an actor Ray restarts serves again
            from app.services.worker import Worker

            Worker(self._ctx, self._engine, role="ray").start()

    def name(self) -> str:
        return self._name

    def work_run(
        self, business_id: int, run: str, lease_s: float, reuse: bool
    ) -> tuple[Reuse, Reuse]:
        """Make the run's frames, with the other workers, until none is left; what this worker
        reused of backgrounds and cut-outs."""
        report = bulk.work(
            self._ctx, self._engine, business_id, run, owner=self._name,
            lease_s=lease_s, reuse=reuse,
        )  # fmt: skip
        return report.backgrounds, report.cutouts


class WorkerPool:
    """`with WorkerPool(settings, 2) as pool: pool.work(ctx, business, run)` for one run; with
    `serve=True`, the server's worker: from `start()` to `stop()` its workers take every kind
    of job from the queue, as the app's worker thread does."""

    def __init__(
        self, settings: Settings, workers: int, address: str | None = None, *, serve: bool = False
    ):
        if workers < 1:
            raise ValueError("a pool has at least one worker")
        self._settings, self._size, self._serve = settings, workers, serve
        self._address = address if address is not None else settings.ray_address
        self._started_ray = False
        self._actors: list = []
        self.names: list[str] = []

    def __enter__(self) -> WorkerPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> WorkerPool:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        if not ray.is_initialized():
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # nothing leaves the machine
            local = {
                # Each CPU worker asks for one CPU: as many as asked for may run here.
                "num_cpus": max(os.cpu_count() or 1, self._size),
                "object_store_memory": LOCAL_OBJECT_STORE_BYTES,
                "include_dashboard": False,
            }
            kept = _signal_handlers()
            try:
                ray.init(
                    address=self._address, **({} if self._address else local),
                    logging_level=logging.WARNING, configure_logging=False,
                )  # fmt: skip
            except ConnectionError as exc:  # a cluster that is down, or an address mistyped
                raise UserError(
                    f"Could not reach the Ray cluster at {self._address} ({exc}). Check "
                    "--ray-address or SPOTFORGE_RAY_ADDRESS, and that its head is running."
                ) from None
            # Ray's own handlers would end the process on SIGTERM; the server's stop cleanly.
            for signum, handler in kept.items():
                signal.signal(signum, handler)
            self._started_ray = True
        gpus = ray.cluster_resources().get("GPU", 0) >= 1
        options = {"num_gpus": 1} if gpus else {"num_cpus": 1}
        settings = worker_settings(self._settings)
        self._actors = [
            EngineWorker.options(**options).remote(settings, None if gpus else 1, self._serve)
            for _ in range(self._size)
        ]
        # Every engine open before any works, so the work is shared from the first job on.
        self.names = ray.get([a.name.remote() for a in self._actors])
        if self._serve:
            log.info("the job queue's workers: %s", ", ".join(self.names))

    def work(
        self,
        ctx: AppContext,
        business_id: int,
        run: str,
        *,
        lease_s: float = LEASE_S,
        reuse: bool = True,
        on_variant: Callable[[int, int], None] = lambda done, total: None,
    ) -> bulk.RunReport:
        """Work through a started run with every worker of the pool; report it."""
        ready_before = bulk.run_status(ctx, business_id, run).ready
        began = time.perf_counter()
        pending = [a.work_run.remote(business_id, run, lease_s, reuse) for a in self._actors]
        lost, backgrounds, cutouts = 0, Reuse(), Reuse()
        while pending:
            finished, pending = ray.wait(pending, timeout=POLL_S)
            for call in finished:
                try:
                    made_backgrounds, made_cutouts = ray.get(call)
                    backgrounds, cutouts = backgrounds + made_backgrounds, cutouts + made_cutouts
                except RayActorError:  # died more often than it may restart: the rest go on
                    lost += 1
                    log.exception("a worker of the pool stopped for good")
            report = bulk.run_status(ctx, business_id, run)
            on_variant(report.ready + report.failed, report.variants)
        report = bulk.run_status(ctx, business_id, run)
        if lost == self._size and not report.finished:
            raise PoolStopped(
                "every worker of the pool stopped before the run was finished; start it again "
                "to make the rest"
            )
        report.seconds = time.perf_counter() - began
        report.made = report.ready - ready_before
        report.backgrounds, report.cutouts = backgrounds, cutouts
        report.workers = bulk.workers_of(ctx, business_id, run)
        return report

    def stop(self, timeout: float | None = None) -> None:
        """Stop every worker now (a job in hand is taken again when its lease runs out)."""
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False


def _signal_handlers() -> dict:
    """SIGINT's and SIGTERM's handlers, where they can be put back (the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
