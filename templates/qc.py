"""QC: a file checked against a delivery spec, one pass/fail line per rule.

Stream facts come from ffprobe; loudness is measured on the decoded audio with pyloudnorm
(ITU-R BS.1770-4) and true peak by 4x oversampling. The picture and sound checks (duplicated,
black, frozen and flashing frames, legal levels, silence, clipping) share one decode of the file
(templates/qc_checks.py). The specs, one per destination, are in templates/qc_specs.py.
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

from templates import qc_checks
from templates.audio import RATE, pcm, tool
from templates.qc_checks import Rule
from templates.qc_specs import BROADCAST, PREVIEW, SPECS, Spec

__all__ = ["BROADCAST", "PREVIEW", "SPECS", "Report", "Rule", "Spec", "check", "true_peak_dbtp"]


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
    probe = _probe(path)
    if probe is None:
        report.rules.append(Rule("readable", False, "ffprobe cannot read the file", "a video file"))
        return report
    video = next((s for s in probe["streams"] if s["codec_type"] == "video"), None)
    audio = next((s for s in probe["streams"] if s["codec_type"] == "audio"), None)
    if video is None:
        report.rules.append(Rule("video stream", False, "none", "one video stream"))
        return report
    duration = float(probe["format"]["duration"])
    fps = float(Fraction(video["r_frame_rate"]))
    report.rules += _video_rules(video, probe, spec, duration)
    decoded = _decode(path, spec, video, audio is not None)
    report.rules += _picture_rules(path, decoded, spec, duration, fps)
    if audio is None:
        report.rules.append(Rule("audio stream", False, "none", "48 kHz stereo"))
        return report
    report.rules += _audio_rules(audio, spec)
    report.rules += _level_rules(path, decoded, spec, duration, fps)
    return report


def _video_rules(video: dict, probe: dict, spec: Spec, duration: float) -> list[Rule]:
    codec = video["codec_name"]
    profile = video.get("profile", "")
    size = (video["width"], video["height"])
    sar = video.get("sample_aspect_ratio", "1:1")
    field_order = video.get("field_order", "progressive")
    r_rate, avg_rate = Fraction(video["r_frame_rate"]), Fraction(video["avg_frame_rate"])
    rates = " or ".join(f"{float(r):.3f}" for r in spec.frame_rates)
    rules = [
        Rule(
            "video codec",
            codec in spec.video_codecs and (codec != "h264" or profile == "High"),
            f"{codec} {profile}".strip(),
            "H.264 High or ProRes",
        ),
        Rule(
            "frame size",
            size == (spec.width, spec.height),
            f"{size[0]}x{size[1]}",
            f"{spec.width}x{spec.height}",
        ),
        Rule("square pixels", sar in ("1:1", "0:1"), f"SAR {sar}", "SAR 1:1"),
        Rule("progressive", field_order in ("progressive", "unknown"), field_order, "progressive"),
        Rule("frame rate", r_rate in spec.frame_rates, f"{float(r_rate):.3f} fps", rates),
        Rule(
            "constant frame rate",
            avg_rate == r_rate,
            f"average {float(avg_rate):.3f}, nominal {float(r_rate):.3f}",
            "equal",
        ),
        _duration_rule(
            duration, int(video.get("nb_frames") or round(duration * r_rate)), r_rate, spec
        ),
    ]
    if spec.min_video_kbps is not None:
        kbps = int(video.get("bit_rate") or probe["format"].get("bit_rate", 0)) / 1000
        rules.append(
            Rule(
                "video bitrate",
                kbps >= spec.min_video_kbps,
                f"{kbps / 1000:.1f} Mbps",
                f">= {spec.min_video_kbps / 1000:g} Mbps",
            )
        )
    return rules


def _duration_rule(duration: float, frames: int, rate: Fraction, spec: Spec) -> Rule:
    """Exactly one of the spec's lengths to the nearest frame, or inside one of its ranges."""
    half_frame = 0.5 / float(rate) if rate else 0.0
    exact = any(abs(duration - d) <= half_frame + 1e-6 for d in spec.durations)
    inside = any(lo - half_frame <= duration <= hi + half_frame for lo, hi in spec.duration_ranges)
    expected = [f"{d:.3f} s to the nearest frame" for d in spec.durations]
    expected += [f"{lo:g}-{hi:g} s" for lo, hi in spec.duration_ranges]
    return Rule(
        "duration",
        exact or inside,
        f"{duration:.3f} s ({frames} frames)",
        " or ".join(expected),
    )


def _decode(path: Path, spec: Spec, video: dict, has_audio: bool) -> qc_checks.Decoded | None:
    """The one full decode the spec's checks need, or None when they need none."""
    silence = has_audio and spec.max_silence_s is not None
    if not (spec.check_duplicates or spec.checks_picture or silence):
        return None
    size = (video["width"], video["height"]) if spec.checks_picture else None
    return qc_checks.decode(path, hashes=spec.check_duplicates, size=size, audio=silence)


def _picture_rules(
    path: Path, decoded: qc_checks.Decoded | None, spec: Spec, duration: float, fps: float
) -> list[Rule]:
    if decoded is None:
        return []
    rules = []
    if spec.check_duplicates:
        dupes = qc_checks.repeats(decoded.hashes)
        first = _first_frame_spread(path)
        rules += [
            Rule(
                "no duplicated frames",
                not dupes,
                f"{len(dupes)} repeats" + (f", first at frame {dupes[0]}" if dupes else ""),
                "0 repeats",
            ),
            Rule(
                "no slate or countdown",
                first > 8.0,
                f"first frame spread {first:.0f}",
                "picture from the first frame",
            ),
        ]
    if spec.checks_picture:
        rules += qc_checks.picture_rules(decoded, spec, duration, fps)
    return rules


def _audio_rules(audio: dict, spec: Spec) -> list[Rule]:
    codec, rate = audio["codec_name"], audio.get("sample_rate")
    rules = [
        Rule("audio codec", codec in spec.audio_codecs, codec, "AAC or PCM"),
        Rule(
            "audio sample rate",
            rate in {str(r) for r in spec.sample_rates},
            f"{rate} Hz",
            " or ".join(f"{r} Hz" for r in spec.sample_rates),
        ),
        Rule(
            "audio channels", audio.get("channels") == 2, str(audio.get("channels")), "2 (stereo)"
        ),
    ]
    if spec.min_aac_kbps is not None and codec == "aac":
        kbps = int(audio.get("bit_rate", 0)) / 1000
        rules.append(
            Rule(
                "audio bitrate",
                kbps >= spec.min_aac_kbps * 0.98,
                f"{kbps:.0f} kbps",
                f">= {spec.min_aac_kbps} kbps",
            )
        )
    return rules


def _level_rules(
    path: Path, decoded: qc_checks.Decoded | None, spec: Spec, duration: float, fps: float
) -> list[Rule]:
    rules = []
    samples = None
    if spec.loudness or spec.max_true_peak is not None or spec.max_clipped is not None:
        samples = pcm(path).astype(np.float64)
    if spec.loudness:
        target, tolerance = spec.loudness
        lufs = pyloudnorm.Meter(RATE).integrated_loudness(samples)
        rules.append(
            Rule(
                "integrated loudness",
                abs(lufs - target) <= tolerance,
                f"{lufs:.1f} LKFS",
                f"{target:g} ± {tolerance:g} LKFS",
            )
        )
    if spec.max_true_peak is not None:
        peak = true_peak_dbtp(samples)
        rules.append(
            Rule(
                "true peak",
                peak <= spec.max_true_peak,
                f"{peak:.1f} dBTP",
                f"<= {spec.max_true_peak:g} dBTP",
            )
        )
    if spec.max_clipped is not None:
        rules.append(qc_checks.clipping_rule(samples, spec.max_clipped))
    if spec.max_silence_s is not None and decoded is not None:
        rules.append(qc_checks.silence_rule(decoded.silent, spec.max_silence_s, duration, fps))
    return rules


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
    return qc_checks.repeats(qc_checks.decode(path, hashes=True).hashes)


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
