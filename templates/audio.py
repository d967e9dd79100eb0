"""The audio bed: the business's own track or a built-in one, normalised for broadcast.

Loudness follows ATSC A/85: ffmpeg's EBU R128 `loudnorm` in two passes (measure, then apply
the measured values with a linear gain) to -24 LKFS integrated, true peak under the ceiling.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from templates.errors import BriefError

log = logging.getLogger(__name__)

RATE = 48_000
TARGET_LUFS = -24.0
TRUE_PEAK_CEILING = -3.0  # 1 dB under the spec's -2 dBTP, for the AAC encode's overshoot

LOOP_CROSSFADE = 1.0  # seconds where a short uploaded track runs into its own start again
MIN_TRACK = 2 * LOOP_CROSSFADE  # seconds: shorter is a sound effect, not a bed to loop
SILENT = 10 ** (-60 / 20)  # a track whose loudest sample is under -60 dBFS has no music in it


@dataclass(frozen=True)
class Style:
    label: str  # what it suits, as the brief names it
    key: int  # the I-V-vi-IV progression's root, semitones above A
    percussive: bool  # a light hi-hat
    bpm: int  # its tempo when a brief chooses it (a template's own bed sets one)
    pulses: int = 1  # bass notes per beat


STYLES = {
    "upbeat": Style("Upbeat retail", 0, True, 116),
    "bright": Style("Bright tech", 3, True, 120),
    "warm": Style("Warm family", -4, False, 92),
    "calm": Style("Calm café", -2, False, 84),
    "driving": Style("Driving sport", 2, True, 132, pulses=2),
}


def tool(name: str = "ffmpeg") -> str:
    """The path of ffmpeg (or ffprobe), or a clear error when it is not installed."""
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} is required to render and check spots; install ffmpeg")
    return path


def pcm(path: Path, duration: float | None = None) -> np.ndarray:
    """The file's first audio stream as 48 kHz stereo float32, at most `duration` seconds."""
    limit = ["-t", f"{duration:.6f}"] if duration is not None else []
    result = subprocess.run(
        [
            tool(),
            "-v",
            "error",
            "-i",
            str(path),
            *limit,
            "-map",
            "0:a:0",
            "-f",
            "f32le",
            "-ac",
            "2",
            "-ar",
            str(RATE),
            "-",
        ],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0 or not result.stdout:
        # ffmpeg's own words name server paths: they go to the log, not to the user.
        log.info("ffmpeg could not decode %s: %s", path, result.stderr.decode()[-300:])
        raise BriefError(f"cannot read the audio in {path.name}; export it again as WAV or MP3")
    return np.frombuffer(result.stdout, dtype=np.float32).reshape(-1, 2)


def built_in_bed(style: str, bpm: int, duration: float, seed: int = 0) -> np.ndarray:
    """A simple, pleasant music bed: pads on a I-V-vi-IV progression, bass on the beat, and a
    light hi-hat in the brighter styles. Stereo float32 at 48 kHz, `duration` seconds."""
    chosen = STYLES[style]
    n = round(duration * RATE)
    t = np.arange(n) / RATE
    beat = 60.0 / bpm
    bar = 4 * beat
    progression = [(0, 4, 7), (7, 11, 14), (9, 12, 16), (5, 9, 12)]  # I V vi IV
    chord_index = (t // bar).astype(int) % 4
    left = np.zeros(n)
    right = np.zeros(n)
    base = 220.0 * 2 ** (chosen.key / 12)
    for voice in range(3):
        semis = np.array([c[voice] for c in progression])[chord_index]
        f = base * 2 ** (semis / 12)
        phase = 2 * np.pi * np.cumsum(f) / RATE
        left += 0.12 * np.sin(phase * 1.002) + 0.04 * np.sin(2 * phase)
        right += 0.12 * np.sin(phase * 0.998) + 0.04 * np.sin(2 * phase)
    in_beat = (t % (beat / chosen.pulses)) / (beat / chosen.pulses)
    bass_f = base / 2 * 2 ** (np.array([c[0] for c in progression])[chord_index] / 12)
    bass = 0.22 * np.sin(2 * np.pi * np.cumsum(bass_f) / RATE) * np.exp(-4 * in_beat)
    left += bass
    right += bass
    if chosen.percussive:
        rng = np.random.default_rng(seed)
        hat = rng.normal(0, 1, n) * np.exp(-40 * ((t + beat / 2) % beat) / beat) * 0.05
        left += hat
        right += np.roll(hat, 24)
    envelope = np.minimum(1.0, t / 0.3) * np.minimum(1.0, (duration - t) / 1.2)
    return (np.stack([left, right], axis=1) * envelope[:, None]).astype(np.float32)


def decode(path: Path, duration: float) -> np.ndarray:
    """Any audio file as a bed: 48 kHz stereo float32 of exactly `duration` seconds, cut to it
    or, when shorter, looped (crossfading into its own start: dead air under a TV spot sounds
    like a fault), with a 1 s fade-in and a 2 s fade-out."""
    track = pcm(path, duration)
    if len(track) < MIN_TRACK * RATE:
        raise BriefError(f"the audio in {path.name} is under {MIN_TRACK:g} s; use a longer track")
    if not np.abs(track).max() > SILENT:  # also NaN: nothing to bring up to broadcast loudness
        raise BriefError(f"the audio in {path.name} is silent; use a track with sound")
    n = round(duration * RATE)
    samples = track
    while len(samples) < n:
        samples = _crossfaded(samples, track)
    t = np.arange(n) / RATE
    fade = np.minimum(1.0, np.minimum(t / 1.0, (duration - t) / 2.0))[:, None]
    return (samples[:n] * fade).astype(np.float32)


def _crossfaded(head: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """`tail` after `head`, overlapping by LOOP_CROSSFADE with equal-power ramps, which keep
    the level steady across two unrelated stretches of music."""
    overlap = round(LOOP_CROSSFADE * RATE)
    ramp = np.linspace(0.0, np.pi / 2, overlap, dtype=np.float32)[:, None]
    mixed = head[len(head) - overlap :] * np.cos(ramp) + tail[:overlap] * np.sin(ramp)
    return np.concatenate([head[: len(head) - overlap], mixed, tail[overlap:]])


def normalize(samples: np.ndarray, wav_out: Path) -> dict:
    """Two-pass loudness normalisation into a 48 kHz stereo WAV; returns pass one's measures."""
    source = wav_out.with_suffix(".raw.wav")
    _write_wav(samples, source)
    target = f"I={TARGET_LUFS}:TP={TRUE_PEAK_CEILING}:LRA=11"
    measure = subprocess.run(
        [
            tool(),
            "-hide_banner",
            "-nostats",
            "-i",
            str(source),
            "-af",
            f"loudnorm={target}:print_format=json",
            "-f",
            "null",
            "-",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    stats = json.loads(measure.stderr[measure.stderr.rindex("{") :])
    measured = (
        f"measured_I={stats['input_i']}:measured_TP={stats['input_tp']}:"
        f"measured_LRA={stats['input_lra']}:measured_thresh={stats['input_thresh']}:"
        f"offset={stats['target_offset']}:linear=true"
    )
    subprocess.run(
        [
            tool(),
            "-v",
            "error",
            "-y",
            "-i",
            str(source),
            "-af",
            f"loudnorm={target}:{measured}",
            "-ar",
            str(RATE),
            "-ac",
            "2",
            "-c:a",
            "pcm_s24le",
            str(wav_out),
        ],
        check=True,
    )
    source.unlink()
    return stats


def _write_wav(samples: np.ndarray, path: Path) -> None:
    subprocess.run(
        [
            tool(),
            "-v",
            "error",
            "-y",
            "-f",
            "f32le",
            "-ar",
            str(RATE),
            "-ac",
            "2",
            "-i",
            "-",
            "-c:a",
            "pcm_f32le",
            str(path),
        ],
        input=np.ascontiguousarray(samples, dtype=np.float32).tobytes(),
        check=True,
    )
