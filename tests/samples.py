"""Real sample files, made in-process."""

from __future__ import annotations

import io
import wave

from PIL import Image


def png_bytes(color=(200, 40, 40), size=(64, 48)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    return out.getvalue()


def wav_bytes(seconds: float = 0.5, rate: int = 48_000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x00\x00" * 2 * int(seconds * rate))
    return out.getvalue()
