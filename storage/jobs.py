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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from storage.database import Database
from storage.errors import NotFound, StorageError
from storage.models import Job, JobStatus, utcnow

# The one place lease timing is decided: a worker holds a job for LEASE_S and renews it every
# HEARTBEAT_S while it works, so two renewals may fail (a busy database) before the job is lost,
# and a job whose worker died is taken again within LEASE_S.
LEASE_S = 15.0
HEARTBEAT_S = 5.0
CHUNK = 1000  # keys per IN (...) list, well inside SQLite's and PostgreSQL's limits


class LeaseLost(StorageError):
    """The job's lease expired and another worker may have taken it."""


@dataclass(frozen=True)
class JobKey:
    """What a job makes, its identity in the queue (the idempotency key): asking for the same
    thing again finds the same job. `redo` counts the times it was asked to be made anew."""

    kind: str
    variant_id: int
    tier: str | None = None
    redo: int = 0

    def __str__(self) -> str:
        parts = [
            self.kind,
            str(self.variant_id),
            self.tier or "",
            str(self.redo) if self.redo else "",
        ]
        return ":".join(p for p in parts if p)

    @property
    def first(self) -> JobKey:
        """The key of the first time it was made, whatever the redo."""
        return JobKey(self.kind, self.variant_id, self.tier)


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
        key: JobKey | None = None,
        max_attempts: int = 3,
    ) -> int:
        """Add a job and return its id; the same key returns the existing job (a cancelled or
        failed one queued again, its attempts reset: asking again is trying again)."""
        idempotency_key = None if key is None else str(key)
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

    def enqueue_many(
        self,
        kind: str,
        jobs: Mapping[JobKey, dict[str, Any]],
        *,
        priority: int = 0,
        business_id: int | None = None,
        max_attempts: int = 3,
    ) -> int:
        """`enqueue` for many jobs (key -> payload), in a few statements per thousand keys: the
        new keys are added (a key another process adds meanwhile is skipped), the cancelled or
        failed ones queued again. Returns how many were added."""
        texts = {str(key): payload for key, payload in jobs.items()}
        added = 0
        with self._db.session() as session:
            now = self._now()
            for chunk in _chunks(list(texts)):
                found = set(
                    session.scalars(
                        select(Job.idempotency_key).where(Job.idempotency_key.in_(chunk))
                    )
                )
                session.execute(
                    update(Job)
                    .where(
                        Job.idempotency_key.in_(found),
                        Job.status.in_((JobStatus.CANCELLED, JobStatus.FAILED)),
                    )
                    .values(status=JobStatus.QUEUED, attempts=0, run_after=now)
                    .execution_options(synchronize_session=False)
                )
                rows = [
                    {
                        "kind": kind, "payload": texts[key], "priority": priority,
                        "business_id": business_id, "idempotency_key": key,
                        "max_attempts": max_attempts, "status": JobStatus.QUEUED, "attempts": 0,
                        "run_after": now, "created_at": now, "updated_at": now,
                    }
                    for key in chunk
                    if key not in found
                ]  # fmt: skip
                if rows:
                    added += len(session.execute(_insert_new(session), rows).all())
        return added

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

    def failed(self, keys: list[JobKey]) -> dict[JobKey, str]:
        """Of the jobs with these keys, the failed ones: key -> why."""
        by_text = {str(k): k for k in keys}
        found = {}
        with self._db.session() as session:
            for chunk in _chunks(list(by_text)):
                rows = session.execute(
                    select(Job.idempotency_key, Job.last_error).where(
                        Job.idempotency_key.in_(chunk), Job.status == JobStatus.FAILED
                    )
                )
                found.update({by_text[key]: error or "failed" for key, error in rows})
        return found

    def ids(self, keys: list[JobKey]) -> list[int]:
        """The jobs with these keys."""
        texts = [str(k) for k in keys]
        with self._db.session() as session:
            return list(session.scalars(select(Job.id).where(Job.idempotency_key.in_(texts))))

    def withdraw(self, keys: list[JobKey]) -> list[JobKey]:
        """`cancel` by key, for many jobs: those no worker holds are withdrawn; returns their
        keys."""
        by_text = {str(k): k for k in keys}
        withdrawn = []
        with self._db.session() as session:
            for chunk in _chunks(list(by_text)):
                result = session.execute(
                    update(Job)
                    .where(Job.idempotency_key.in_(chunk), Job.status == JobStatus.QUEUED)
                    .values(status=JobStatus.CANCELLED)
                    .returning(Job.idempotency_key)
                    .execution_options(synchronize_session=False)
                )
                withdrawn += [by_text[key] for key in result.scalars()]
        return withdrawn

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

    def latest(self, key: JobKey) -> Job | None:
        """The newest job that makes what `key` names, the first time or a redo."""
        first = str(key.first)
        with self._db.session() as session:
            return session.scalars(
                select(Job)
                .where(
                    or_(Job.idempotency_key == first, Job.idempotency_key.startswith(f"{first}:"))
                )
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


def _insert_new(session):
    """An INSERT of jobs that skips a key already there (added by another process since it
    was looked for), in the dialect's own words."""
    dialect = {"postgresql": postgresql, "sqlite": sqlite}[session.get_bind().dialect.name]
    insert = dialect.insert(Job).on_conflict_do_nothing(index_elements=["idempotency_key"])
    return insert.returning(Job.id)


def _chunks(items: list, size: int = CHUNK) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]
