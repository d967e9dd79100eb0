"""The voice-over's voice: Festival speaking with the CMU ARCTIC "SLT" HTS voice, offline.

It is the most natural voice that installs from the package registries here (Debian's
`festival` and `festvox-us-slt-hts`); neural voices such as Piper's download their models at
run time. The same text gives the same samples, so a variant re-rendered from its stored script
says exactly what was approved.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import unicodedata
from pathlib import Path

import numpy as np

from templates.audio import RATE, pcm

VOICE = "voice_cmu_us_slt_arctic_hts"
MISSING = (
    "the voice-over needs Festival and its SLT voice; install the Debian packages festival "
    "and festvox-us-slt-hts (make run does)"
)
SILENCE = 10 ** (-50 / 20)  # below -50 dBFS is the voice's own lead-in and tail, not speech
MARGIN = 0.03  # seconds kept either side of the speech, so no consonant is clipped
# Festival reads ASCII: typographic punctuation becomes its plain form, accents are dropped.
PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": ", ", "…": "..."})
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The script's sentences, in order (a sentence ends at . ! or ? before a space)."""
    return [s for s in SENTENCE_END.split(" ".join(text.split())) if s]


def speak(text: str) -> np.ndarray:
    """`text` spoken: mono float32 at audio.RATE, without the silence before and after it."""
    program = shutil.which("text2wave")
    if program is None:
        raise RuntimeError(MISSING)
    plain = unicodedata.normalize("NFKD", text.translate(PLAIN)).encode("ascii", "ignore")
    if not plain.strip():
        return np.zeros(0, dtype=np.float32)  # nothing this English voice can say
    with tempfile.TemporaryDirectory(prefix="spotforge-voice-") as tmp:
        script, wav = Path(tmp) / "script.txt", Path(tmp) / "voice.wav"
        script.write_bytes(plain)  # a file, never the command line: text is not code
        run = subprocess.run(
            [program, "-eval", f"({VOICE})", "-o", str(wav), str(script)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        # A missing voice is no exit status, only a message and no file.
        if run.returncode != 0 or not wav.is_file() or wav.stat().st_size == 0:
            raise RuntimeError(f"{MISSING} ({run.stderr.strip()[-200:]})")
        samples = pcm(wav)[:, 0].copy()
    loud = np.flatnonzero(np.abs(samples) > SILENCE)
    if not len(loud):
        return samples[:0]
    margin = round(MARGIN * RATE)
    return samples[max(loud[0] - margin, 0) : loud[-1] + margin]
