"""The `spotforge` console script, run as a user runs it."""

from __future__ import annotations

import subprocess

from storage import migrate
from tests.app.conftest import SPOTFORGE, spotforge_env


def spotforge(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SPOTFORGE), *args],
        env=spotforge_env(tmp_path / "var"),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_database_commands(tmp_path):
    assert "base (empty)" in spotforge(tmp_path, "db", "current").stdout
    up = spotforge(tmp_path, "db", "upgrade")
    assert up.returncode == 0 and f"database at {migrate.head()}" in up.stdout
    assert (tmp_path / "var" / "spotforge.db").exists()
    down = spotforge(tmp_path, "db", "downgrade", "base")
    assert down.returncode == 0 and "base (empty)" in down.stdout


def test_business_and_campaign_commands(tmp_path):
    created = spotforge(tmp_path, "business", "create", "Harbor Bakery")
    assert created.returncode == 0 and created.stdout == "1\tHarbor Bakery\n"
    campaign = spotforge(
        tmp_path, "campaign", "create", "-b", "1", "Holiday pies", "--objective", "Pre-orders"
    )
    assert campaign.stdout == "1\tHoliday pies\n"
    listed = spotforge(tmp_path, "campaign", "list", "-b", "1")
    assert listed.stdout == "1\tdraft\tHoliday pies\tPre-orders\n"


def test_errors_are_one_clear_line(tmp_path):
    missing = spotforge(tmp_path, "campaign", "list", "-b", "42")
    assert missing.returncode == 1
    assert missing.stderr == "error: business 42 not found\n"
    blank = spotforge(tmp_path, "business", "create", "   ")
    assert blank.returncode == 1 and blank.stderr == "error: a business needs a name\n"
