"""An owner's own picture graded toward the light of the audience it airs to.

A generated background is drawn in the audience's time of day; a photo the owner uploaded was
taken in whatever light there was. `grade` moves it a little toward the audience's light, by a
lookup table per channel (the same every time, and fast enough for every frame of a clip):

- day: left as it is;
- golden: warmer (red up, blue down) and a little softer (contrast lowered around mid-grey);
- night: darker and cooler (every channel down, blue least), contrast kept.

It stays subtle: a shop front must still look like itself, so every table rises with the level
(the picture's tones keep their order) and the grades are modest: golden moves a level by at
most a sixth of the range, night darkens by about a third.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image


@dataclass(frozen=True)
class Light:
    """One time of day as a grade: `gains` per channel (R, G, B), `contrast` around mid-grey,
    `lift` added after, in 8-bit levels."""

    gains: tuple[float, float, float] = (1.0, 1.0, 1.0)
    contrast: float = 1.0
    lift: float = 0.0


LIGHTS = {
    "day": Light(),
    "golden": Light(gains=(1.07, 1.0, 0.88), contrast=0.9, lift=4.0),
    "night": Light(gains=(0.68, 0.72, 0.82), contrast=1.0, lift=-4.0),
}


def grade(image: Image.Image, light: str) -> Image.Image:
    """`image` (any mode) as RGB, graded toward `light` (day, golden or night)."""
    rgb = image.convert("RGB")
    if light not in LIGHTS:
        raise ValueError(f"unknown light {light!r}; one of {', '.join(LIGHTS)}")
    look = LIGHTS[light]
    if look == LIGHTS["day"]:
        return rgb
    table: list[int] = []
    for gain in look.gains:
        for v in range(256):
            level = ((v - 128) * look.contrast + 128) * gain + look.lift
            table.append(min(255, max(0, round(level))))
    return rgb.point(table)
