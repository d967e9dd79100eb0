"""A persisted job queue with leases, so work survives a crashed worker.

A worker leases a job for a while; if it dies, the lease expires and another worker takes the
job again. Claims are conditional UPDATEs, atomic on SQLite and PostgreSQL alike; on PostgreSQL
the candidates are read `FOR UPDATE SKIP LOCKED`, so concurrent workers claim different jobs
instead of racing for the same ones. Failures are retried with exponential backoff until
`max_attempts`.

Leases are short and renewed while the work goes on (`heartbeat_many`), so a job of a process that
died is taken again within `LEASE_S`, however long the job itself runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from storage.database import Database
from storage.errors import NotFound, StorageError
from storage.models import Job, JobStatus, utcnow

# The one place lease timing is decided: a worker holds a job for LEASE_S and renews it every
# HEARTBEAT_S while it works, so two renewals may fail (a busy database) before the job is lost,
# and a job whose worker died is taken again within LEASE_S.
LEASE_S = 15.0
HEARTBEAT_S = 5.0


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
        """Add a job and return its id; the same idempotency key returns the existing job (a
        cancelled or failed one queued again, its attempts reset: asking again is trying
        again)."""
        if idempotency_key is not None:
            existing = self._by_key(idempotency_key)
            if existing is not None:
                self._revive(existing)
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

    def lease(
        self, owner: str, lease_s: float = LEASE_S, kinds: tuple[str, ...] = ()
    ) -> Job | None:
        """Claim the most urgent runnable job (highest priority, then oldest), or None."""
        found = self.lease_batch(owner, lease_s, kinds)
        return found[0] if found else None

    def lease_batch(
        self,
        owner: str,
        lease_s: float = LEASE_S,
        kinds: tuple[str, ...] = (),
        sizes: Mapping[str, int] | None = None,
    ) -> list[Job]:
        """Claim the most urgent runnable job and, up to `sizes[its kind]` in all (1 for a kind
        not named), the next most urgent of the same kind: work a worker does together."""
        now = self._now()
        expired = and_(Job.status == JobStatus.LEASED, Job.lease_expires_at < now)
        runnable = or_(
            and_(Job.status == JobStatus.QUEUED, Job.run_after <= now),
            and_(expired, Job.attempts < Job.max_attempts),
        )
        sizes = sizes or {}
        claimed: list[int] = []
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
            most = max([1, *sizes.values()])
            query = (
                select(Job.id, Job.kind)
                .where(runnable)
                .order_by(Job.priority.desc(), Job.id)
                .limit(8 * most)  # room for the ones other workers claim first
                # PostgreSQL: rows another worker is claiming are passed over, not waited for
                # (SQLite has one writer at a time and ignores this).
                .with_for_update(skip_locked=True)
            )
            if kinds:
                query = query.where(Job.kind.in_(kinds))
            kind = None
            for job_id, job_kind in session.execute(query).all():
                if kind is not None and job_kind != kind:
                    continue
                taken = session.execute(
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
                if taken.rowcount == 1:
                    kind = job_kind
                    claimed.append(job_id)
                    if len(claimed) >= sizes.get(kind, 1):
                        break
            return [session.get(Job, i, populate_existing=True) for i in claimed]

    def heartbeat(self, job_id: int, owner: str, lease_s: float = LEASE_S) -> None:
        """Renew one job's lease; LeaseLost when `owner` no longer holds it."""
        if job_id not in self.heartbeat_many([job_id], owner, lease_s):
            raise LeaseLost(f"job {job_id} is no longer leased by {owner!r}")

    def heartbeat_many(self, job_ids: list[int], owner: str, lease_s: float = LEASE_S) -> set[int]:
        """Renew the leases `owner` still holds among `job_ids`, in one UPDATE; returns those
        renewed (the others were lost: expired and taken by another worker, or finished)."""
        if not job_ids:
            return set()
        with self._db.session() as session:
            renewed = session.execute(
                update(Job)
                .where(
                    Job.id.in_(job_ids), Job.lease_owner == owner, Job.status == JobStatus.LEASED
                )
                .values(lease_expires_at=self._now() + timedelta(seconds=lease_s))
                .returning(Job.id)
                .execution_options(synchronize_session=False)
            )
            return set(renewed.scalars())

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

    def _revive(self, job_id: int) -> None:
        with self._db.session() as session:
            session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status.in_((JobStatus.CANCELLED, JobStatus.FAILED)))
                .values(status=JobStatus.QUEUED, attempts=0, run_after=self._now())
                .execution_options(synchronize_session=False)
            )

    def failed(self, keys: list[str]) -> dict[str, str]:
        """Of the jobs with these keys, the failed ones: key -> why."""
        with self._db.session() as session:
            rows = session.execute(
                select(Job.idempotency_key, Job.last_error).where(
                    Job.idempotency_key.in_(keys), Job.status == JobStatus.FAILED
                )
            )
            return {key: error or "failed" for key, error in rows}

    def ids(self, keys: list[str]) -> list[int]:
        """The jobs with these idempotency keys."""
        with self._db.session() as session:
            return list(session.scalars(select(Job.id).where(Job.idempotency_key.in_(keys))))

    def cancel(self, job_ids: list[int]) -> int:
        """Withdraw the jobs no worker holds; a leased one finishes. Returns how many were."""
        with self._db.session() as session:
            result = session.execute(
                update(Job)
                .where(Job.id.in_(job_ids), Job.status == JobStatus.QUEUED)
                .values(status=JobStatus.CANCELLED)
                .execution_options(synchronize_session=False)
            )
            return result.rowcount

    def position(self, job_id: int) -> int:
        """How many waiting jobs run before this one (0: it is next, or running)."""
        job = self.get(job_id)
        if job.status is not JobStatus.QUEUED:
            return 0
        ahead = or_(
            Job.priority > job.priority, and_(Job.priority == job.priority, Job.id < job.id)
        )
        with self._db.session() as session:
            return session.scalar(select(func.count()).where(Job.status == JobStatus.QUEUED, ahead))

    def waiting(self, business_id: int) -> int:
        """Jobs of one business not yet done."""
        with self._db.session() as session:
            return session.scalar(
                select(func.count()).where(
                    Job.business_id == business_id,
                    Job.status.in_((JobStatus.QUEUED, JobStatus.LEASED)),
                )
            )

    def queued(self, kind: str) -> int:
        """Jobs of one kind, of every business, waiting for a worker."""
        with self._db.session() as session:
            return session.scalar(
                select(func.count()).where(Job.kind == kind, Job.status == JobStatus.QUEUED)
            )

    def latest(self, key: str) -> Job | None:
        """The newest job whose idempotency key is `key` or `key:<anything>` (a redo)."""
        with self._db.session() as session:
            return session.scalars(
                select(Job)
                .where(or_(Job.idempotency_key == key, Job.idempotency_key.startswith(f"{key}:")))
                .order_by(Job.id.desc())
            ).first()

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
