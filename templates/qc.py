"""QC: a file checked against a delivery spec, one pass/fail line per rule.

Stream facts come from ffprobe; loudness is measured on the decoded audio with pyloudnorm
(ITU-R BS.1770-4) and true peak by 4x oversampling; duplicated frames by hashing every
decoded frame. The broadcast spec is the CTV master of DESIGN.md; the preview spec checks that
a preview has the final's timing at preview size.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyloudnorm
from scipy.signal import resample_poly

from templates.audio import RATE, pcm, tool


@dataclass(frozen=True)
class Spec:
    name: str
    width: int
    height: int
    frame_rates: tuple[Fraction, ...] = (Fraction(30000, 1001), Fraction(24000, 1001))
    durations: tuple[float, ...] = (15.0, 30.0)
    video_codecs: tuple[str, ...] = ("h264", "prores")
    min_video_kbps: int | None = None
    audio_codecs: tuple[str, ...] = ("aac", "pcm_s16le", "pcm_s24le")
    min_aac_kbps: int | None = None
    loudness: tuple[float, float] | None = None  # LKFS target, tolerance
    max_true_peak: float | None = None
    check_duplicates: bool = False


BROADCAST = Spec(
    "broadcast (CTV master)",
    1920,
    1080,
    min_video_kbps=15_000,
    min_aac_kbps=192,
    loudness=(-24.0, 2.0),
    max_true_peak=-2.0,
    check_duplicates=True,
)
PREVIEW = Spec("preview", 640, 360)


@dataclass(frozen=True)
class Rule:
    name: str
    passed: bool
    measured: str
    expected: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "passed", bool(self.passed))  # numpy comparisons give np.bool_

    def line(self) -> str:
        return (
            f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.measured} "
            f"(expected {self.expected})"
        )


@dataclass
class Report:
    file: str
    spec: str
    rules: list[Rule] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.rules) and all(r.passed for r in self.rules)

    def failures(self) -> list[Rule]:
        return [r for r in self.rules if not r.passed]

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "spec": self.spec,
            "passed": self.passed,
            "rules": [asdict(r) for r in self.rules],
        }

    def text(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return "\n".join(
            [
                *(r.line() for r in self.rules),
                f"{verdict}  {self.file} against the {self.spec} spec",
            ]
        )


def check(path: Path, spec: Spec = BROADCAST) -> Report:
    path = Path(path)
    report = Report(str(path), spec.name)
    add = report.rules.append
    probe = _probe(path)
    if probe is None:
        add(Rule("readable", False, "ffprobe cannot read the file", "a video file"))
        return report
    video = next((s for s in probe["streams"] if s["codec_type"] == "video"), None)
    audio = next((s for s in probe["streams"] if s["codec_type"] == "audio"), None)
    if video is None:
        add(Rule("video stream", False, "none", "one video stream"))
        return report
    codec = video["codec_name"]
    profile = video.get("profile", "")
    ok = codec in spec.video_codecs and (codec != "h264" or profile == "High")
    add(Rule("video codec", ok, f"{codec} {profile}".strip(), "H.264 High or ProRes"))
    size = (video["width"], video["height"])
    add(
        Rule(
            "frame size",
            size == (spec.width, spec.height),
            f"{size[0]}x{size[1]}",
            f"{spec.width}x{spec.height}",
        )
    )
    sar = video.get("sample_aspect_ratio", "1:1")
    add(Rule("square pixels (16:9)", sar in ("1:1", "0:1"), f"SAR {sar}", "SAR 1:1"))
    field_order = video.get("field_order", "progressive")
    add(Rule("progressive", field_order in ("progressive", "unknown"), field_order, "progressive"))
    r_rate, avg_rate = Fraction(video["r_frame_rate"]), Fraction(video["avg_frame_rate"])
    rates = " or ".join(f"{float(r):.3f}" for r in spec.frame_rates)
    add(Rule("frame rate", r_rate in spec.frame_rates, f"{float(r_rate):.3f} fps", rates))
    add(
        Rule(
            "constant frame rate",
            avg_rate == r_rate,
            f"average {float(avg_rate):.3f}, nominal {float(r_rate):.3f}",
            "equal",
        )
    )
    duration = float(probe["format"]["duration"])
    frames = int(video.get("nb_frames") or round(duration * r_rate))
    half_frame = 0.5 / float(r_rate) if r_rate else 0.0
    nominal = min(spec.durations, key=lambda d: abs(d - duration))
    add(
        Rule(
            "duration",
            abs(duration - nominal) <= half_frame + 1e-6,
            f"{duration:.3f} s ({frames} frames)",
            " or ".join(f"{d:.3f} s to the nearest frame" for d in spec.durations),
        )
    )
    if spec.min_video_kbps is not None:
        kbps = int(video.get("bit_rate") or probe["format"].get("bit_rate", 0)) / 1000
        add(
            Rule(
                "video bitrate",
                kbps >= spec.min_video_kbps,
                f"{kbps / 1000:.1f} Mbps",
                f">= {spec.min_video_kbps / 1000:g} Mbps",
            )
        )
    if audio is None:
        add(Rule("audio stream", False, "none", "48 kHz stereo"))
        return report
    acodec = audio["codec_name"]
    add(Rule("audio codec", acodec in spec.audio_codecs, acodec, "AAC or PCM"))
    add(
        Rule(
            "audio sample rate",
            audio.get("sample_rate") == str(RATE),
            f"{audio.get('sample_rate')} Hz",
            "48000 Hz",
        )
    )
    add(
        Rule("audio channels", audio.get("channels") == 2, str(audio.get("channels")), "2 (stereo)")
    )
    if spec.min_aac_kbps is not None and acodec == "aac":
        kbps = int(audio.get("bit_rate", 0)) / 1000
        add(
            Rule(
                "audio bitrate",
                kbps >= spec.min_aac_kbps * 0.98,
                f"{kbps:.0f} kbps",
                f">= {spec.min_aac_kbps} kbps",
            )
        )
    if spec.loudness or spec.max_true_peak is not None:
        samples = pcm(path).astype(np.float64)
        if spec.loudness:
            target, tolerance = spec.loudness
            lufs = pyloudnorm.Meter(RATE).integrated_loudness(samples)
            add(
                Rule(
                    "integrated loudness",
                    abs(lufs - target) <= tolerance,
                    f"{lufs:.1f} LKFS",
                    f"{target:g} ± {tolerance:g} LKFS",
                )
            )
        if spec.max_true_peak is not None:
            peak = true_peak_dbtp(samples)
            add(
                Rule(
                    "true peak",
                    peak <= spec.max_true_peak,
                    f"{peak:.1f} dBTP",
                    f"<= {spec.max_true_peak:g} dBTP",
                )
            )
    if spec.check_duplicates:
        dupes = _duplicated_frames(path)
        add(
            Rule(
                "no duplicated frames",
                not dupes,
                f"{len(dupes)} repeats" + (f", first at frame {dupes[0]}" if dupes else ""),
                "0 repeats",
            )
        )
        first = _first_frame_spread(path)
        add(
            Rule(
                "no slate or countdown",
                first > 8.0,
                f"first frame spread {first:.0f}",
                "picture from the first frame",
            )
        )
    return report


def true_peak_dbtp(samples: np.ndarray) -> float:
    up = resample_poly(samples, 4, 1, axis=0)
    peak = float(np.max(np.abs(up)))
    return 20 * np.log10(peak) if peak > 0 else -120.0


def _probe(path: Path) -> dict | None:
    result = subprocess.run(
        [
            tool("ffprobe"),
            "-v",
            "error",
            "-print_format",
            "json",
            "-show_format",
            "-show_streams",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(result.stdout) if result.returncode == 0 else None


def _duplicated_frames(path: Path) -> list[int]:
    """Indices of frames identical to the one before (decoded pixels, hashed)."""
    out = subprocess.run(
        [tool(), "-v", "error", "-i", str(path), "-map", "0:v:0", "-f", "framemd5", "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    hashes = [
        line.split(",")[-1].strip()
        for line in out.splitlines()
        if line and not line.startswith("#")
    ]
    return [i for i in range(1, len(hashes)) if hashes[i] == hashes[i - 1]]


def _first_frame_spread(path: Path) -> float:
    """Standard deviation of the first frame's luma: a slate or black is near-uniform."""
    raw = subprocess.run(
        [
            tool(),
            "-v",
            "error",
            "-i",
            str(path),
            "-map",
            "0:v:0",
            "-frames:v",
            "1",
            "-vf",
            "scale=320:180",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "gray",
            "-",
        ],
        capture_output=True,
        check=True,
    ).stdout
    return float(np.frombuffer(raw, dtype=np.uint8).std())
