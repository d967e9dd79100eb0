"""What broadcast QC measures on the decoded file: black, frozen and flashing picture, legal
levels, silence and clipping, each a `Rule` with its measured and its expected value.

One ffmpeg run decodes the file once for all of them (`decode`). The full picture is hashed for
repeated frames; a quarter-size copy taken by dropping pixels feeds freezedetect (it keeps the
grain, so our still scenes are not frozen); one taken by averaging pixels feeds blackdetect and
signalstats, since averaging is the spatial low-pass EBU R 103 measures levels through (grain and
codec ringing on white text then count as the legal levels they are); silencedetect listens in
the same run.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from templates.audio import tool
from templates.qc_specs import Spec

SAMPLED_SIDE = 480  # longest side of the small copies: 1080p is read at a quarter size
# Mean absolute frame difference under -60 dB (a quarter of a level) is a frozen picture: x264's
# refinement of a held frame stays under -70 dB, our grain (sigma 1.5 levels) at -55 to -50 dB
# (measured on real renders).
FREEZE = "freezedetect=n=-60dB:d=0.5"
SILENCE = "silencedetect=n=-60dB:d=0.1"  # -60 dBFS: the level templates.audio calls silent
BLACK = "blackdetect=d=0:pic_th=0.98:pix_th=0.10"  # 98 % of pixels within 10 % of black
# A flash is a pair of opposing changes of 10 % of the luma range: WCAG 2.x's "general flash",
# the usual stand-in for Ofcom's and BT.1702's 20 cd/m² on a display of about 200 cd/m².
FLASH_SWING = 0.10 * (235 - 16)
FULL_SCALE = 0.999
LEVELS = ("YAVG", "BRNG", "YMIN", "YMAX", "UMIN", "UMAX", "VMIN", "VMAX")

Stretch = tuple[float, float]  # start and end, in seconds


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


@dataclass(frozen=True)
class Decoded:
    hashes: list[str]  # one per frame
    black: list[Stretch]
    frozen: list[Stretch]
    silent: list[Stretch]
    levels: dict[str, np.ndarray]  # signalstats' LEVELS, one value per frame


def decode(
    path: Path, *, hashes: bool = False, size: tuple[int, int] | None = None, audio: bool = False
) -> Decoded:
    """Decode the file once: frame hashes if `hashes`, the picture measures if `size` (the
    frame size) is given, silences if `audio`."""
    graph, outputs = _graph(hashes, size, audio)
    result = subprocess.run(
        [tool(), "-hide_banner", "-nostats", "-i", str(path), "-filter_complex", *graph, *outputs],
        capture_output=True,
        text=True,
        check=True,
    )
    log = result.stderr
    return Decoded(
        hashes=[
            line.split(",")[-1].strip()
            for line in result.stdout.splitlines()
            if line and not line.startswith("#")
        ],
        black=_stretches(log, "black"),
        frozen=_stretches(log, "freeze"),
        silent=_stretches(log, "silence"),
        levels={
            key: np.array(re.findall(rf"lavfi\.signalstats\.{key}=([-\d.e]+)", log), dtype=float)
            for key in LEVELS
        },
    )


def _graph(hashes: bool, size: tuple[int, int] | None, audio: bool) -> tuple[list[str], list[str]]:
    """The filter graph (one argument) and the outputs: frame hashes to stdout, and a null
    output for the detectors, which log what they find (at ffmpeg's default level, info)."""
    video = ["[full]"] * hashes + ["[sampled]", "[averaged]"] * (size is not None)
    graph = [f"[0:v:0]split={len(video)}{''.join(video)}"] if video else []
    outputs = ["-map", "[full]", "-f", "framemd5", "pipe:1"] if hashes else []
    measured = []
    if size is not None:
        step = max(1, max(size) // SAMPLED_SIDE)
        w, h = (max(2, side // step // 2 * 2) for side in size)
        graph += [
            f"[sampled]scale={w}:{h}:flags=neighbor,{FREEZE}[frozen]",
            f"[averaged]scale={w}:{h}:flags=area,{BLACK},signalstats=stat=brng,metadata=print[levels]",
        ]
        measured += ["[frozen]", "[levels]"]
    if audio:
        graph.append(f"[0:a:0]{SILENCE}[sound]")
        measured.append("[sound]")
    if measured:
        outputs += [arg for label in measured for arg in ("-map", label)] + ["-f", "null", "-"]
    return [";".join(graph)], outputs


def _stretches(log: str, kind: str) -> list[Stretch]:
    """The detector's stretches; one still open at the end of the file ends there (inf)."""
    starts = [float(s) for s in re.findall(rf"{kind}_start:\s*([\d.]+)", log)]
    ends = [float(e) for e in re.findall(rf"{kind}_end:\s*([\d.]+)", log)]
    ends += [float("inf")] * (len(starts) - len(ends))
    return list(zip(starts, ends, strict=True))


def repeats(hashes: list[str]) -> list[int]:
    """Indices of frames identical to the one before."""
    return [i for i in range(1, len(hashes)) if hashes[i] == hashes[i - 1]]


def picture_rules(decoded: Decoded, spec: Spec, duration: float, fps: float) -> list[Rule]:
    rules = []
    if spec.max_black_s is not None:
        rules.append(
            stretch_rule(
                ("no black stretches", "black"),
                decoded.black,
                (spec.max_black_s, spec.edge_black_s),
                duration,
                fps,
            )
        )
    if spec.max_freeze_s is not None:
        limits = (spec.max_freeze_s, spec.max_freeze_s)
        frozen = [f for f in decoded.frozen if not _within(f, decoded.black, 1 / fps)]
        rules.append(stretch_rule(("no frozen picture", "frozen"), frozen, limits, duration, fps))
    if spec.max_flashes is not None:
        most, at = flashes(decoded.levels["YAVG"], fps)
        rules.append(
            Rule(
                "no flashing",
                most <= spec.max_flashes,
                f"{most} flashes in the second from {at / fps:.2f} s" if most else "none",
                f"<= {spec.max_flashes} in any second (Ofcom, ITU-R BT.1702)",
            )
        )
    if spec.max_out_of_range is not None:
        rules.append(range_rule(decoded.levels, spec.max_out_of_range))
    return rules


def silence_rule(silent: list[Stretch], limit: float, duration: float, fps: float) -> Rule:
    return stretch_rule(("no silence", "silent"), silent, (limit, limit), duration, fps)


def clipping_rule(samples: np.ndarray, limit: int) -> Rule:
    clipped = int(np.count_nonzero(np.abs(samples) >= FULL_SCALE))
    return Rule(
        "no clipping",
        clipped <= limit,
        f"{clipped} samples at full scale",
        f"<= {limit} samples at |x| >= {FULL_SCALE}",
    )


def stretch_rule(
    names: tuple[str, str],
    stretches: list[Stretch],
    limits: tuple[float, float],
    duration: float,
    fps: float,
) -> Rule:
    """Pass when no stretch is longer than the first limit, or than the second where it touches
    the head or the tail (within a frame). `names`: the rule's, and the stretch's adjective."""
    (name, what), (limit, edge), frame = names, limits, 1 / fps
    stretches = [(start, min(end, duration)) for start, end in stretches]

    def touches_edge(start: float, end: float) -> bool:
        return start < frame or end > duration - frame

    faults = [
        (s, e) for s, e in stretches if e - s > (edge if touches_edge(s, e) else limit) + 1e-6
    ]
    if not faults:
        measured = f"longest {max(e - s for s, e in stretches):.2f} s" if stretches else "none"
    elif faults[0][0] < frame and faults[0][1] > duration - frame:
        measured = f"{what} throughout"
    else:
        start, end = faults[0]
        more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        measured = f"{end - start:.2f} s {what} from {start:.2f} s{more}"
    expected = f"none over {limit:g} s"
    if edge != limit:
        expected += f"; {f'up to {edge:g} s' if edge else 'none'} at head and tail"
    return Rule(name, not faults, measured, expected)


def _within(stretch: Stretch, others: list[Stretch], slack: float) -> bool:
    """Whether `stretch` lies inside one of `others`: held black is black, not a freeze."""
    return any(s - slack <= stretch[0] and stretch[1] <= e + slack for s, e in others)


def flashes(luma: np.ndarray, fps: float) -> tuple[int, int]:
    """Most flashes (pairs of opposing changes) in any one second of mean luma per frame, and
    the frame that second starts at."""
    changes = np.array(_changes(luma))
    if len(changes) < 2:
        return 0, 0
    ends = np.searchsorted(changes, changes + round(fps))  # changes within a second of each
    counts = ends - np.arange(len(changes))
    worst = int(counts.argmax())
    return int(counts[worst]) // 2, int(changes[worst])


def _changes(luma: np.ndarray) -> list[int]:
    """Frames where the luma has moved FLASH_SWING away from its extreme since the last change,
    the other way from that change: a slow fade is one change, however long."""
    changes: list[int] = []
    direction, extreme = 0, luma[0] if len(luma) else 0.0
    for i, y in enumerate(luma):
        if direction * (y - extreme) > 0:
            extreme = y
        elif abs(y - extreme) >= FLASH_SWING:
            changes.append(i)
            direction, extreme = (1 if y > extreme else -1), y
    return changes


def range_rule(levels: dict[str, np.ndarray], limit: float) -> Rule:
    """signalstats' BRNG: the share of a frame's pixels outside luma 16-235 or chroma 16-240."""
    share = levels["BRNG"]
    worst = int(share.argmax())
    extremes = ", ".join(
        f"{plane} {levels[plane + 'MIN'].min():.0f}-{levels[plane + 'MAX'].max():.0f}"
        for plane in "YUV"
    )
    return Rule(
        "legal video range",
        share[worst] <= limit,
        f"{share[worst]:.2%} outside in frame {worst}; {extremes}",
        f"<= {limit:.0%} of a frame outside Y 16-235, U/V 16-240 (EBU R 103)",
    )
