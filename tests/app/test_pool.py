"""The Ray pool of engine workers, on PostgreSQL: `spotforge bulk --workers 2` shares a run
between two engine processes, finishes it when one of them is killed, and, killed itself, makes
exactly the rest when started again; the server's pool works the job queue."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from contextlib import suppress
from pathlib import Path

import pytest

from app.config import Settings
from app.services import AppContext, bulk, businesses, library
from app.services.matrix import plan_matrix
from app.services.pool import WorkerPool
from engine import Engine
from storage.models import VariantStatus
from tests.app.conftest import SPOTFORGE, spotforge_env
from tests.app.test_bulk import cup, ids, ready_count, spot_with_photo, wait_for_ready

pytestmark = pytest.mark.long  # minutes of work: started first (tests/conftest.py)

GEOGRAPHIES = (
    "Miami", "Denver", "Seattle", "Chicago", "Phoenix",
    "Boston", "Manhattan", "Los Angeles", "San Diego", "Philadelphia",
)  # fmt: skip
AUDIENCES = ("Young runners", "Retirees", "Night owls", "Families")
VARIANTS = len(GEOGRAPHIES) * len(AUDIENCES)


@pytest.fixture
def backend() -> str:
    return "postgresql"


@pytest.fixture
def pg_settings(settings: Settings) -> Settings:
    assert settings.database_url.startswith("postgresql")
    return settings


@pytest.fixture
def matrix(pg_settings: Settings) -> tuple[int, int, list[str]]:
    """A business with a spot to personalize, and the `spotforge bulk` command for its
    40-variant run on a pool of 2 workers, each making one frame at a time. Its workers outlive
    a killed driver by a few seconds, making frames meanwhile: 40 leave a rerun work."""
    ctx = AppContext.open(pg_settings)
    try:
        business = businesses.create(ctx, "Harbor Coffee").id
        spot = spot_with_photo(ctx, business, cup())
    finally:
        ctx.close()
    args = [str(SPOTFORGE), "bulk", "-b", str(business), "--spot", str(spot), "--workers", "2"]
    for name in GEOGRAPHIES:
        args += ["-g", name]
    for name in AUDIENCES:
        args += ["-a", name]
    return business, spot, args


@pytest.fixture
def env(pg_settings: Settings):
    """The command's environment, marked so that whatever it leaves running (a killed driver's
    Ray helpers) is found and stopped after the test."""
    mark = uuid.uuid4().hex
    yield {
        **spotforge_env(pg_settings.data_dir, pg_settings.database_url),
        "SPOTFORGE_ENGINE_MAX_BATCH": "1",
        "SPOTFORGE_TEST_MARK": mark,
    }
    for pid in _marked(mark):
        _kill(pid)


def test_a_killed_worker_is_restarted_and_its_run_finishes(pg_settings, matrix, env):
    business, spot, args = matrix
    run = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_ready(pg_settings, business, spot, at_least=2, proc=run)
    mark = env["SPOTFORGE_TEST_MARK"]
    workers = _marked(mark, "ray::EngineWorker")
    assert len(workers) == 2
    _kill(workers[0])  # the frame it was making is taken again when its lease runs out

    def restarted() -> bool:  # a new process in its place
        return bool(set(_marked(mark, "ray::EngineWorker")) - set(workers))

    _wait_for(restarted, "Ray to restart the killed worker")
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err.decode()[-3000:]
    report = json.loads(out.decode().strip().splitlines()[-1])
    assert (report["variants"], report["ready"], report["failed"]) == (VARIANTS, VARIANTS, 0)
    assert sum(report["workers"].values()) == VARIANTS  # the killed worker's frames counted too
    _assert_each_variant_once(pg_settings, business, spot, report["run"])


def test_a_killed_pool_run_makes_exactly_the_rest_when_started_again(pg_settings, matrix, env):
    business, spot, args = matrix
    first = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_ready(pg_settings, business, spot, at_least=2, proc=first)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    mark = env["SPOTFORGE_TEST_MARK"]
    _wait_for(lambda: not _marked(mark, "ray::EngineWorker"), "its workers to die with it")
    ready = ready_count(pg_settings, business, spot)
    assert 2 <= ready <= VARIANTS - 8  # what the kill left is work for both workers of a rerun
    before = _workers(pg_settings, business, spot)  # the killed run's workers

    second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr[-3000:]
    report = json.loads(second.stdout.strip().splitlines()[-1])
    assert (report["variants"], report["ready"], report["failed"]) == (VARIANTS, VARIANTS, 0)
    assert report["made_now"] == VARIANTS - ready  # the rerun made only what the kill left
    workers = report["workers"]
    assert sum(workers.values()) == VARIANTS
    again = {w: n for w, n in workers.items() if w not in before}
    assert len(again) == 2 and all(n > 0 for n in again.values()), workers  # both did work
    _assert_each_variant_once(pg_settings, business, spot, report["run"])


def test_the_servers_pool_works_the_job_queue(pg_settings, tmp_path):
    """With SPOTFORGE_WORKERS, the server's worker is a pool: jobs queued by the app (here a
    run's frames) are made by its engine processes, which record themselves on what they
    make."""
    ctx = AppContext.open(pg_settings)
    try:
        business = businesses.create(ctx, "Harbor Coffee").id
        spot = spot_with_photo(ctx, business, cup())
        with Engine(model_dir=tmp_path / "models", device="cpu") as engine:
            plan = plan_matrix(
                ctx, engine, business, [spot],
                ids(library.geographies(ctx, business), "Miami", "Denver"),
                ids(library.audiences(ctx, business), "Families"),
                preset="mini-sd",
            )  # fmt: skip
            run = bulk.start(ctx, engine, business, plan)
        settings = pg_settings.model_copy(update={"workers": 1})
        pool = WorkerPool(settings, settings.workers, serve=True).start()
        try:
            deadline = time.monotonic() + 300
            while not bulk.run_status(ctx, business, run).finished:
                assert time.monotonic() < deadline, "the pool made too few frames in time"
                time.sleep(0.5)
        finally:
            pool.stop()
        assert bulk.run_status(ctx, business, run).ready == 2
        [(worker, made)] = bulk.workers_of(ctx, business, run).items()
        assert worker.startswith(f"{pool.names[0]}/") and made == 2  # its serving thread
    finally:
        ctx.close()


def _assert_each_variant_once(settings, business: int, spot: int, run: str) -> None:
    ctx = AppContext.open(settings)
    try:
        with ctx.tenant(business) as tenant:
            variants = tenant.variants.of_run(run)
            assert len(variants) == VARIANTS  # none duplicated
            assert len({v.extra_params["matrix_key"] for v in variants}) == VARIANTS
            assert len(tenant.variants.list(spot)) == VARIANTS + 1  # and the base, their parent
            for variant in variants:
                assert variant.status is VariantStatus.READY
                assert len(tenant.variants.renders(variant.id)) == 1  # none made twice
    finally:
        ctx.close()


def _workers(settings, business, spot) -> dict[str, int]:
    ctx = AppContext.open(settings)
    try:
        with ctx.tenant(business) as tenant:
            [run] = {v.run for v in tenant.variants.list(spot) if v.run}
        return bulk.workers_of(ctx, business, run)
    finally:
        ctx.close()


def _marked(mark: str, title: str = "") -> list[int]:
    """The processes started with this test's mark whose command line starts with `title`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:  # gone, or not ours to read
            continue
        if f"SPOTFORGE_TEST_MARK={mark}".encode() in environ and cmdline.startswith(title):
            found.append(int(proc.name))
    return sorted(found)


def _wait_for(condition, what: str) -> None:
    # Generous: a restarted Ray actor imports torch and loads its engine again, and make test
    # runs a test file on every core beside it.
    deadline = time.monotonic() + 180
    while not condition():
        assert time.monotonic() < deadline, f"waited 3 minutes for {what}"
        time.sleep(0.2)


def _kill(pid: int) -> None:
    with suppress(ProcessLookupError):  # it ended on its own
        os.kill(pid, signal.SIGKILL)
