"""Long work as persisted jobs, worked one at a time by whoever runs `work_one`: the app's
background worker (`app.services.worker`) or `spotforge bulk`. Each kind of job has a handler.
A failure is retried with backoff by the queue and reported to the handler once final, so what
the job was making (a variant, a render) records why it failed."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from app.services.results_cache import Reuse
from storage.errors import NotFound
from storage.jobs import JobQueue
from storage.models import Job, JobStatus

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


class TooMuchWaiting(ValueError):
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
    return f"{os.uname().nodename}:{os.getpid()}:{role}:{threading.get_ident()}"


def work_one(
    ctx: AppContext,
    engine: Engine,
    handlers: Mapping[str, Handler],
    *,
    owner: str,
    lease_s: float,
    tallies: Tallies,
) -> Job | None:
    """Lease one job of the kinds `handlers` know and run it; None when there is none to run."""
    queue = JobQueue(ctx.db)
    job = queue.lease(owner, lease_s, kinds=tuple(handlers))
    if job is None:
        return None
    handler = handlers[job.kind]
    try:
        handler.run(ctx, engine, job, tallies)
    except Exception as exc:  # recorded where the user looks; other jobs go on
        error = f"{type(exc).__name__}: {exc}"
        status = queue.fail(job.id, owner, error)
        handler.failed(ctx, job, error, final=status is JobStatus.FAILED)
        log.info("job %s (%s) failed: %s", job.id, job.kind, error)
    else:
        queue.complete(job.id, owner)
    return job
