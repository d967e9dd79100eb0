"""Every template rendered in both tiers, checked by QC; deliberately broken files fail QC."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine.segmentation import Segmenter
from templates import qc
from templates.export import FINAL, PREVIEW, render
from templates.motion import Clip, Still
from templates.spec import load_template, template_ids
from templates.storyboard import build_storyboard


@pytest.fixture(scope="module")
def visuals_for(photos):
    cutout = Segmenter().cutout(photos["product"])

    def visuals(board):
        return {
            s.index: Still(photos["backdrop"], cutout if s.visual.source == "product" else None)
            for s in board.scenes
            if s.visual.source != "brand"
        }

    return visuals


@pytest.fixture(scope="module")
def renders(tmp_path_factory, brief, visuals_for):
    """Each template in both tiers: {(template, tier): Export}."""
    out = tmp_path_factory.mktemp("spots")
    results = {}
    for template_id in template_ids():
        board = build_storyboard(load_template(template_id), brief)
        for tier in (FINAL, PREVIEW):
            path = out / f"{template_id}-{tier.name}.mp4"
            results[template_id, tier.name] = render(board, visuals_for(board), tier, path)
    return results


@pytest.mark.parametrize("template_id", template_ids())
def test_both_tiers_pass_qc_with_the_same_timing(renders, template_id):
    final, preview = renders[template_id, "final"], renders[template_id, "preview"]
    assert final.report.passed, final.report.text()
    assert preview.report.passed, preview.report.text()
    assert final.frames == preview.frames
    assert final.frames in (450, 899)  # 15 s or 30 s at 29.97 fps, to the nearest frame
    assert final.timings["total"] < 180


def frame_at(path: Path, seconds: float, size=(640, 360)) -> np.ndarray:
    raw = subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-ss",
            f"{seconds}",
            "-i",
            str(path),
            "-frames:v",
            "1",
            "-vf",
            f"scale={size[0]}:{size[1]}",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(raw, dtype=np.uint8).reshape(size[1], size[0], 3).astype(np.int16)


def test_preview_shows_the_final_with_a_watermark(renders):
    final = renders["product-hero", "final"].path
    preview = renders["product-hero", "preview"].path
    for t in (1.0, 6.0, 9.0, 13.0):  # one moment in each scene
        a, b = frame_at(final, t), frame_at(preview, t)
        difference = np.abs(a - b).mean(axis=2)
        # Same picture and layout: most pixels agree; the watermark lightens some of them.
        assert np.median(difference) < 12, t
        assert (b.mean(axis=2) - a.mean(axis=2) > 25).mean() > 0.01, t


def test_generated_clip_scene(tmp_path, brief, visuals_for):
    """A scene can be a generated clip: it is retimed to fill the scene, frames blended."""
    board = build_storyboard(load_template("product-hero"), brief)
    visuals = visuals_for(board)
    frames = [Image.new("RGB", (128, 128), (20 * i, 60, 255 - 20 * i)) for i in range(9)]
    visuals[0] = Clip(frames)
    export = render(board, visuals, PREVIEW, tmp_path / "clip.mp4")
    assert export.report.passed
    start, end = frame_at(export.path, 0.1), frame_at(export.path, 3.0)
    assert start[180, 320, 0] < 40 and end[180, 320, 0] > 100  # red rises as the clip plays


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


BROKEN = {
    "wrong duration": (["-t", "14", "-c", "copy"], "duration", "14.0"),
    "low bitrate": (
        [
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-profile:v",
            "high",
            "-b:v",
            "3M",
            "-c:a",
            "copy",
        ],
        "video bitrate",
        "Mbps",
    ),
    "too loud": (
        ["-c:v", "copy", "-af", "volume=12dB", "-c:a", "aac", "-b:a", "256k"],
        "integrated loudness",
        "LKFS",
    ),
    "wrong frame rate": (
        [
            "-r",
            "25",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-profile:v",
            "high",
            "-b:v",
            "18M",
            "-c:a",
            "copy",
        ],
        "frame rate",
        "25.000 fps",
    ),
    "wrong size": (
        [
            "-vf",
            "scale=1280:720",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-profile:v",
            "high",
            "-b:v",
            "18M",
            "-c:a",
            "copy",
        ],
        "frame size",
        "1280x720",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_files_fail_with_the_reason(renders, tmp_path, case):
    args, rule, measured = BROKEN[case]
    broken = tmp_path / "broken.mp4"
    ffmpeg("-i", str(renders["product-hero", "final"].path), *args, str(broken))
    report = qc.check(broken)
    assert not report.passed
    failed = {r.name: r for r in report.failures()}
    assert rule in failed, report.text()
    assert measured in failed[rule].measured


def test_qc_command(renders, tmp_path):
    from tests.app.test_cli import spotforge

    good = spotforge(tmp_path, "qc", str(renders["seasonal-sale", "final"].path))
    assert good.returncode == 0 and good.stdout.splitlines()[-1].startswith("PASS")
    assert all(line.startswith("PASS") for line in good.stdout.splitlines())
    as_json = spotforge(tmp_path, "qc", str(renders["seasonal-sale", "final"].path), "--json")
    assert json.loads(as_json.stdout)["passed"] is True
    bad = spotforge(tmp_path, "qc", str(renders["seasonal-sale", "preview"].path), "--json")
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    assert not report["passed"]
    assert {r["name"] for r in report["rules"] if not r["passed"]} >= {
        "frame size",
        "video bitrate",
    }
    missing = spotforge(tmp_path, "qc", str(tmp_path / "nothing.mp4"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
