"""The persisted job queue: priorities, leases that expire, retries with backoff, idempotency."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from storage.jobs import JobKey, JobQueue, LeaseLost
from storage.models import JobStatus, utcnow

pytestmark = pytest.mark.backends  # on SQLite and on PostgreSQL


class Clock:
    def __init__(self):
        self.now = utcnow()

    def __call__(self):
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def queue(ctx, clock):
    return JobQueue(ctx.db, clock)


def test_priority_then_age(queue):
    bulk = [queue.enqueue("render", {"n": i}, priority=0) for i in range(2)]
    preview = queue.enqueue("render", {"n": "preview"}, priority=10)
    order = [queue.lease("w").id for _ in range(3)]
    assert order == [preview, *bulk]
    assert queue.lease("w") is None


def test_idempotency_key_returns_the_same_job(queue):
    first = queue.enqueue("render", {"v": 1}, key=JobKey("render", 1, "final"))
    assert queue.enqueue("render", {"v": 1}, key=JobKey("render", 1, "final")) == first
    assert queue.lease("w").id == first and queue.lease("w") is None


def test_expired_lease_is_taken_over(queue, clock):
    job_id = queue.enqueue("render", {})
    job = queue.lease("worker-a", lease_s=30)
    assert (job.id, job.attempts, job.lease_owner) == (job_id, 1, "worker-a")
    assert queue.lease("worker-b") is None  # still leased
    clock.advance(31)  # worker-a died
    taken = queue.lease("worker-b")
    assert (taken.id, taken.attempts, taken.lease_owner) == (job_id, 2, "worker-b")
    with pytest.raises(LeaseLost, match="no longer leased by 'worker-a'"):
        queue.complete(job_id, "worker-a")
    queue.complete(job_id, "worker-b")
    assert queue.get(job_id).status is JobStatus.DONE


def test_heartbeat_keeps_the_lease(queue, clock):
    job_id = queue.enqueue("render", {})
    queue.lease("w", lease_s=30)
    clock.advance(20)
    queue.heartbeat(job_id, "w", lease_s=30)
    clock.advance(20)
    assert queue.lease("other") is None


def test_one_heartbeat_renews_every_lease_still_held(queue, clock):
    held = [queue.enqueue("render", {"n": i}) for i in range(3)]
    for _ in held:
        queue.lease("w", lease_s=10)
    clock.advance(11)  # "w" stalled past its leases; another worker took the first job
    assert queue.lease("other", lease_s=10).id == held[0]
    assert queue.heartbeat_many([*held, 999], "w", lease_s=10) == set(held[1:])
    clock.advance(9)
    assert queue.lease("other") is None  # the two renewed (late, but not yet taken) are held
    assert queue.heartbeat_many([], "w") == set()
    with pytest.raises(LeaseLost):
        queue.heartbeat(held[0], "w")


def test_failures_back_off_then_give_up(queue, clock):
    job_id = queue.enqueue("render", {}, max_attempts=3)
    queue.lease("w")
    assert queue.fail(job_id, "w", "CUDA out of memory", backoff_s=10) is JobStatus.QUEUED
    assert queue.lease("w") is None  # waits 10 s
    clock.advance(10)
    queue.lease("w")
    assert queue.fail(job_id, "w", "again", backoff_s=10) is JobStatus.QUEUED
    clock.advance(19)
    assert queue.lease("w") is None  # second retry waits 20 s
    clock.advance(1)
    queue.lease("w")
    assert queue.fail(job_id, "w", "for good", backoff_s=10) is JobStatus.FAILED
    clock.advance(3600)
    assert queue.lease("w") is None
    job = queue.get(job_id)
    assert (job.status, job.attempts, job.last_error) == (JobStatus.FAILED, 3, "for good")


def test_kinds_filter(queue):
    queue.enqueue("render", {})
    export = queue.enqueue("export", {})
    assert queue.lease("w", kinds=("export",)).id == export


def test_a_batch_is_the_most_urgent_job_and_the_next_of_its_kind(queue):
    frames = [queue.enqueue("frame", {"n": n}) for n in range(5)]
    render = queue.enqueue("render", {}, priority=10)
    queue.enqueue("frame", {"n": 5})
    sizes = {"frame": 4}
    [first] = queue.lease_batch("w", kinds=("frame", "render"), sizes=sizes)
    assert first.id == render  # the most urgent, alone: renders are not batched
    batch = queue.lease_batch("w", kinds=("frame", "render"), sizes=sizes)
    assert [j.id for j in batch] == frames[:4]
    assert all(j.status is JobStatus.LEASED and j.lease_owner == "w" for j in batch)
    rest = queue.lease_batch("v", kinds=("frame",), sizes=sizes)
    assert [j.payload["n"] for j in rest] == [4, 5]  # what is left, not another's
    assert queue.lease_batch("v", sizes=sizes) == []


def test_a_job_that_keeps_killing_its_worker_stops_being_retried(queue, clock):
    job_id = queue.enqueue("render", {}, max_attempts=2)
    for _ in range(2):
        assert queue.lease("w", lease_s=10).id == job_id
        clock.advance(11)  # the worker died without a word
    assert queue.lease("w") is None
    job = queue.get(job_id)
    assert (job.status, job.attempts) == (JobStatus.FAILED, 2)
    assert job.last_error == "its worker stopped responding on every attempt"


def test_waiting_jobs_are_cancelled_and_asked_again(queue):
    first = queue.enqueue("render", {}, business_id=None, key=JobKey("render", 1, "preview"))
    second = queue.enqueue("render", {}, key=JobKey("render", 2, "preview"))
    third = queue.enqueue("render", {}, priority=5, key=JobKey("render", 3, "preview"))
    # A higher priority goes first, then the older job.
    assert [queue.position(j) for j in (third, first, second)] == [0, 1, 2]
    leased = queue.lease("w")
    assert leased.id == third and queue.position(third) == 0  # running: nothing ahead
    assert queue.cancel([third, second]) == 1  # the leased one is not withdrawn
    assert queue.get(second).status is JobStatus.CANCELLED
    assert queue.position(first) == 0
    # Asking for the same work again queues the cancelled job again, not a new one.
    assert queue.enqueue("render", {}, key=JobKey("render", 2, "preview")) == second
    assert queue.get(second).status is JobStatus.QUEUED
    unknown = JobKey("render", 9, "preview")
    assert queue.ids([JobKey("render", 1, "preview"), JobKey("render", 2, "preview"), unknown]) == [
        first,
        second,
    ]
    redo = queue.enqueue("render", {}, key=JobKey("render", 1, "preview", redo=1))
    assert queue.latest(JobKey("render", 1, "preview")).id == redo
    assert queue.latest(JobKey("render", 1, "preview", redo=1)).id == redo
    assert queue.latest(JobKey("render", 1, "final")) is None


def test_workers_leasing_at_once_take_each_job_exactly_once(ctx):
    """Four workers at once, batches of up to 4 (SKIP LOCKED on PostgreSQL)."""
    made = [JobQueue(ctx.db).enqueue("frame", {"n": n}) for n in range(40)]
    taken: list[int] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        queue = JobQueue(ctx.db)
        while batch := queue.lease_batch(name, sizes={"frame": 4}):
            with lock:
                taken.extend(j.id for j in batch)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == made  # every job once: none twice, none left
