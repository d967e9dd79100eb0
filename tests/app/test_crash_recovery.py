"""Crash recovery in seconds: a worker renews its short lease while a job runs, so a job longer
than its lease is never leased twice, and the job of a killed process is taken again within
about the lease time (it used to wait 300 s)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.services.jobs import Tallies, work_one
from storage.jobs import HEARTBEAT_S, LEASE_S, JobQueue
from storage.models import Job, JobStatus, utcnow
from tests.app.conftest import spotforge_env

KIND = "crash-test"


class Recorder:
    """A handler that runs `body` and records what the worker told it."""

    def __init__(self, body=lambda job: None):
        self.body = body
        self.ran: list[int] = []
        self.failures: list[tuple[int, str, bool]] = []

    def run(self, ctx, engine, job, tallies) -> None:
        self.ran.append(job.id)
        self.body(job)

    def failed(self, ctx, job, error: str, final: bool) -> None:
        self.failures.append((job.id, error, final))


def test_a_job_three_times_longer_than_its_lease_is_leased_once(ctx):
    queue = JobQueue(ctx.db)
    job_id = queue.enqueue(KIND, {})
    running = threading.Event()
    slow, other = Recorder(lambda job: (running.set(), time.sleep(3.0))), Recorder()
    worked: list[Job | None] = []

    def first_worker() -> None:  # a lease of 1 s, renewed every 0.25 s, for a 3 s job
        leases = {"lease_s": 1.0, "heartbeat_s": 0.25}
        worked.append(work_one(ctx, None, {KIND: slow}, owner="first", tallies=Tallies(), **leases))

    first = threading.Thread(target=first_worker)
    first.start()
    assert running.wait(30)
    tries = []
    while first.is_alive():  # a second worker keeps trying to lease meanwhile
        tries.append(
            work_one(ctx, None, {KIND: other}, owner="second", tallies=Tallies(), lease_s=1.0)
        )
        time.sleep(0.05)
    first.join()
    assert [job.id for job in worked] == [job_id] and slow.ran == [job_id]
    assert len(tries) > 20 and set(tries) == {None} and other.ran == []  # it got nothing
    job = queue.get(job_id)
    assert (job.status, job.attempts, job.last_error) == (JobStatus.DONE, 1, None)


def _expire(ctx, job_id: int) -> None:
    """The worker stalled (swapped out, the database away) past its lease."""
    with ctx.db.session() as session:
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(lease_expires_at=utcnow() - timedelta(seconds=1))
            .execution_options(synchronize_session=False)
        )


@pytest.mark.parametrize("outcome", ["finished", "failed"])
def test_a_worker_that_lost_its_lease_records_nothing(ctx, caplog, outcome):
    queue = JobQueue(ctx.db)
    job_id = queue.enqueue(KIND, {})

    def stall_then_end(job: Job) -> None:
        _expire(ctx, job.id)
        assert queue.lease("next-holder", lease_s=60).id == job.id
        deadline = time.monotonic() + 10  # the heartbeat notices and stops renewing
        while "lost the lease" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.02)
        if outcome == "failed":
            raise RuntimeError("out of memory")

    late = Recorder(stall_then_end)
    with caplog.at_level("WARNING", logger="app.services.jobs"):
        worked = work_one(
            ctx, None, {KIND: late}, owner="late", tallies=Tallies(), lease_s=1.0, heartbeat_s=0.05
        )  # no LeaseLost out of it: the worker's loop goes on
    assert worked.id == job_id and late.failures == []  # its failure is not recorded
    assert f"late lost the lease of jobs [{job_id}]" in caplog.text
    assert f"job {job_id} ({KIND}) {outcome} after its lease was lost" in caplog.text
    job = queue.get(job_id)  # the next holder's, untouched
    assert (job.status, job.lease_owner, job.attempts) == (JobStatus.LEASED, "next-holder", 2)
    assert job.last_error is None
    queue.complete(job_id, "next-holder")
    assert queue.get(job_id).status is JobStatus.DONE


HOLD = f"""
import time
from app.services import AppContext
from app.services.jobs import Tallies, work_one

class Hold:
    def run(self, ctx, engine, job, tallies):
        time.sleep(3600)  # a long render, until the process is killed

    def failed(self, ctx, job, error, final):
        raise AssertionError(error)

work_one(AppContext.open(), None, {{"{KIND}": Hold()}}, owner="doomed", tallies=Tallies())
"""


def test_the_job_of_a_killed_worker_is_taken_again_within_seconds(ctx, settings):
    """A real process leases a job with the default timing (what `spotforge serve` and
    `spotforge bulk` use), renews it, and is SIGKILLed; a fresh worker takes the job within
    about LEASE_S."""
    queue = JobQueue(ctx.db)
    job_id = queue.enqueue(KIND, {})
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD], env=spotforge_env(settings.data_dir), stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while (job := queue.get(job_id)).lease_owner != "doomed":
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the worker process never leased the job"
            time.sleep(0.1)
        first_expiry, deadline = job.lease_expires_at, time.monotonic() + HEARTBEAT_S + 5
        while queue.get(job_id).lease_expires_at == first_expiry:  # its heartbeat renews it
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the lease was never renewed"
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    killed = time.monotonic()

    fresh = Recorder()
    assert work_one(ctx, None, {KIND: fresh}, owner="fresh", tallies=Tallies()) is None  # held
    while work_one(ctx, None, {KIND: fresh}, owner="fresh", tallies=Tallies()) is None:
        assert time.monotonic() - killed < LEASE_S + 5, "the dead worker's job was not retaken"
        time.sleep(0.2)
    waited = time.monotonic() - killed
    assert waited <= LEASE_S + 2  # was 300 s
    job = queue.get(job_id)
    assert (fresh.ran, job.status, job.attempts) == ([job_id], JobStatus.DONE, 2)
