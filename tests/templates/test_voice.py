"""The voice-over and the music under it: Festival speaks the script, each sentence placed on
the scenes, the bed ducks under the voice and the spot is still at broadcast loudness; an
uploaded track is cut or looped to the spot, faded and normalised."""

from __future__ import annotations

import subprocess

import numpy as np
import pyloudnorm
import pytest

from templates import audio, mix, qc, voice
from templates.audio import RATE
from templates.export import PREVIEW, render
from templates.motion import Still
from templates.spec import load_template
from templates.storyboard import build_storyboard

SCRIPT = (
    "Fresh espresso, roasted every morning. Twenty percent off all beans this week. "
    "Order at harbor coffee dot com."
)


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))


def at(seconds: float) -> int:
    return round(seconds * RATE)


@pytest.fixture(scope="module")
def board(brief):
    """Product hero (15 s; cuts at 3.5, 8.5 and 11.5 s) with a three-sentence voice-over."""
    return build_storyboard(
        load_template("product-hero"), brief.model_copy(update={"voiceover": SCRIPT})
    )


@pytest.fixture(scope="module")
def bed(board):
    return audio.built_in_bed(board.audio_style, board.audio_bpm, board.duration)


def test_the_voice_speaks_the_same_every_time():
    take = voice.speak("Fresh espresso, roasted every morning.")
    assert 1.5 < len(take) / RATE < 4.0  # six words, spoken
    assert rms(take) > 0.02 and rms(take[:480]) < rms(take) / 4  # speech, its silence trimmed
    assert np.array_equal(take, voice.speak("Fresh espresso, roasted every morning."))
    assert voice.sentences("One.  Two!\nThree? www.a.com Four") == [
        "One.",
        "Two!",
        "Three?",
        "www.a.com Four",
    ]


def test_the_voice_over_follows_the_scenes_and_ducks_the_bed(board, bed):
    # The mix is linear in the bed, and the voice's level depends only on the bed's loudness:
    # with the bed negated the voice stays and the bed flips, so half the sum of the two mixes
    # is the voice alone and half their difference the ducked bed.
    plus, minus = mix.voiced(bed, board), mix.voiced(-bed, board)
    spoken, ducked = (plus + minus) / 2, (plus - minus) / 2
    onsets, ends = _runs(np.abs(spoken[:, 0]) > 1e-4)
    # The first sentence after the opening's first second; the second straight after it (it
    # ends just past the hero's cut, and waiting for the offer's would leave the third no
    # room); the third on the offer's cut. Nothing over the end card's last two seconds.
    offer = board.scenes[2]
    assert offer.kind == "offer"
    expected = [mix.LEAD_IN, ends[0] + mix.GAP, offer.start + mix.ON_CUT]
    assert onsets == pytest.approx(expected, abs=0.02)
    assert ends[-1] <= board.duration - mix.TAIL

    gain = np.abs(ducked[:, 0]) / np.maximum(np.abs(bed[:, 0]), 1e-9)
    sounding = np.abs(bed[:, 0]) > 1e-3

    def gain_db(a: float, b: float) -> float:
        window = slice(at(a), at(b))
        return 20 * np.log10(np.median(gain[window][sounding[window]]))

    assert gain_db(0.1, mix.LEAD_IN - mix.ATTACK) == pytest.approx(0.0, abs=0.01)
    assert gain_db(onsets[0] + 0.2, ends[0] - 0.2) == pytest.approx(-mix.DUCK_DB, abs=0.01)
    assert gain_db(ends[-1] + mix.RELEASE + 0.05, board.duration - 0.5) == pytest.approx(
        0, abs=0.01
    )


def test_the_rendered_spot_carries_the_ducked_voice_at_broadcast_loudness(
    board, bed, photos, tmp_path
):
    """Measured in the file. A preview carries the same mix as a final (only the AAC bitrate
    differs); a voiced final through broadcast QC is test_pictures.py's."""
    visuals = {
        s.index: Still(photos["backdrop"]) for s in board.scenes if s.visual.source != "brand"
    }
    spot = render(board, visuals, PREVIEW, tmp_path / "voiced.mp4")
    assert spot.report.passed, spot.report.text()
    # What the viewer hears: the bed's own level (its projection on the known bed) while the
    # voice speaks, against before the voice starts and after it ends.
    heard = audio.pcm(spot.path).astype(np.float64)
    assert 0 <= len(heard) - board.duration * RATE < 1024  # the whole spot (AAC pads a frame)
    lkfs = pyloudnorm.Meter(RATE).integrated_loudness(heard)
    assert lkfs == pytest.approx(qc.BROADCAST.loudness[0], abs=qc.BROADCAST.loudness[1])

    def bed_db(a: float, b: float) -> float:
        window = slice(at(a), at(b))
        known = bed[window].astype(np.float64)
        return 20 * np.log10(np.sum(heard[window] * known) / np.sum(known * known))

    before, during = bed_db(0.1, 0.8), bed_db(1.2, 3.0)
    after = bed_db(board.duration - mix.TAIL + mix.RELEASE, board.duration - 0.2)
    print(f"voiced spot: {lkfs:.1f} LKFS, bed ducked {before - during:.1f} dB under the voice")
    assert before - during > 9.0
    assert after == pytest.approx(before, abs=0.3)


def test_a_script_too_long_for_the_spot_is_refused_with_its_length():
    script = " ".join([SCRIPT] * 3)
    assert 12 < mix.spoken_length(script, 30) <= mix.room(30)
    with pytest.raises(
        mix.VoiceOverTooLong,
        match=r"^The voice-over runs \d+\.\d s; a 15 s spot has room for about 12 s\. "
        r"Shorten it or choose the 30 s spot\.$",
    ):
        mix.spoken_length(script, 15)


@pytest.mark.parametrize("seconds", [4, 40])
def test_an_uploaded_track_is_cut_or_looped_to_the_spot_faded_and_normalised(tmp_path, seconds):
    """A short track loops (crossfading into its start), a long one is cut; both fade in and
    out and come out at broadcast loudness."""
    track = tmp_path / "track.mp3"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
         f"sine=frequency=330:duration={seconds},volume=0.9", "-ac", "2", str(track)],
        check=True,
    )  # fmt: skip
    bed = audio.decode(track, 15.0)
    assert bed.shape == (15 * RATE, 2)
    middle = rms(bed[at(5) : at(10)])
    assert rms(bed[: at(0.05)]) < middle / 10 and rms(bed[-at(0.05) :]) < middle / 10
    windows = [rms(bed[at(t) : at(t + 0.05)]) for t in np.arange(1.0, 13.0, 0.05)]
    assert min(windows) > 0.7 * middle  # no gap where the track runs into its start again
    wav = tmp_path / "bed.wav"
    audio.normalize(bed, wav)
    samples = audio.pcm(wav).astype(np.float64)
    lufs = pyloudnorm.Meter(RATE).integrated_loudness(samples)
    assert abs(lufs - audio.TARGET_LUFS) <= 0.5 and qc.true_peak_dbtp(samples) <= -2.0


def _runs(mask: np.ndarray, gap: float = 0.25) -> tuple[list[float], list[float]]:
    """Starts and ends (seconds) of the stretches where `mask` holds, bridging gaps under
    `gap` seconds (the pauses inside a sentence)."""
    where = np.flatnonzero(mask)
    breaks = np.flatnonzero(np.diff(where) > gap * RATE)
    starts = [where[0], *where[breaks + 1]]
    ends = [*where[breaks], where[-1]]
    return [s / RATE for s in starts], [e / RATE for e in ends]
