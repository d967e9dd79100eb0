"""A persisted job queue with leases, so work survives a crashed worker.

A worker leases a job for a while; if it dies, the lease expires and another worker takes the
job again. Claims are conditional UPDATEs (no row locks), which are atomic on SQLite and
PostgreSQL alike. Failures are retried with exponential backoff until `max_attempts`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import IntegrityError

from storage.database import Database
from storage.errors import NotFound, StorageError
from storage.models import Job, JobStatus, utcnow


class LeaseLost(StorageError):
    """The job's lease expired and another worker may have taken it."""


class JobQueue:
    def __init__(self, db: Database, clock: Callable[[], datetime] = utcnow):
        self._db = db
        self._now = clock

    def enqueue(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        priority: int = 0,
        business_id: int | None = None,
        idempotency_key: str | None = None,
        max_attempts: int = 3,
    ) -> int:
        """Add a job and return its id; the same idempotency key returns the existing job."""
        if idempotency_key is not None:
            existing = self._by_key(idempotency_key)
            if existing is not None:
                return existing
        try:
            with self._db.session() as session:
                job = Job(
                    kind=kind,
                    payload=payload,
                    priority=priority,
                    business_id=business_id,
                    idempotency_key=idempotency_key,
                    max_attempts=max_attempts,
                    run_after=self._now(),
                )
                session.add(job)
                session.flush()
                return job.id
        except IntegrityError:
            # Another process enqueued the same key between our check and insert.
            existing = self._by_key(idempotency_key) if idempotency_key else None
            if existing is None:
                raise
            return existing

    def lease(self, owner: str, lease_s: float = 60.0, kinds: tuple[str, ...] = ()) -> Job | None:
        """Claim the most urgent runnable job (highest priority, then oldest), or None."""
        now = self._now()
        expired = and_(Job.status == JobStatus.LEASED, Job.lease_expires_at < now)
        runnable = or_(
            and_(Job.status == JobStatus.QUEUED, Job.run_after <= now),
            and_(expired, Job.attempts < Job.max_attempts),
        )
        with self._db.session() as session:
            # A job whose workers keep dying (killed for memory, say) is not retried forever.
            session.execute(
                update(Job)
                .where(expired, Job.attempts >= Job.max_attempts)
                .values(
                    status=JobStatus.FAILED,
                    lease_owner=None,
                    lease_expires_at=None,
                    last_error="its worker stopped responding on every attempt",
                )
                .execution_options(synchronize_session=False)
            )
            query = select(Job.id).where(runnable).order_by(Job.priority.desc(), Job.id).limit(8)
            if kinds:
                query = query.where(Job.kind.in_(kinds))
            for job_id in session.scalars(query).all():
                claimed = session.execute(
                    update(Job)
                    .where(Job.id == job_id, runnable)
                    .values(
                        status=JobStatus.LEASED,
                        lease_owner=owner,
                        lease_expires_at=now + timedelta(seconds=lease_s),
                        attempts=Job.attempts + 1,
                    )
                    .execution_options(synchronize_session=False)
                )
                if claimed.rowcount == 1:
                    return session.get(Job, job_id, populate_existing=True)
        return None

    def heartbeat(self, job_id: int, owner: str, lease_s: float = 60.0) -> None:
        self._owned_update(job_id, owner, lease_expires_at=self._now() + timedelta(seconds=lease_s))

    def complete(self, job_id: int, owner: str) -> None:
        self._owned_update(
            job_id,
            owner,
            status=JobStatus.DONE,
            lease_owner=None,
            lease_expires_at=None,
            last_error=None,
        )

    def fail(self, job_id: int, owner: str, error: str, backoff_s: float = 2.0) -> JobStatus:
        """Record a failure; the job is retried later unless it is out of attempts."""
        job = self.get(job_id)
        if job.attempts >= job.max_attempts:
            status, run_after = JobStatus.FAILED, job.run_after
        else:
            delay = backoff_s * 2 ** (job.attempts - 1)
            status, run_after = JobStatus.QUEUED, self._now() + timedelta(seconds=delay)
        self._owned_update(
            job_id,
            owner,
            status=status,
            run_after=run_after,
            lease_owner=None,
            lease_expires_at=None,
            last_error=error[:4000],
        )
        return status

    def get(self, job_id: int) -> Job:
        with self._db.session() as session:
            job = session.get(Job, job_id)
            if job is None:
                raise NotFound("job", job_id)
            return job

    def _by_key(self, key: str) -> int | None:
        with self._db.session() as session:
            return session.scalar(select(Job.id).where(Job.idempotency_key == key))

    def _owned_update(self, job_id: int, owner: str, **values: Any) -> None:
        with self._db.session() as session:
            result = session.execute(
                update(Job)
                .where(Job.id == job_id, Job.lease_owner == owner, Job.status == JobStatus.LEASED)
                .values(**values)
                .execution_options(synchronize_session=False)
            )
            if result.rowcount != 1:
                raise LeaseLost(f"job {job_id} is no longer leased by {owner!r}")
