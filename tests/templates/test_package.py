"""The delivery zip: every master, a QC report each and a self-contained spec sheet whose typed
words are escaped."""

from __future__ import annotations

import json
import subprocess
import zipfile

import pytest

from templates import package, qc
from templates.package import Master


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """2 s of 320x180 picture with a 440 Hz tone, as a master is: H.264 High and AAC."""
    path = tmp_path_factory.mktemp("package") / "clip.mp4"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=30:duration=2",
         "-f", "lavfi", "-i", "sine=f=440:duration=2", "-c:v", "libx264", "-profile:v", "high",
         "-pix_fmt", "yuv420p", "-c:a", "aac", "-ar", "48000", "-shortest", str(path)],
        check=True,
    )  # fmt: skip
    return path


def test_the_zip_holds_each_master_its_report_and_one_escaped_sheet(tmp_path, clip):
    masters = [
        Master("cafe-spring-16x9-15s.mp4", clip, "16:9", {"broadcast": {"passed": True}}),
        Master(
            "cafe-spring-9x16-15s.mp4",
            clip,
            "9:16",
            {"social-vertical": {"passed": True}, "other": {"passed": False}},
        ),
    ]
    measured = {m.name: package.facts(m.path) for m in masters}
    facts = measured[masters[0].name]
    assert facts["codec"] == "h264 High" and facts["resolution"] == "320x180"
    assert abs(facts["duration_s"] - 2.0) < 0.1 and facts["audio"] == "aac 48 kHz"
    assert -40 < facts["loudness_lkfs"] < 0 and facts["true_peak_dbtp"] <= 0
    sheet = package.spec_sheet("<b>Café & Co</b> · order 4", masters, measured)
    made = package.write(tmp_path / "order.zip", masters, sheet)

    with zipfile.ZipFile(made) as archive:
        assert archive.namelist() == [
            "cafe-spring-16x9-15s.mp4",
            "cafe-spring-16x9-15s.qc.json",
            "cafe-spring-9x16-15s.mp4",
            "cafe-spring-9x16-15s.qc.json",
            "spec-sheet.html",
        ]
        assert archive.read("cafe-spring-16x9-15s.mp4") == clip.read_bytes()
        report = json.loads(archive.read("cafe-spring-9x16-15s.qc.json"))
        assert report["passed"] is False and set(report["destinations"]) == {
            "social-vertical",
            "other",
        }
        html = archive.read("spec-sheet.html").decode()
    assert "&lt;b&gt;Café &amp; Co&lt;/b&gt;" in html and "<b>Café" not in html
    assert html.count('src="data:image/png;base64,') == 2  # a thumbnail per master, inline
    assert "This spot contains AI-generated imagery." in html
    for shown in ("h264 High", "LKFS", "dBTP", "320x180", "2 s", "other: FAILS"):
        assert shown in html
    again = package.write(tmp_path / "again.zip", masters, sheet)
    assert again.read_bytes() == made.read_bytes()  # the same package, the same bytes


def test_a_qc_report_reads_as_a_page_with_every_check_and_its_words_escaped(clip):
    report = qc.check(clip, qc.PREVIEW).to_dict()
    rules = report["rules"]
    rules[0] |= {"passed": False, "measured": "<img src=x onerror=alert(1)>"}
    report["passed"] = False
    # A later check for another destination, as an order stores it, is on the page too.
    report["destinations"] = {"hulu": qc.check(clip, qc.SPECS["hulu"]).to_dict()}
    page = package.qc_page("Spring <b>drop</b>", report, "/download/render/7/qc.json", "/")
    assert "<img src=x" not in page and "<b>drop" not in page and "&lt;b&gt;drop" in page
    passing = sum(r["passed"] for r in rules)
    assert f"Fails the preview spec: {passing} of {len(rules)} checks pass." in page
    later = report["destinations"]["hulu"]
    assert f"the {later['spec']} spec: " in page
    every = [*rules, *later["rules"]]
    assert page.count('<td class="fail">FAIL</td>') == sum(not r["passed"] for r in every)
    assert page.count('<td class="pass">pass</td>') == sum(r["passed"] for r in every)
    assert '<a href="/download/render/7/qc.json">' in page
