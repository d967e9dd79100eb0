"""Destination specs and the picture and sound checks: short ffmpeg-made clips, each broken in one
way, fail exactly the check made for that fault; a clean clip passes them all."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from app.cli import cli
from templates import qc
from templates.qc_checks import flashes

# The CTV master's checks on a small clip: its stream rules, but any short length, no bitrate,
# loudness or true-peak floor (each would fail a clip made for another fault) and no
# duplicate-frame rule (a held or black picture repeats frames by design here).
SMALL = replace(
    qc.BROADCAST,
    name="small",
    width=320,
    height=180,
    durations=(),
    duration_ranges=((1.0, 5.0),),
    min_video_kbps=None,
    min_aac_kbps=None,
    loudness=None,
    max_true_peak=None,
    check_duplicates=False,
)
PICTURE = "testsrc2=s={size}:r=30000/1001:d={seconds},hue=s=0.6"  # moving, within legal levels
SOUND = "sine=frequency=440:sample_rate=48000:d={seconds}"  # at -18 dBFS

FAULTS = {  # clip: (how it is made, the one rule it fails)
    "black": ({"video": "drawbox=c=black:t=fill:enable='between(t,1,3)'"}, "no black stretches"),
    "frozen": (
        {"video": "loop=loop=90:size=1:start=30,setpts=N/FRAME_RATE/TB,trim=duration=4"},
        "no frozen picture",
    ),
    "flashing": (  # dark and light grey, swapped every 3 frames: 5 flashes a second
        {
            "picture": "color=c=0x202020:s={size}:r=30000/1001:d={seconds}",
            "video": "drawbox=c=0xE0E0E0:t=fill:enable='lt(mod(n,6),3)'",
        },
        "no flashing",
    ),
    "range": ({"video": "lutyuv=y=255"}, "legal video range"),  # luma at 255, not 235
    "silent": ({"sound": "anullsrc=r=48000:cl=stereo:d={seconds}"}, "no silence"),
    "clipped": (  # a square wave at full scale
        {"sound": "aevalsrc='if(lt(mod(t*441,1),0.5),1,-1)':s=48000:c=stereo:d={seconds}"},
        "no clipping",
    ),
}


def make(path: Path, *, picture=PICTURE, video=None, sound=SOUND, size="320x180", seconds=4):
    picture, sound = (part.format(size=size, seconds=seconds) for part in (picture, sound))
    filters = ["-vf", video] if video else []
    h264 = ["-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high", "-pix_fmt", "yuv420p"]
    aac = ["-c:a", "aac", "-b:a", "128k", "-ac", "2", "-shortest"]
    inputs = ["-f", "lavfi", "-i", picture, "-f", "lavfi", "-i", sound]
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", *inputs, *filters, *h264, *aac, str(path)], check=True
    )
    return path


@pytest.fixture(scope="module")
def vertical(tmp_path_factory) -> Path:
    """A 6 s 9:16 clip at the feed size."""
    return make(tmp_path_factory.mktemp("qc") / "vertical.mp4", size="1080x1920", seconds=6)


def test_a_clean_clip_passes_every_check(tmp_path):
    report = qc.check(make(tmp_path / "clean.mp4"), SMALL)
    assert report.passed, report.text()
    names = {r.name for r in report.rules}
    assert names >= {rule for _, rule in FAULTS.values()}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_broken_clip_fails_exactly_its_check(tmp_path, fault):
    how, rule = FAULTS[fault]
    report = qc.check(make(tmp_path / f"{fault}.mp4", **how), SMALL)
    assert [r.name for r in report.failures()] == [rule], report.text()


def test_black_is_allowed_at_the_edges_only_where_the_spec_allows_it(tmp_path):
    """Half a second of black at the head: the CTV master takes it, Hulu (no leaders) not."""
    clip = make(tmp_path / "fade-in.mp4", video="drawbox=c=black:t=fill:enable='lt(t,0.4)'")
    hulu = replace(SMALL, edge_black_s=qc.SPECS["hulu"].edge_black_s)
    assert qc.check(clip, SMALL).passed
    assert [r.name for r in qc.check(clip, hulu).failures()] == ["no black stretches"]


def test_flashes_count_opposing_changes_in_any_second():
    steady, fade = np.full(60, 100.0), 16.0 + 2 * np.arange(60.0)  # a slow rise: one change
    strobe = np.tile([16.0, 16.0, 235.0, 235.0], 15)  # 15 changes a second at 30 fps
    assert flashes(steady, 30)[0] == 0 and flashes(fade, 30)[0] == 0
    assert flashes(strobe, 30)[0] == 7


def test_a_vertical_clip_fits_the_feed_spec_and_not_the_ctv_master(vertical):
    assert qc.check(vertical, qc.SPECS["social-vertical"]).passed
    failed = {r.name: r for r in qc.check(vertical, qc.BROADCAST).failures()}
    assert failed["frame size"].measured == "1080x1920"


def test_qc_command_exit_codes_and_spec_names(vertical):
    runner = CliRunner()
    passed = runner.invoke(cli, ["qc", str(vertical), "--spec", "social-vertical"])
    assert passed.exit_code == 0, passed.output
    failed = runner.invoke(cli, ["qc", str(vertical), "--spec", "hulu"])
    assert failed.exit_code == 1 and "FAIL  frame size" in failed.output
    unknown = runner.invoke(cli, ["qc", str(vertical), "--spec", "netflix"])
    assert unknown.exit_code == 1
    assert "unknown spec 'netflix'; one of: " + ", ".join(qc.SPECS) in unknown.output
    shown = runner.invoke(cli, ["qc", "--help"], terminal_width=200)
    assert all(name in shown.output for name in qc.SPECS)
