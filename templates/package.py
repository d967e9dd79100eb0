"""A delivery package: one zip with every master, a QC report per master and a one-page spec
sheet (HTML, self-contained: its thumbnails are data URIs, so it opens from inside the zip).

The sheet lists, per master, what a traffic desk checks before it books a spot: codec, bitrate,
loudness, true peak, duration, resolution and the verdict of every destination it was bought
for, and says that the spot contains AI-generated imagery (the IAB's AI transparency and
disclosure framework asks that a viewer-facing ad made with generative AI say so).
"""

from __future__ import annotations

import base64
import json
import subprocess
import zipfile
from dataclasses import dataclass
from fractions import Fraction
from html import escape
from pathlib import Path

import numpy as np
import pyloudnorm

from templates.audio import RATE, pcm, tool
from templates.qc import true_peak_dbtp

DISCLOSURE = "This spot contains AI-generated imagery."
SHEET = "spec-sheet.html"
STAMP = (2020, 1, 1, 0, 0, 0)  # every entry's date: the same package is the same bytes
THUMB_WIDTH = 320
# The sheet's and a QC page's look: readable on screen and printed.
STYLE = """
body { font: 13px/1.35 system-ui, sans-serif; margin: 20px; color: #1d2430; }
h1 { font-size: 18px; margin: 0 0 8px; } h2 { font-size: 14px; margin: 18px 0 6px; }
.disclosure { padding: 8px 12px; background: #eef3ff; border-left: 4px solid #3b5bdb; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: 6px 8px; text-align: left; vertical-align: top;
  border-bottom: 1px solid #dde1e6; }
th { font-weight: 600; color: #4a5260; white-space: nowrap; }
td.file { word-break: break-all; max-width: 22em; }
img { width: 96px; height: 96px; object-fit: contain; background: #000; display: block; }
ul { margin: 0; padding-left: 1.1em; }
.pass { color: #1b7f3b; } .fail { color: #c92a2a; font-weight: 600; }
@media print { body { margin: 0; } }
"""
COLUMNS = ("", "Master", "Shape", "Video", "Duration", "Audio", "Loudness", "True peak",
           "Destinations")  # fmt: skip


@dataclass(frozen=True)
class Master:
    name: str  # the file's name in the package
    path: Path
    shape: str  # "16:9", "9:16", "1:1"
    reports: dict[str, dict]  # destination -> its QC report (`templates.qc.Report.to_dict`)

    @property
    def report_name(self) -> str:
        return Path(self.name).with_suffix(".qc.json").name

    def verdicts(self) -> dict[str, bool]:
        return {d: bool(r.get("passed")) for d, r in self.reports.items()}


def facts(path: Path) -> dict:
    """What the sheet lists of a file, measured: codec, bitrate, resolution, duration, and the
    sound's integrated loudness and true peak (None where the file has no such stream)."""
    probe = json.loads(
        subprocess.run(
            [tool("ffprobe"), "-v", "error", "-print_format", "json", "-show_format",
             "-show_streams", str(path)],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    streams = probe.get("streams", [])
    video = next((s for s in streams if s["codec_type"] == "video"), {})
    audio = next((s for s in streams if s["codec_type"] == "audio"), None)
    bitrate = video.get("bit_rate") or probe["format"].get("bit_rate")
    rate = video.get("r_frame_rate", "0/1")
    shown = {
        "codec": " ".join(filter(None, (video.get("codec_name"), video.get("profile")))),
        "video_mbps": round(int(bitrate) / 1e6, 1) if bitrate else None,
        "resolution": f"{video.get('width')}x{video.get('height')}",
        "frame_rate": round(float(Fraction(rate)), 3) if rate != "0/0" else None,
        "duration_s": _seconds(probe["format"].get("duration")),
        "audio": None,
        "loudness_lkfs": None,
        "true_peak_dbtp": None,
    }
    if audio is not None:
        samples = pcm(path).astype(np.float64)
        shown["audio"] = f"{audio['codec_name']} {int(audio.get('sample_rate', 0)) / 1000:g} kHz"
        shown["loudness_lkfs"] = round(pyloudnorm.Meter(RATE).integrated_loudness(samples), 1)
        shown["true_peak_dbtp"] = round(true_peak_dbtp(samples), 1)
    return shown


def thumbnail(path: Path, at_s: float) -> bytes:
    """A PNG of the file's picture at `at_s` seconds, THUMB_WIDTH wide."""
    return subprocess.run(
        [tool(), "-v", "error", "-ss", f"{at_s:.3f}", "-i", str(path), "-frames:v", "1",
         "-vf", f"scale={THUMB_WIDTH}:-2", "-f", "image2pipe", "-c:v", "png", "-"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip


def spec_sheet(title: str, masters: list[Master], measured: dict[str, dict]) -> str:
    """The one-page sheet: a row per master; `measured` is `facts` per master name. Every
    word is escaped."""
    rows = "\n".join(_master_row(m, measured[m.name]) for m in masters)
    heads = "".join(f"<th>{h}</th>" for h in COLUMNS)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{escape(title)} · spec sheet</title>
<style>{STYLE}</style></head><body>
<h1>{escape(title)}</h1>
<p class="disclosure"><strong>{escape(DISCLOSURE)}</strong> Each master carries C2PA Content
Credentials that say how it was made.</p>
<table><thead><tr>{heads}</tr></thead><tbody>
{rows}
</tbody></table>
</body></html>
"""


def qc_page(title: str, report: dict, download: str, back: str) -> str:
    """A master's QC report (`templates.qc.Report.to_dict`, with the later checks for other
    destinations under "destinations") as a page a person reads: per spec its verdict, then
    each check with what was measured and what the spec expects; `download` links the report's
    file, which a broadcaster's system reads, and `back` the page it was opened from. Every
    word is escaped."""
    sections = "\n".join(_qc_section(r) for r in (report, *report.get("destinations", {}).values()))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} · QC report</title>
<style>{STYLE}</style></head><body>
<h1>{escape(title)}</h1>
{sections}
<p><a href="{escape(download)}">Download this report as a file (JSON)</a> for a broadcaster's
system. <a href="{escape(back)}">Back to the studio</a></p>
</body></html>
"""


def _qc_section(report: dict) -> str:
    passed, rules = bool(report.get("passed")), report.get("rules", [])
    verdict = "Passes" if passed else "Fails"
    rows = "\n".join(
        f'<tr><td class="{"pass" if r["passed"] else "fail"}">'
        f"{'pass' if r['passed'] else 'FAIL'}</td><td>{escape(str(r['name']))}</td>"
        f"<td>{escape(str(r['measured']))}</td><td>{escape(str(r['expected']))}</td></tr>"
        for r in rules
    )
    return f"""<h2 class="{"pass" if passed else "fail"}">{verdict} the \
{escape(str(report.get("spec")))} spec: {sum(r["passed"] for r in rules)} of {len(rules)} checks \
pass.</h2>
<table><thead><tr><th></th><th>Check</th><th>Measured</th><th>The spec expects</th></tr></thead>
<tbody>
{rows}
</tbody></table>"""


def report(master: Master) -> bytes:
    """A master's QC report file: its verdict, and each destination's report in full."""
    whole = {
        "master": master.name,
        "shape": master.shape,
        "passed": all(master.verdicts().values()),
        "destinations": master.reports,
    }
    return json.dumps(whole, indent=2).encode()


def write(dest: Path, masters: list[Master], sheet: str) -> Path:
    """The zip: masters stored as they are (video does not compress), reports and the sheet
    deflated."""
    with zipfile.ZipFile(dest, "w") as archive:
        for master in masters:
            _add(archive, master.name, master.path.read_bytes(), zipfile.ZIP_STORED)
            _add(archive, master.report_name, report(master))
        _add(archive, SHEET, sheet.encode())
    return dest


def _add(archive: zipfile.ZipFile, name: str, data: bytes, kind=zipfile.ZIP_DEFLATED) -> None:
    info = zipfile.ZipInfo(name, STAMP)
    info.compress_type = kind
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def _master_row(master: Master, shown: dict) -> str:
    picture = base64.b64encode(thumbnail(master.path, shown["duration_s"] / 2)).decode()
    verdicts = "".join(
        f'<li class="{"pass" if ok else "fail"}">{escape(master.reports[dest].get("spec", dest))}'
        f": {'passes' if ok else 'FAILS'}</li>"
        for dest, ok in master.verdicts().items()
    )
    video = f"{shown['codec']}, {_unit(shown['video_mbps'], 'Mbps')}, "
    video += _unit(shown["frame_rate"], "fps")
    cells = [
        f"{master.shape}<br>{escape(shown['resolution'])}",
        escape(video),
        escape(_unit(shown["duration_s"], "s")),
        escape(shown["audio"] or "none"),
        escape(_unit(shown["loudness_lkfs"], "LKFS")),
        escape(_unit(shown["true_peak_dbtp"], "dBTP")),
        f"<ul>{verdicts}</ul>",
    ]
    return (
        f'<tr><td><img alt="" src="data:image/png;base64,{picture}"></td>'
        f'<td class="file">{escape(master.name)}<br><small>{escape(master.report_name)}</small>'
        f"</td>{''.join(f'<td>{c}</td>' for c in cells)}</tr>"
    )


def _seconds(value) -> float:
    try:
        return round(float(value), 3)
    except (TypeError, ValueError):  # a still has no duration ("N/A")
        return 0.0


def _unit(value, unit: str) -> str:
    return "n/a" if value is None else f"{value:g} {unit}"
