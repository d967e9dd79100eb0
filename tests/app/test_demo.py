"""`spotforge demo`: the whole journey offline, finals that pass broadcast QC."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.app.conftest import SPOTFORGE, spotforge_env


def test_the_demo_makes_every_variant_s_preview(tmp_path):
    """With --no-finals, to keep the suite's time: the finals come from the same
    `render_variant` that test_api, test_pictures, test_delivery and the browser journeys
    take to broadcast QC."""
    out = tmp_path / "demo"
    done = subprocess.run(
        [str(SPOTFORGE), "demo", "--out", str(out), "--no-finals"],
        env=spotforge_env(tmp_path / "elsewhere"),  # the demo keeps to its own folder
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["all_qc_passed"] is True
    variants = summary["variants"]
    assert {(v["geography"], v["audience"]) for v in variants} == {
        (g, a)
        for g in ("San Francisco Bay Area", "Manhattan")
        for a in ("Young runners", "Retirees")
    }
    for variant in variants:
        assert Path(variant["frame"]).is_file()
        assert "final" not in variant
        assert Path(variant["preview"]["file"]).stat().st_size > 100_000
        report = json.loads(Path(variant["preview"]["qc"]).read_text())
        assert report["passed"] and report["spec"] == "preview"
    preview = variants[0]["preview"]["file"]
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height:format=duration", "-of", "json", preview],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    info = json.loads(probe.stdout)
    assert (info["streams"][0]["width"], info["streams"][0]["height"]) == (640, 360)
    assert abs(float(info["format"]["duration"]) - 15.0) < 0.05
    assert not (tmp_path / "elsewhere").exists()
