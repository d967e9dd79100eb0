"""The audio bed: built-in or uploaded, normalised to -24 LKFS with true peak under -2 dBTP."""

from __future__ import annotations

import subprocess

import numpy as np
import pyloudnorm
import pytest

from templates import audio, qc
from templates.errors import BriefError


def measure(wav):
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(wav), "-f", "f32le", "-ac", "2", "-ar", "48000", "-"],
        capture_output=True,
        check=True,
    ).stdout
    samples = np.frombuffer(raw, dtype=np.float32).reshape(-1, 2).astype(np.float64)
    return samples, pyloudnorm.Meter(48000).integrated_loudness(samples), qc.true_peak_dbtp(samples)


@pytest.mark.parametrize("style", list(audio.STYLES))
def test_built_in_beds_normalise_to_broadcast_loudness(tmp_path, style):
    bed = audio.built_in_bed(style, 110, 15.0)
    assert bed.shape == (15 * 48000, 2) and np.abs(bed).max() > 0.05
    samples, lufs, peak = measure(_normalised(bed, tmp_path))
    assert abs(lufs - -24.0) <= 0.5 and peak <= -2.0
    assert len(samples) >= 15 * 48000 - 48


def test_an_uploaded_loud_track_is_tamed(tmp_path):
    song = tmp_path / "song.mp3"
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=330:duration=40,volume=0.99",
            "-ac",
            "2",
            str(song),
        ],
        check=True,
    )
    bed = audio.decode(song, 30.0)
    assert bed.shape == (30 * 48000, 2)
    assert np.abs(bed[-10:]).max() < 0.01  # faded out at the end of the spot, not cut
    _, lufs, peak = measure(_normalised(bed, tmp_path))
    assert abs(lufs - -24.0) <= 0.5 and peak <= -2.0


def test_unreadable_audio_is_a_clear_error(tmp_path):
    junk = tmp_path / "bed.mp3"
    junk.write_bytes(b"not audio at all")
    with pytest.raises(BriefError, match=r"cannot read the audio in bed\.mp3; export it again"):
        audio.decode(junk, 15.0)


def _normalised(bed, tmp_path):
    wav = tmp_path / "bed.wav"
    audio.normalize(bed, wav)
    return wav
