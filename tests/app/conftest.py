"""A real `spotforge serve` process on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SPOTFORGE = Path(sys.executable).with_name("spotforge")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spotforge_env(data_dir: Path, database_url: str | None = None) -> dict[str, str]:
    env = {**os.environ, "SPOTFORGE_DATA_DIR": str(data_dir)}
    if database_url:
        env["SPOTFORGE_DATABASE_URL"] = database_url
    return env


@contextmanager
def running_app(data_dir: Path, port: int, **env: str) -> Iterator[str]:
    url = f"http://127.0.0.1:{port}"
    log = (data_dir.parent / f"serve-{port}.log").open("ab")
    proc = subprocess.Popen(
        [str(SPOTFORGE), "serve", "--port", str(port)],
        env={**spotforge_env(data_dir), **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"spotforge serve exited with {proc.returncode}")
            try:
                urllib.request.urlopen(url, timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield url
    except BaseException:  # what the server said is part of the failure
        log.flush()
        tail = (data_dir.parent / f"serve-{port}.log").read_text(errors="replace")[-6000:]
        print(f"--- spotforge serve on port {port} (exit code {proc.poll()}):\n{tail}")
        raise
    finally:
        proc.terminate()
        # The engine finishes the render in flight before it exits (Engine.close); on 2 busy
        # CI cores one batch of previews took over 30 s.
        proc.wait(timeout=120)
        log.close()


@pytest.fixture
def app_server(tmp_path, database_url) -> Callable[..., contextmanager]:
    """Start (and restart) the app on one data folder (and the test's database): `with
    app_server() as url: ...`; keywords are SPOTFORGE_* settings for that start."""
    data_dir = tmp_path / "var"
    port = free_port()
    database = {"SPOTFORGE_DATABASE_URL": database_url} if database_url else {}
    return lambda **env: running_app(data_dir, port, **{**database, **env})
