"""Shared fixtures: a migrated SQLite database and an asset store in a temporary folder,
and real sample files of every accepted kind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.config import Settings
from app.services import AppContext

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


BACKENDS = ("sqlite", "postgresql")

# `make test` runs a pytest-xdist worker per core: each worker, and every server or command it
# starts, gets its share of the cores, not torch's default of all of them (threads that would
# fight over the same cores).
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _workers > 1:
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // _workers))


def pytest_collection_modifyitems(items):
    """Files marked `long` first, the rest in their order: pytest-xdist hands each worker whole
    files in this order, and a long file started last would leave one worker running it alone
    (longest first)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_generate_tests(metafunc):
    """Tests of a module marked `backends` run once on SQLite and once on PostgreSQL."""
    if metafunc.definition.get_closest_marker("backends") and "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL server for the whole run (tests/postgres.py)."""
    from tests.postgres import server

    with server() as url:
        yield url


@pytest.fixture
def backend(request) -> str:
    return getattr(request, "param", "sqlite")


@pytest.fixture
def database_url(backend: str, request) -> str | None:
    """None: the default SQLite file in the data dir; else a fresh PostgreSQL database."""
    if backend == "sqlite":
        return None
    from tests.postgres import new_database

    return new_database(request.getfixturevalue("postgres"))


@pytest.fixture
def settings(tmp_path: Path, database_url: str | None) -> Settings:
    return Settings(data_dir=tmp_path / "var", database_url=database_url, max_asset_bytes=5_000_000)


@pytest.fixture
def ctx(settings: Settings):
    context = AppContext.open(settings)
    yield context
    context.close()


@pytest.fixture
def business_ids(ctx: AppContext) -> tuple[int, int]:
    from app.services import businesses

    return businesses.create(ctx, "Trailhead Running").id, businesses.create(
        ctx, "Harbor Bakery"
    ).id


@pytest.fixture(scope="session")
def mp4_bytes(tmp_path_factory) -> bytes:
    """A real 1 s H.264 clip, 160x90, made by ffmpeg."""
    path = tmp_path_factory.mktemp("media") / "clip.mp4"
    subprocess.run(
        [
            shutil.which("ffmpeg") or "ffmpeg",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=160x90:rate=30:duration=1",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            str(path),
        ],
        check=True,
    )
    return path.read_bytes()


@pytest.fixture(scope="session")
def font_bytes() -> bytes:
    return DEJAVU.read_bytes()
