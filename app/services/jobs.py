"""Long work as persisted jobs, worked by whoever runs `work_batch`: the app's background
worker (`app.services.worker`) or `spotforge bulk`; frames a batch at a time, renders one by
one. Each kind of job has a handler. A failure is retried with backoff by the queue and reported
to the handler once final, so what the job was making (a variant, a render) records why.

While a handler runs, a `Heartbeat` renews the job's short lease (`LEASE_S`, every `HEARTBEAT_S`,
both from `storage.jobs`), so a long render is never leased twice and the job of a process that
died is taken again within seconds. A worker whose lease was lost anyway (it stalled past its
lease) records nothing: the job's next holder finishes it."""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from app.services.errors import UserError, user_errors
from app.services.results_cache import Reuse
from storage import HEARTBEAT_S, LEASE_S, Job, JobQueue, JobStatus, LeaseLost, NotFound

if TYPE_CHECKING:
    from app.services.context import AppContext
    from engine import Engine

log = logging.getLogger(__name__)


@dataclass
class Tallies:
    """What the jobs a worker ran reused."""

    backgrounds: Reuse = field(default_factory=Reuse)
    cutouts: Reuse = field(default_factory=Reuse)


class Handler(Protocol):
    """Runs one kind of job. A handler that can make several jobs at once better than one by
    one (frames: their backgrounds are one engine batch) also has
    `run_batch(ctx, engine, jobs, tallies) -> {job id: the exception it failed with, or None}`."""

    def run(self, ctx: AppContext, engine: Engine, job: Job, tallies: Tallies) -> None: ...

    def failed(self, ctx: AppContext, job: Job, error: str, final: bool) -> None: ...


@dataclass(frozen=True)
class Progress:
    """A job as the page shows it."""

    job_id: int
    state: str  # queued | running | done | failed | cancelled
    position: int  # jobs ahead of it in the queue
    error: str | None


def progress(ctx: AppContext, business_id: int, job_id: int) -> Progress:
    """Where a business's job stands; another business's job is not found."""
    queue = JobQueue(ctx.db)
    job = queue.get(job_id)
    if job.business_id != business_id:
        raise NotFound("job", job_id)
    state = {JobStatus.LEASED: "running"}.get(job.status, job.status.value)
    error = job.last_error if job.status is JobStatus.FAILED else None
    return Progress(job.id, state, queue.position(job.id), error)


def cancel(ctx: AppContext, business_id: int, job_id: int) -> Progress:
    """Withdraw a job that has not started (a running one finishes)."""
    progress(ctx, business_id, job_id)  # ownership
    JobQueue(ctx.db).cancel([job_id])
    return progress(ctx, business_id, job_id)


class TooMuchWaiting(UserError):
    """A business has as much work waiting as the app takes."""


def ensure_room(ctx: AppContext, business_id: int, more: int) -> None:
    """Refuse `more` jobs when they would take the business past its share of the queue."""
    waiting = JobQueue(ctx.db).waiting(business_id)
    if waiting + more > ctx.settings.max_waiting_jobs:
        raise TooMuchWaiting(
            f"{waiting} jobs of yours are still waiting and {more} more would pass the limit of "
            f"{ctx.settings.max_waiting_jobs}; start this when some have finished"
        )


def owner_name(role: str = "worker") -> str:
    """A worker's name, unique among those leasing at once: its role, machine and process, and
    its thread where it is not the process's main one. Leases and renders record it."""
    name = f"{role}@{os.uname().nodename}:{os.getpid()}"
    if threading.current_thread() is not threading.main_thread():
        name += f"/{threading.get_native_id()}"
    return name


class Heartbeat:
    """Renews the leases of the jobs a worker holds, in one UPDATE every `every_s`, from a thread
    that runs while the block does: `with Heartbeat(queue, owner, [job.id]): handler.run(...)`.

    A lease found lost is no longer renewed and is logged (its ids in `lost`); a renewal the
    database refused (busy, gone for a moment) is tried again at the next beat, while the lease
    still has time left."""

    def __init__(
        self,
        queue: JobQueue,
        owner: str,
        job_ids: Iterable[int],
        *,
        lease_s: float = LEASE_S,
        every_s: float = HEARTBEAT_S,
    ):
        self._queue, self._owner = queue, owner
        self._lease_s, self._every_s = lease_s, every_s
        self._held = set(job_ids)
        self.lost: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="spotforge-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while self._held and not self._stop.wait(self._every_s):
            try:
                renewed = self._queue.heartbeat_many(sorted(self._held), self._owner, self._lease_s)
            except Exception:  # the lease has time left: try again at the next beat
                log.warning(
                    "could not renew the leases of jobs %s", sorted(self._held), exc_info=True
                )
                continue
            lost = self._held - renewed
            if lost:
                log.warning(
                    "%s lost the lease of jobs %s; their next holder finishes them",
                    self._owner, sorted(lost),
                )  # fmt: skip
                self._held -= lost
                self.lost |= lost


def work_one(
    ctx: AppContext,
    engine: Engine,
    handlers: Mapping[str, Handler],
    *,
    owner: str,
    tallies: Tallies,
    lease_s: float = LEASE_S,
    heartbeat_s: float | None = None,
) -> Job | None:
    """Lease one job of the kinds `handlers` know and run it; None when there is none."""
    done = work_batch(
        ctx, engine, handlers, owner=owner, tallies=tallies, lease_s=lease_s,
        heartbeat_s=heartbeat_s, batch=1,
    )  # fmt: skip
    return done[0] if done else None


def work_batch(
    ctx: AppContext,
    engine: Engine,
    handlers: Mapping[str, Handler],
    *,
    owner: str,
    tallies: Tallies,
    batch: int,
    lease_s: float = LEASE_S,
    heartbeat_s: float | None = None,
) -> list[Job]:
    """Lease the most urgent job of the kinds `handlers` know and, for a handler that makes
    several at once (`run_batch`), up to `batch` of its kind, and run them; their leases are
    renewed every `heartbeat_s` (by default the same share of `lease_s` as HEARTBEAT_S of
    LEASE_S) while they run. Returns the jobs leased (none: nothing to run). A job whose lease
    was lost while it ran is returned with nothing recorded for it."""
    queue = JobQueue(ctx.db)
    sizes = {kind: batch for kind, h in handlers.items() if hasattr(h, "run_batch")}
    jobs = queue.lease_batch(owner, lease_s, kinds=tuple(handlers), sizes=sizes)
    if not jobs:
        return []
    handler = handlers[jobs[0].kind]
    every_s = lease_s * HEARTBEAT_S / LEASE_S if heartbeat_s is None else heartbeat_s
    with Heartbeat(queue, owner, [j.id for j in jobs], lease_s=lease_s, every_s=every_s):
        if len(jobs) > 1:
            outcomes = handler.run_batch(ctx, engine, jobs, tallies)
        else:
            outcomes = {jobs[0].id: _outcome(handler.run, ctx, engine, jobs[0], tallies)}
    for job in jobs:
        _record(queue, handler, ctx, owner, job, outcomes[job.id])
    return jobs


def _outcome(run, *args) -> Exception | None:
    try:
        run(*args)
    except Exception as exc:  # recorded where the user looks; other jobs go on
        return exc
    return None


def _record(queue, handler, ctx, owner: str, job: Job, failure: Exception | None) -> None:
    if failure is None:
        try:
            queue.complete(job.id, owner)
        except LeaseLost:  # what it made is there; its next holder finds it and completes it
            log.warning("job %s (%s) finished after its lease was lost", job.id, job.kind)
        return
    error = _why(failure, job)
    try:
        status = queue.fail(job.id, owner, error)
    except LeaseLost:  # its next holder runs it again and reports how that went
        log.warning("job %s (%s) failed after its lease was lost: %s", job.id, job.kind, error)
        return
    handler.failed(ctx, job, error, final=status is JobStatus.FAILED)
    log.info("job %s (%s) failed: %s", job.id, job.kind, error)


def _why(exc: Exception, job: Job) -> str:
    """A failure as the user reads it: their own mistake's sentence, or an apology with the
    reference under which the details were logged."""
    if isinstance(exc, user_errors()):
        return str(exc)
    ref = secrets.token_hex(4)
    log.error("reference %s: job %s (%s) failed", ref, job.id, job.kind, exc_info=exc)
    return f"Something went wrong on our side (reference {ref})."
