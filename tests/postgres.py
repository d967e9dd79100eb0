"""A real PostgreSQL for the tests: Debian's server binaries, a cluster of its own in a temporary
folder on a free port, run as the `postgres` user (PostgreSQL refuses to run as root), stopped
when the tests end. Each test that asks gets a database of its own."""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_names = itertools.count()


def binaries() -> Path | None:
    """The folder of initdb and pg_ctl: on PATH, else Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version)
    return Path(versions[-1]).parent if versions else None


@contextmanager
def server() -> Iterator[str]:
    """A running cluster; yields its URL without a database name."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql")
    root = Path(tempfile.mkdtemp(prefix="spotforge-pg-"))
    data, sockets = root / "data", root / "run"
    sockets.mkdir()
    as_postgres = _as_postgres()
    if as_postgres:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_postgres, *args], check=True, capture_output=True, timeout=120)

    run(str(bin_dir / "initdb"), "-D", str(data), "-U", "spotforge", "--auth=trust", "-E", "UTF8")
    options = f"-p {port} -k {sockets} -h 127.0.0.1 -c fsync=off -c max_connections=200"
    run(str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
        str(root / "log"), "start")  # fmt: skip
    try:
        yield f"postgresql+psycopg://spotforge@127.0.0.1:{port}"
    finally:
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def new_database(url: str) -> str:
    """A fresh, empty database on the server; its URL."""
    import psycopg

    name = f"test_{os.getpid()}_{next(_names)}"
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{url}/{name}"


def _as_postgres() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.parent.name)
    except ValueError:
        return 0.0
