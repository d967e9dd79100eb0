"""Procedural landscapes with captions: the training data of `mini-sd`.

Each scene is drawn from a seed: an archetype (mountains, city skyline, street, beach, desert,
forest, snowy peaks, lake), a time of day (day, golden hour, night) and weather (clear,
cloudy), with random variation in layout, colour and detail. The caption is built from those
parameters, e.g. "city skyline at night, cloudy".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

ARCHETYPES = {
    "mountains": "green mountains",
    "skyline": "city skyline",
    "street": "street with buildings",
    "beach": "beach and ocean",
    "desert": "desert dunes",
    "forest": "pine forest",
    "snowy": "snowy peaks",
    "lake": "mountain lake",
}
TIMES = {"day": "during the day", "golden": "at golden hour", "night": "at night"}
WEATHER = ("clear", "cloudy")

# Sky colours (top, horizon) per time of day.
SKY = {
    "day": ((70, 130, 210), (170, 210, 240)),
    "golden": ((90, 90, 160), (250, 170, 90)),
    "night": ((8, 10, 30), (30, 40, 80)),
}
# Light on the land per time of day (multiplies ground colours).
LIGHT = {"day": (1.0, 1.0, 1.0), "golden": (1.05, 0.8, 0.6), "night": (0.22, 0.26, 0.4)}


@dataclass(frozen=True)
class SceneParams:
    archetype: str
    time: str
    weather: str
    seed: int

    @property
    def caption(self) -> str:
        return f"{ARCHETYPES[self.archetype]} {TIMES[self.time]}, {self.weather}"


def sample_params(rng: np.random.Generator, seed: int) -> SceneParams:
    return SceneParams(
        str(rng.choice(list(ARCHETYPES))),
        str(rng.choice(list(TIMES))),
        str(rng.choice(WEATHER)),
        seed,
    )


def draw(params: SceneParams, size: int = 128) -> Image.Image:
    """The scene at `size` x `size` (drawn at twice the size, then downsampled)."""
    rng = np.random.default_rng(params.seed)
    big = size * 2
    horizon = int(big * rng.uniform(*HORIZON[params.archetype]))
    image = _sky(params, big, horizon, rng)
    draw_fn = DRAWERS[params.archetype]
    draw_fn(image, params, horizon, rng)
    return image.resize((size, size), Image.Resampling.LANCZOS)


HORIZON = {
    "mountains": (0.45, 0.6),
    "skyline": (0.55, 0.7),
    "street": (0.4, 0.5),
    "beach": (0.45, 0.55),
    "desert": (0.5, 0.62),
    "forest": (0.35, 0.5),
    "snowy": (0.5, 0.65),
    "lake": (0.45, 0.55),
}


def _lit(color, params: SceneParams, rng=None, jitter: float = 0.0) -> tuple[int, int, int]:
    light = LIGHT[params.time]
    factor = 1.0 + (rng.uniform(-jitter, jitter) if rng is not None and jitter else 0.0)
    dim = 0.8 if params.weather == "cloudy" and params.time != "night" else 1.0
    return tuple(
        int(np.clip(c * k * factor * dim, 0, 255)) for c, k in zip(color, light, strict=True)
    )


def _sky(params: SceneParams, size: int, horizon: int, rng) -> Image.Image:
    top, low = (np.array(c, dtype=np.float32) for c in SKY[params.time])
    if params.weather == "cloudy":
        grey = np.array([150, 155, 165] if params.time != "night" else [35, 38, 50], np.float32)
        top, low = 0.45 * top + 0.55 * grey, 0.5 * low + 0.5 * grey
    t = np.clip(np.arange(size) / max(horizon, 1), 0, 1)[:, None]
    rows = top * (1 - t) + low * t
    pixels = np.repeat(rows[:, None, :], size, axis=1)
    image = Image.fromarray(pixels.clip(0, 255).astype(np.uint8))
    d = ImageDraw.Draw(image)
    if params.time == "night" and params.weather == "clear":
        for _ in range(rng.integers(40, 90)):
            x, y = rng.integers(0, size), rng.integers(0, max(horizon - 10, 1))
            b = int(rng.integers(150, 255))
            d.point((x, y), fill=(b, b, b))
    if params.weather == "clear":
        x = int(rng.uniform(0.15, 0.85) * size)
        if params.time == "day":
            y, r, color = int(rng.uniform(0.08, 0.25) * size), size // 18, (255, 250, 220)
        elif params.time == "golden":
            y, r, color = horizon - int(rng.uniform(0.02, 0.1) * size), size // 10, (255, 190, 90)
        else:
            y, r, color = int(rng.uniform(0.1, 0.25) * size), size // 22, (235, 235, 210)
        d.ellipse((x - r, y - r, x + r, y + r), fill=color)
    else:
        clouds = Image.new("L", (size, size), 0)
        cd = ImageDraw.Draw(clouds)
        for _ in range(rng.integers(8, 16)):
            x, y = rng.integers(-20, size), rng.integers(0, max(horizon - size // 8, 1))
            w, h = rng.integers(size // 5, size // 2), rng.integers(size // 16, size // 7)
            cd.ellipse((x, y, x + w, y + h), fill=int(rng.integers(150, 230)))
        clouds = clouds.filter(ImageFilter.GaussianBlur(size / 40))
        shade = (
            (225, 225, 230)
            if params.time == "day"
            else ((200, 150, 130) if params.time == "golden" else (60, 62, 75))
        )
        image.paste(Image.new("RGB", (size, size), shade), (0, 0), clouds)
    return image


def _ridge(size, base, amplitude, roughness, rng, sharp=False) -> np.ndarray:
    x = np.linspace(0, 1, size)
    y = np.zeros(size)
    for octave in range(1, 6):
        freq = octave * rng.uniform(1.0, 2.0) * roughness
        y += rng.uniform(0.5, 1.0) / octave * np.sin(2 * np.pi * (freq * x + rng.uniform()))
    if sharp:
        y = np.abs(y)
    y = (y - y.min()) / max(np.ptp(y), 1e-6)
    return base - y * amplitude


def _fill_below(image, ridge, color):
    d = ImageDraw.Draw(image)
    size = image.width
    d.polygon(
        [(0, size)] + [(i, float(ridge[i])) for i in range(size)] + [(size, size)], fill=color
    )


def _ground(image, params, horizon, color, rng):
    d = ImageDraw.Draw(image)
    d.rectangle((0, horizon, image.width, image.height), fill=_lit(color, params, rng, 0.1))


def _mountains(image, params, horizon, rng):
    size = image.width
    far = _ridge(size, horizon, size * 0.25, 1.0, rng)
    _fill_below(image, far, _lit((90, 110, 130), params, rng, 0.1))
    near = _ridge(size, horizon + size * 0.08, size * 0.18, 0.8, rng)
    _fill_below(image, near, _lit((70, 130, 60), params, rng, 0.15))
    _ground(image, params, int(horizon + size * 0.2), (80, 140, 60), rng)


def _snowy(image, params, horizon, rng):
    size = image.width
    ridge = _ridge(size, horizon, size * rng.uniform(0.3, 0.45), 1.2, rng, sharp=True)
    _fill_below(image, ridge, _lit((110, 110, 125), params, rng, 0.1))
    snow = Image.new("L", image.size, 0)
    d = ImageDraw.Draw(snow)
    cap = ridge + size * rng.uniform(0.06, 0.12)
    d.polygon(
        [(i, float(ridge[i])) for i in range(size)]
        + [(i, float(cap[i])) for i in reversed(range(size))],
        fill=255,
    )
    image.paste(Image.new("RGB", image.size, _lit((245, 248, 255), params)), (0, 0), snow)
    _ground(image, params, int(horizon + size * 0.15), (230, 235, 245), rng)


def _skyline(image, params, horizon, rng):
    size = image.width
    d = ImageDraw.Draw(image)
    x = 0
    night = params.time == "night"
    while x < size:
        w = int(rng.integers(size // 20, size // 8))
        h = int(rng.uniform(0.12, 0.45) * size)
        body = _lit(tuple(int(v) for v in rng.integers(60, 110, 3)), params, rng, 0.1)
        d.rectangle((x, horizon - h, x + w, horizon), fill=body)
        if night or rng.uniform() < 0.3:
            lit = (255, 220, 120) if night else _lit((150, 180, 210), params)
            for wy in range(horizon - h + 4, horizon - 4, 8):
                for wx in range(x + 3, x + w - 3, 7):
                    if rng.uniform() < (0.45 if night else 0.3):
                        d.rectangle((wx, wy, wx + 2, wy + 3), fill=lit)
        x += w + int(rng.integers(0, 4))
    water = _lit((40, 70, 110), params, rng, 0.1)
    d.rectangle((0, horizon, size, size), fill=water)
    for _ in range(30):  # reflections on the water
        y = int(rng.integers(horizon + 2, size))
        xr = int(rng.integers(0, size))
        d.line((xr, y, xr + int(rng.integers(4, 20)), y), fill=_lit((120, 140, 170), params))


def _street(image, params, horizon, rng):
    size = image.width
    _ground(image, params, horizon, (150, 150, 145), rng)  # pavement
    d = ImageDraw.Draw(image)
    vx = int(size * rng.uniform(0.4, 0.6))
    night = params.time == "night"
    d.polygon(
        [(vx - 4, horizon), (vx + 4, horizon), (size * 0.85, size), (size * 0.15, size)],
        fill=_lit((70, 70, 75), params, rng, 0.1),
    )
    d.line((vx, horizon, vx, size), fill=_lit((230, 210, 120), params), width=2)
    for side in (0, 1):
        color = _lit(tuple(int(v) for v in rng.integers(120, 190, 3)), params, rng, 0.1)
        outer = 0 if side == 0 else size
        inner = vx - 6 if side == 0 else vx + 6
        top_far, top_near = horizon - size * 0.12, size * rng.uniform(0.0, 0.1)
        d.polygon(
            [(inner, top_far), (outer, top_near), (outer, size * 0.95), (inner, horizon + 2)],
            fill=color,
        )
        window = (255, 215, 120) if night else _lit((90, 110, 140), params)
        for k in range(6):
            f = (k + 0.5) / 6
            x = inner + (outer - inner) * f
            span = (size * 0.95 - top_near) * f + (horizon - top_far) * (1 - f)
            y0 = top_far + (top_near - top_far) * f
            for j in range(4):
                wy = y0 + span * (0.15 + 0.18 * j)
                w = 3 + 6 * f
                if not night or rng.uniform() < 0.6:
                    d.rectangle((x - w / 2, wy, x + w / 2, wy + w * 1.3), fill=window)


def _beach(image, params, horizon, rng):
    size = image.width
    d = ImageDraw.Draw(image)
    sea = _lit((30, 100, 170), params, rng, 0.1)
    d.rectangle((0, horizon, size, size), fill=sea)
    shore = int(horizon + size * rng.uniform(0.15, 0.25))
    wave = shore + 4 * np.sin(np.linspace(0, rng.uniform(6, 12), size) + rng.uniform(0, 6))
    sand = _lit((230, 205, 150), params, rng, 0.08)
    d.polygon([(0, size)] + [(i, float(wave[i])) for i in range(size)] + [(size, size)], fill=sand)
    d.line([(i, float(wave[i])) for i in range(size)], fill=_lit((250, 250, 250), params), width=3)
    if params.weather == "clear" and params.time != "night":
        x = int(size * rng.uniform(0.3, 0.7))
        d.rectangle(
            (x - 6, horizon + 2, x + 6, shore - 4), fill=_lit((255, 230, 170), params)
        )  # glitter of the sun on the sea


def _desert(image, params, horizon, rng):
    size = image.width
    for k, base in enumerate((horizon, horizon + size * 0.12, horizon + size * 0.25)):
        dune = _ridge(size, base, size * 0.08, 0.5, rng)
        shade = 1.0 - 0.12 * (2 - k)
        _fill_below(
            image,
            dune,
            _lit((int(225 * shade), int(165 * shade), int(95 * shade)), params, rng, 0.06),
        )
    d = ImageDraw.Draw(image)
    for _ in range(int(rng.integers(0, 3))):
        x = int(rng.integers(10, size - 10))
        y = int(horizon + size * rng.uniform(0.2, 0.35))
        green = _lit((50, 110, 50), params)
        d.rectangle((x - 2, y - 20, x + 2, y), fill=green)
        d.rectangle((x - 8, y - 14, x - 5, y - 6), fill=green)


def _forest(image, params, horizon, rng):
    size = image.width
    _ground(image, params, horizon, (40, 80, 35), rng)
    d = ImageDraw.Draw(image)
    for layer in range(3):
        y_base = horizon + layer * size * 0.15
        count = 14 + 6 * layer
        shade = 0.7 + 0.15 * layer
        for _ in range(count):
            x = rng.uniform(-10, size + 10)
            h = size * rng.uniform(0.15, 0.3) * (0.8 + 0.3 * layer)
            w = h * rng.uniform(0.3, 0.45)
            green = _lit((int(30 * shade), int(90 * shade), int(40 * shade)), params, rng, 0.15)
            d.polygon([(x, y_base - h), (x - w / 2, y_base), (x + w / 2, y_base)], fill=green)


def _lake(image, params, horizon, rng):
    size = image.width
    ridge = _ridge(size, horizon, size * 0.2, 1.0, rng)
    _fill_below(image, ridge, _lit((80, 100, 90), params, rng, 0.1))
    # The lake mirrors the sky and hills above it, darker and rippled.
    top = image.crop((0, horizon - (size - horizon), size, horizon))
    mirror = top.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    water = Image.blend(mirror, Image.new("RGB", mirror.size, _lit((20, 50, 80), params)), 0.35)
    water = water.filter(ImageFilter.BoxBlur(1))
    image.paste(water, (0, horizon))
    d = ImageDraw.Draw(image)
    shore = int(size * rng.uniform(0.88, 0.95))
    d.rectangle((0, shore, size, size), fill=_lit((60, 100, 50), params, rng, 0.1))


DRAWERS = {
    "mountains": _mountains,
    "skyline": _skyline,
    "street": _street,
    "beach": _beach,
    "desert": _desert,
    "forest": _forest,
    "snowy": _snowy,
    "lake": _lake,
}
