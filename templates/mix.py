"""The voice-over on its bed: the script spoken sentence by sentence, each sentence placed on
the spot's scenes, and the bed ducked under the voice. The mix is then normalised like any bed
(audio.normalize), so it still measures -24 LKFS with true peak under -2 dBTP.

Timing: nothing is said in the opening's first LEAD_IN seconds (the picture sets the scene)
nor in the last TAIL seconds (the end card is read, the music closes). The first sentence
starts at LEAD_IN; each next one waits for the next scene's cut (ON_CUT after it) when the
rest of the script still fits after that, and otherwise follows GAP after the one before.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np
import pyloudnorm

from templates.audio import RATE
from templates.errors import BriefError
from templates.storyboard import Storyboard
from templates.voice import sentences, speak

LEAD_IN = 1.0
TAIL = 2.0
GAP = 0.3
ON_CUT = 0.25  # past a crossfade's first moments
DUCK_DB = 12.0  # the bed under speech: clearly behind the voice, still heard
ATTACK, RELEASE = 0.15, 0.5  # the bed dips just before a sentence and comes back after it
VOICE_LU = 4.0  # the voice's loudness above the whole (unducked) bed's, before normalising


class VoiceOverTooLong(BriefError):
    """A script that, spoken, does not fit between the spot's lead-in and its tail."""


def room(duration: float) -> float:
    """Seconds of a spot that a voice-over may fill."""
    return duration - LEAD_IN - TAIL


def spoken_length(text: str, duration: int) -> float:
    """How long the script runs spoken (its sentences one after another); refused, in one
    sentence, when a spot of `duration` seconds has no room for it."""
    takes = _takes(text)
    if text.strip() and not takes:
        raise BriefError("The voice-over has no words the voice can say: it reads English.")
    return _fitted(takes, duration)


def voiced(bed: np.ndarray, storyboard: Storyboard) -> np.ndarray:
    """The bed with the brief's voice-over on it (the bed alone when there is none)."""
    takes = _takes(storyboard.brief.voiceover)
    if not takes:
        return bed
    _fitted(takes, storyboard.duration)
    cuts = [scene.start for scene in storyboard.scenes[1:]]
    starts = _starts([len(t) / RATE for t in takes], cuts, storyboard.duration)
    voice = np.zeros(len(bed), dtype=np.float32)
    spans = []
    for start, take in zip(starts, takes, strict=True):
        at = round(start * RATE)
        voice[at : at + len(take)] = take
        spans.append((start, start + len(take) / RATE))
    return (_ducked(bed, spans) + _level(voice, bed)[:, None]).astype(np.float32)


def _takes(text: str) -> list[np.ndarray]:
    """Each sentence spoken (two Festival processes at a time: it runs on one core)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return [take for take in pool.map(_spoken, sentences(text)) if len(take)]


@lru_cache(maxsize=32)  # a script typed on the brief page is measured again at each change
def _spoken(sentence: str) -> np.ndarray:
    take = speak(sentence)
    take.flags.writeable = False  # shared by every caller
    return take


def _fitted(takes: list[np.ndarray], duration: int) -> float:
    length = sum(len(t) for t in takes) / RATE + GAP * max(len(takes) - 1, 0)
    if length > room(duration):
        other = " or choose the 30 s spot" if duration < 30 else ""
        raise VoiceOverTooLong(
            f"The voice-over runs {length:.1f} s; a {duration} s spot has room for about "
            f"{room(duration):.0f} s. Shorten it{other}."
        )
    return length


def _starts(lengths: list[float], cuts: list[float], duration: float) -> list[float]:
    end = duration - TAIL
    starts, at = [], LEAD_IN
    for i, length in enumerate(lengths):
        rest = sum(lengths[i:]) + GAP * (len(lengths) - i - 1)
        on_cut = next((c + ON_CUT for c in cuts if c + ON_CUT >= at), None) if i else None
        if on_cut is not None and on_cut + rest <= end:
            at = on_cut
        starts.append(at)
        at += length + GAP
    return starts


def _ducked(bed: np.ndarray, spans: list[tuple[float, float]]) -> np.ndarray:
    """The bed DUCK_DB down while the voice speaks, with linear ramps in and out: it stays down
    over the GAP between two sentences, and comes up between a sentence and one on a later cut."""
    t = np.arange(len(bed)) / RATE
    depth = np.zeros(len(bed))
    for start, end in spans:
        ramp = np.minimum((t - start + ATTACK) / ATTACK, (end + RELEASE - t) / RELEASE)
        depth = np.maximum(depth, np.clip(ramp, 0.0, 1.0))
    return bed * (10 ** (-DUCK_DB * depth / 20))[:, None]


def _level(voice: np.ndarray, bed: np.ndarray) -> np.ndarray:
    """The voice at VOICE_LU over the bed (BS.1770 integrated, silence gated out of both), so
    an uploaded track, however loud, never buries it."""
    meter = pyloudnorm.Meter(RATE)
    both = np.stack([voice, voice], axis=1)
    difference = meter.integrated_loudness(bed.astype(np.float64)) - meter.integrated_loudness(
        both.astype(np.float64)
    )
    return voice * 10 ** ((difference + VOICE_LU) / 20)
