"""Every template rendered in both tiers, checked by QC; deliberately broken files fail QC."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from moviepy import VideoClip
from PIL import Image

from engine.segmentation import Segmenter
from templates import audio, qc
from templates.cards import brand_card
from templates.export import FINAL, PREVIEW, _encode, render, scene_stills
from templates.motion import Clip, Still
from templates.overlay import overlay
from templates.spec import load_template, template_ids
from templates.storyboard import build_storyboard

pytestmark = pytest.mark.long  # minutes of work: started first (tests/conftest.py)


def sky() -> Image.Image:
    """A pale, smooth gradient: a still on it barely changes from one frame to the next."""
    y = np.linspace(0.0, 1.0, 1080)[:, None, None]
    rgb = np.array([150, 185, 225]) + y * np.array([12, 10, 8])
    return Image.fromarray(np.rint(np.broadcast_to(rgb, (1080, 1920, 3))).astype(np.uint8))


# Backgrounds that give a zoom or a pan nothing to move: a flat colour, a smooth gradient.
PLAIN = {
    "seasonal-sale": lambda: Image.new("RGB", (1920, 1080), (46, 125, 90)),
    "online-shop": sky,
}


@pytest.fixture(scope="module")
def visuals_for(photos):
    cutout = Segmenter().cutout(photos["product"])

    def visuals(board, backdrop=None):
        return {
            s.index: Still(
                backdrop or photos["backdrop"], cutout if s.visual.source == "product" else None
            )
            for s in board.scenes
            if s.visual.source != "brand"
        }

    return visuals


@pytest.fixture(scope="module")
def renders(tmp_path_factory, brief, visuals_for):
    """Each template in both tiers: {(template, tier): Export}. Most are set on a photograph,
    two on plain backgrounds (PLAIN)."""
    out = tmp_path_factory.mktemp("spots")
    results = {}
    for template_id in template_ids():
        board = build_storyboard(load_template(template_id), brief)
        backdrop = PLAIN[template_id]() if template_id in PLAIN else None
        for tier in (FINAL, PREVIEW):
            path = out / f"{template_id}-{tier.name}.mp4"
            results[template_id, tier.name] = render(
                board, visuals_for(board, backdrop), tier, path
            )
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


@pytest.mark.parametrize("template_id", list(PLAIN))
def test_plain_backgrounds_never_repeat_a_frame(renders, template_id):
    """On a flat colour or a smooth gradient a zoom or pan has nothing to move: the grain keeps
    every frame of the broadcast master apart from the one before it, through the encoder."""
    final = renders[template_id, "final"]
    rules = {r.name: r for r in final.report.rules}
    assert rules["no duplicated frames"].passed and rules["no duplicated frames"].measured == (
        "0 repeats"
    )
    # And the grain is too light to see: a patch of plain background stays plain.
    opening = frame_at(final.path, 0.5, (1920, 1080))
    assert opening[100:300, 100:500].std(axis=(0, 1)).max() < 3


def test_the_end_card_on_air_is_the_one_laid_out(renders, brief):
    """The broadcast file's end card shows each block the layout placed (the business's name,
    call to action, tagline, web address and phone; their words are checked in
    test_overlay), where it placed them."""
    board = build_storyboard(load_template("seasonal-sale"), brief)
    end = board.scenes[-1]
    size = (1920, 1080)
    expected = np.asarray(scene_stills(board, {}, size)[-1], dtype=np.int16)
    shown = frame_at(renders["seasonal-sale", "final"].path, end.start + end.duration / 2, size)
    _, blocks = overlay(end, brief.brand, brand_card(brief.brand, size, seed=end.index))
    assert [b.slot for b in blocks] == ["business", "cta", "tagline", "url", "phone"]
    for block in blocks:
        x0, y0, x1, y1 = block.box
        assert expected[y0:y1, x0:x1].std() > 20, block.slot  # words, not an empty card
        assert np.abs(shown[y0:y1, x0:x1] - expected[y0:y1, x0:x1]).mean() < 6, block.slot


def test_the_same_frames_make_the_same_file(tmp_path):
    """The same variant renders the same file: the grain is fixed per frame, and x264 runs on
    one thread (its threaded rate control varies with timing)."""
    flat = np.full((1080, 1920, 3), (46, 125, 90), dtype=np.uint8)
    timeline = VideoClip(frame_function=lambda t: flat, duration=1.0)
    wav = tmp_path / "bed.wav"
    audio.normalize(audio.built_in_bed("upbeat", 116, 1.0), wav)
    files = []
    for k in range(2):
        out = tmp_path / f"{k}.mp4"
        _encode(timeline, 30, None, wav, FINAL, out, 1.0)
        files.append(out.read_bytes())
    assert files[0] == files[1]
    assert qc._duplicated_frames(tmp_path / "0.mp4") == []


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


BROKEN = {
    "wrong duration": (["-t", "14", "-c", "copy"], "duration", "14."),  # cut at a packet: 14.1 s
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
