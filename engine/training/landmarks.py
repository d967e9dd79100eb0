"""Procedural landmark scenes: each built-in geography drawn by its signature, 16:9, with a
caption that names it ("mission peak above the bay at golden hour, clear").

One table (`SIGNATURES`) says what each geography is made of: a ground, and layers drawn by a
few shared primitives (hills, a single peak, water, towers, an avenue, a beach, trees, ...),
back to front. A seed picks the composition (camera height, horizontal offset, zoom) and the
detail, so one geography has many pictures. Everything is placed in fractions of the frame and
drawn at the size asked (twice that, then downsampled, for small sizes), so a seed gives the
same composition at 256x144 for training and at 1920x1080 for a look. At sizes that can show it
(`_shows_fine`), grass, rock, snow, forest canopy, gravel, sand and water carry a hard-edged
texture (`_texture`), raked harder by golden hour's low sun and stronger near the camera (grass
in blades, wider near, over their shade); a broadleaf crown is clumps of leaves lit from the
sun, a conifer tiers of boughs, a palm fronds of leaflets; water mirrors what stands beyond it;
a rocky crest has crags, its snow tongues down the gullies and rock ribs through it; a street
has paving slabs, gritty asphalt and sealed cracks; towers show their floors, brick walls their
courses and row houses their sash windows; Broadway's signs their words and bulbs; landmarks
their make (a lattice, columns, a glass band, a shaded face); an overcast sky its deck of cloud
cells; and at night the land its lit windows and a clear sky its fainter stars: the detail a
1080p photograph has and an upscaler must learn. At 256x144 it would be below a pixel, so it is
not drawn and training's pictures are as they were. Sky and light follow `scenes.py` (same
colours per time of day, same dimming when cloudy).

`python -m engine.training.landmark_report` measures how well the project's scene classifier
recognises each geography and writes the contact sheet.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from scipy import ndimage

from engine.training.scenes import SKY, TIMES, WEATHER, _lit, _ridge

TRAIN_SIZE = (256, 144)
LIT = (255, 214, 130)  # a lit window at night


@dataclass(frozen=True)
class Signature:
    words: str  # what the caption calls it: the landmark words a model learns
    horizon: tuple[float, float]  # where the horizon sits, as a share of the height
    layers: tuple[tuple[str, dict[str, Any]], ...]  # (primitive, its settings), back to front


@dataclass(frozen=True)
class LandmarkParams:
    geography: str  # a key of SIGNATURES: the catalog's geography name
    time: str
    weather: str
    seed: int

    @property
    def caption(self) -> str:
        return f"{SIGNATURES[self.geography].words} {TIMES[self.time]}, {self.weather}"


@dataclass
class _Canvas:
    image: Image.Image
    draw: ImageDraw.ImageDraw
    params: LandmarkParams
    rng: np.random.Generator
    horizon: float  # pixels from the top
    offset: float  # horizontal shift of the landmark, share of the width
    zoom: float  # landmark scale
    # Fine detail (texture, night lights, faint stars: drawn only at sizes that show them) draws
    # from its own stream, leaving every other random choice, so the composition, the same at
    # any size.
    grain: np.random.Generator
    # The night's lit windows (and the words on Broadway's signs), from a stream of their own:
    # a change to the facets under them does not move the towns.
    lamps: np.random.Generator

    @property
    def w(self) -> int:
        return self.image.width

    @property
    def h(self) -> int:
        return self.image.height

    @property
    def night(self) -> bool:
        return self.params.time == "night"

    def lit(self, color, jitter: float = 0.0):
        return _lit(color, self.params, self.rng, jitter)

    def x(self, share: float) -> float:
        """A landmark's x: its place in the frame, shifted by the camera's offset."""
        return (share + self.offset) * self.w

    def y(self, below_horizon: float) -> float:
        return self.horizon + below_horizon * self.h


@dataclass(frozen=True)
class Scene:
    image: Image.Image
    # "L": where the sun or moon is seen (a clear sky's; 255 on its disc, not where a hill or a
    # tower stands in front of it); None under cloud.
    sun: Image.Image | None


def draw(params: LandmarkParams, size: tuple[int, int] = TRAIN_SIZE) -> Image.Image:
    """The scene at `size` (width, height)."""
    return draw_scene(params, size).image


def draw_scene(params: LandmarkParams, size: tuple[int, int] = TRAIN_SIZE) -> Scene:
    """The scene at `size`, and where its sun or moon is seen."""
    width, height = size
    scale = 2 if width <= 1024 else 1  # supersampled where pixels are few
    rng = np.random.default_rng(params.seed)
    signature = SIGNATURES[params.geography]
    canvas_size = (width * scale, height * scale)
    horizon = rng.uniform(*signature.horizon) * canvas_size[1]
    grain = np.random.default_rng([params.seed, 1])
    image, disc = _sky(params, canvas_size, horizon, rng, grain)
    canvas = _Canvas(
        image,
        ImageDraw.Draw(image),
        params,
        rng,
        horizon,
        offset=float(rng.uniform(-0.12, 0.12)),
        zoom=float(rng.uniform(0.85, 1.2)),
        grain=grain,
        lamps=np.random.default_rng([params.seed, 8]),
    )
    for primitive, settings in signature.layers:
        PRIMITIVES[primitive](canvas, **settings)
    sun = None if disc is None else _seen(image, *disc)
    if scale != 1:
        image = image.resize(size, Image.Resampling.LANCZOS)
        sun = None if sun is None else sun.resize(size, Image.Resampling.LANCZOS)
    return Scene(image, sun)


def _seen(image: Image.Image, box: tuple[float, ...], color: tuple[int, ...]) -> Image.Image:
    """Where the disc drawn in `box` in `color` still shows once the scene is drawn over it
    (its own flat colour, which nothing else is drawn in)."""
    mask = Image.new("L", image.size, 0)
    ImageDraw.Draw(mask).ellipse(box, fill=255)
    shows = np.all(np.asarray(image) == color, axis=2)
    return Image.fromarray(np.where(shows, np.asarray(mask), 0).astype(np.uint8))


def sample_params(rng: np.random.Generator, seed: int) -> LandmarkParams:
    return LandmarkParams(
        str(rng.choice(list(SIGNATURES))),
        str(rng.choice(list(TIMES))),
        str(rng.choice(WEATHER)),
        seed,
    )


# --- sky ------------------------------------------------------------------------------------


def _sky(params, size, horizon, rng, grain) -> tuple[Image.Image, tuple | None]:
    """The sky, and its sun or moon's disc (its box and colour) under a clear one."""
    width, height = size
    top, low = (np.array(c, dtype=np.float32) for c in SKY[params.time])
    if params.weather == "cloudy":
        grey = np.array([150, 155, 165] if params.time != "night" else [35, 38, 50], np.float32)
        top, low = 0.45 * top + 0.55 * grey, 0.5 * low + 0.5 * grey
    t = np.clip(np.arange(height) / max(horizon, 1), 0, 1)[:, None]
    rows = (top * (1 - t) + low * t).clip(0, 255).astype(np.uint8)
    image = Image.fromarray(np.repeat(rows[:, None, :], width, axis=1))
    d = ImageDraw.Draw(image)
    if params.weather == "clear":
        if params.time == "night":
            for _ in range(int(rng.integers(60, 120))):
                x, y = rng.uniform(0, width), rng.uniform(0, max(horizon * 0.8, 1))
                b, r = int(rng.integers(150, 255)), max(height / 500, 0.6)
                d.ellipse((x - r, y - r, x + r, y + r), fill=(b, b, b))
            _starfield(d, size, horizon, grain)
        x = rng.uniform(0.1, 0.9) * width
        if params.time == "day":
            y, r, color = rng.uniform(0.08, 0.25) * height, height / 16, (255, 250, 220)
        elif params.time == "golden":
            y, r, color = horizon - rng.uniform(0.03, 0.15) * height, height / 9, (255, 190, 90)
        else:
            y, r, color = rng.uniform(0.1, 0.25) * height, height / 20, (235, 235, 210)
        disc = (x - r, y - r, x + r, y + r), color
        d.ellipse(disc[0], fill=color)
        return image, disc
    clouds = Image.new("L", size, 0)
    cd = ImageDraw.Draw(clouds)
    for _ in range(int(rng.integers(10, 20))):
        x, y = rng.uniform(-0.1, 1.0) * width, rng.uniform(0, max(horizon * 0.8, 1))
        w, h = rng.uniform(0.15, 0.4) * width, rng.uniform(0.05, 0.14) * height
        cd.ellipse((x, y, x + w, y + h), fill=int(rng.integers(150, 230)))
    clouds = clouds.filter(ImageFilter.GaussianBlur(height / 40))
    shade = {"day": (225, 225, 230), "golden": (200, 150, 130), "night": (60, 62, 75)}
    image.paste(Image.new("RGB", size, shade[params.time]), (0, 0), clouds)
    return _cloud_deck(image, params, horizon), None


# An overcast sky seen from below is a deck of cloud cells, not a smooth grey: thick cells
# darker, the thin seams between them lighter, in perspective (a flat layer's cells shrink and
# flatten towards the horizon), fading into the haze there; at night, lit warm from below by
# the towns near the horizon. Drawn where the size shows it (at 1080p its finest cells are 6 px),
# from its own random stream, so that every other texture is as it was.
DECK_CONTRAST = 0.13  # brightness of a thin seam over a thick cell's, share of the sky's
DECK_GLOW = np.array([20.0, 12.0, 4.0], np.float32)  # town light under the cells at night
DECK_FINEST = 6.0  # px: smaller cells would shimmer, and the measure's 5x5 median drops them


def _cloud_deck(image: Image.Image, params: LandmarkParams, horizon: float) -> Image.Image:
    width, height = image.size
    rows = int(horizon)
    if not _shows_fine(height) or rows < 2:
        return image
    stream = np.random.default_rng([params.seed, 2])
    ys, xs = np.mgrid[0:rows, 0:width].astype(np.float32)
    above = (horizon - ys) / height + 0.03  # the view's angle above the horizon, roughly
    depth = 1 / above  # along the deck, to where the line of sight meets it
    across = (xs - width / 2) / height * depth
    noise = np.zeros_like(depth)
    frequency, amplitude, total = 3.0, 1.0, 0.0
    for _ in range(7):
        period = height * above / frequency  # a cell's size on screen at this octave, px
        weight = np.clip(period / DECK_FINEST - 1, 0, 1)
        seen = weight > 0
        if not seen.any():  # and no finer octave is either
            break
        # Squeezed along the line of sight, so that the cells lie in rows across it.
        cells = _value_noise(stream, across[seen] * frequency, depth[seen] * frequency * 2.2)
        noise[seen] += amplitude * weight[seen] * cells
        total += amplitude**2
        frequency, amplitude = frequency * 2, amplitude * 0.55
    if total == 0:  # no octave shows at this size
        return image
    thick = np.clip((noise / np.sqrt(total) + 0.2) / 0.7, 0, 1)
    thick = thick * thick * (3 - 2 * thick)  # cells with soft, not blurred, edges
    haze = np.clip((above - 0.03) / 0.1, 0, 1)  # the far deck melts into the horizon's haze
    sky = np.asarray(image, np.float32).copy()
    sky[:rows] *= (1 + DECK_CONTRAST * haze * (0.5 - thick))[..., None]
    if params.time == "night":
        sky[:rows] += DECK_GLOW * (thick * np.exp(-above / 0.15))[..., None]
    return Image.fromarray(sky.clip(0, 255).astype(np.uint8))


def _value_noise(stream: np.random.Generator, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Smooth noise at the points (u, v): a lattice of normal values, one per unit, its cubic
    spline there."""
    u0, v0 = np.floor(u.min()) - 1, np.floor(v.min()) - 1
    lattice = stream.standard_normal((int(v.max() - v0) + 3, int(u.max() - u0) + 3))
    return ndimage.map_coordinates(lattice.astype(np.float32), [v - v0, u - u0], order=3)


def _starfield(d: ImageDraw.ImageDraw, size, horizon, grain: np.random.Generator) -> None:
    """The fainter stars among the bright ones every size has, where the size shows them:
    hundreds, 4 to 8 px at 1080p (a 5x5 median keeps them), denser in the Milky Way's band."""
    width, height = size
    if not _shows_fine(height):
        return
    tilt, across = grain.uniform(-0.3, 0.3), grain.uniform(0.2, 0.8)
    for _ in range(int(grain.integers(250, 450))):
        x = grain.uniform(0, width)
        if grain.uniform() < 0.5:
            y = (across + tilt * (x / width - 0.5) + grain.normal(0, 0.06)) * horizon
        else:
            y = grain.uniform(0, horizon * 0.85)
        r, b = height * grain.uniform(0.002, 0.004), int(grain.integers(120, 230))
        d.ellipse((x - r, y - r, x + r, y + r), fill=(b, b, min(255, b + 20)))


# --- primitives: each draws one kind of thing, in shares of the frame -----------------------


def _polygon_below(
    cv: _Canvas,
    ys: np.ndarray,
    color,
    x0: float = 0.0,
    texture: str | None = None,
    haze=0.0,
    nearest=False,
) -> None:
    """Fill from the curve `ys` (one y per pixel column from x0) down to the frame's bottom;
    `texture` on its top part (what nearer layers, drawn over its base, leave in view)."""
    points = [(x0 + i, float(y)) for i, y in enumerate(ys)]
    outline = [(x0, cv.h), *points, (x0 + len(ys) - 1, cv.h)]
    cv.draw.polygon(outline, fill=color)
    if texture:
        foot = cv.h if nearest else float(np.max(ys)) + 0.12 * cv.h
        _texture(cv, outline, color, texture, haze, down_to=foot, floor=float(np.max(ys)))


# Surface textures: how far a facet's brightness strays from its surface's colour. Facets are
# hard-edged and at least 5 px at 1080p, so they are detail the measure counts (engine.detail
# filters 5x5), as grass, rock faces and leaves are in a photograph; smaller towards the
# horizon. Where they would be under 2 px (training's 256x144) they are not drawn.
# The sun low at golden hour rakes across surfaces and shows their relief more than at noon.
RAKING = {"golden": 1.5}
TEXTURES = {"rock": 0.28, "grass": 0.26, "canopy": 0.3, "gravel": 0.22, "sand": 0.12, "water": 0.2,
            "snow": 0.1, "asphalt": 0.07}  # fmt: skip
# Near the camera a surface's relief shows more than far off, where the air between lowers its
# contrast (aerial perspective): a sward's blades stand apart, wavelets show the sky and the
# depths. The spread's growth from the horizon to the nearest ground (0.6 of the frame's height
# under it): up to twice. Sand, gravel, snow and asphalt have grains under a pixel even there,
# and a forest's crowns, a field of balls at twice, only half as much. A sward's most: looked
# into from nearby, its lit blades stand over the shade between them (up to five times).
NEARER = {"grass": 4.0, "water": 1.0, "rock": 1.0, "canopy": 0.5}
# A grass blade near the camera is a few px wide and many times as tall: slender, so twice as
# many as another surface's facets cover the sward.
BLADES = 2
# and, seen from nearer, wider: at the nearest ground three times a far blade's width for its
# height (else the measure's 5x5 median drops the near sward's blades as it does far ones).
BLADE_WIDENS = 2.0
# The shade in a surface's relief is lit by the sky: no facet darker than this share of its
# surface's colour, however far its spread reaches (near grass in low sun went black).
SHADE_FLOOR = 0.35
FACET = 0.009  # a facet's size on the horizon, share of the height (x 0.6 to 2.1 below it)


def _shows_fine(height: float) -> bool:
    """Whether a picture `height` px high shows fine detail: the smallest facet is 2 px or more
    (at 1080p it is 6 px; in training's 256x144, drawn at twice that, under 2, so training's
    pictures carry none of it)."""
    return FACET * 0.6 * height >= 2


# At night the land's detail is its lights: towns of lit windows and street lamps along their
# streets, clusters per 100 x 100 px at 1080p where a surface meets its floor (the valley, the
# shore, the plain), thinning up the slope above it and towards the camera, so a range's flanks
# and the foreground field stay dark. Most on a desert floor; nearly as many in a wooded valley
# or at a range's foot as on open land (at half, Vermont's and Alaska's cloudy nights were dark
# hills with a few hamlets). Like facets they are drawn only at sizes that show them, and at
# least 4 px, so that the measure's 5x5 median keeps them.
NIGHT_LIGHTS = {"gravel": 12.0, "grass": 7.0, "canopy": 6.0, "rock": 5.0}
LIGHTS_UPHILL = 0.05  # up a slope from its floor, share of the height, where towns thin to 1/e
LIGHTS_NEARER = 0.05  # below the horizon (towards the camera), likewise
LIGHT_COLORS = ((255, 214, 130), (255, 240, 205), (255, 170, 80))  # tungsten, LED, sodium


def _texture(cv: _Canvas, outline, color, kind: str, haze=0.0, down_to: float | None = None,
             lights=True, floor: float | None = None):  # fmt: skip
    """Hard-edged facets of `color`, brighter and darker, inside the polygon `outline` (down to
    `down_to`); `haze` (distance) makes them smaller and fainter. At night, with `lights`, the
    land's lit windows too, in towns on its `floor` (a y: where a slope rises from; the
    horizon if not given)."""
    if not _shows_fine(cv.h):
        return
    xs, ys = [p[0] for p in outline], [p[1] for p in outline]
    x0, y0 = max(0, int(min(xs))), max(0, int(min(ys)))
    x1, y1 = min(cv.w, int(max(xs)) + 1), min(cv.h, int(max(ys)) + 1)
    if down_to is not None:
        y1 = min(y1, int(down_to))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    mask = Image.new("L", (x1 - x0, y1 - y0), 0)
    ImageDraw.Draw(mask).polygon([(x - x0, y - y0) for x, y in outline], fill=255)
    layer = cv.image.crop((x0, y0, x1, y1))
    d = ImageDraw.Draw(layer)
    spread = TEXTURES[kind] * (1 - haze) * RAKING.get(cv.params.time, 1.0)
    base = np.array(color, np.float32)
    y = 0.0
    while y < y1 - y0:
        depth = np.clip((y0 + y - cv.horizon) / cv.h, 0.0, 0.6)
        size = cv.h * FACET * (0.6 + 2.5 * depth) * (1 - 0.5 * haze)
        count = int(1.4 * (BLADES if kind == "grass" else 1) * (x1 - x0) / size)
        cxs = cv.grain.uniform(0, x1 - x0, count)
        cys = y + cv.grain.uniform(0, size, count)
        # Each facet's colour at once (a per-facet numpy call was a third of a scene's time).
        strays = spread * (1 + NEARER.get(kind, 0.0) * depth / 0.6)
        shades = np.maximum(cv.grain.uniform(1 - strays, 1 + strays, count), SHADE_FLOOR)
        fills = (base * shades[:, None]).clip(0, 255)
        radii = cv.grain.uniform(0.5, 1.0, count) * size
        for cx, cy, fill, r in zip(cxs, cys, map(tuple, fills.astype(int).tolist()), radii,
                                   strict=True):  # fmt: skip
            if kind == "grass":  # a blade, taller than wide
                w = r * 0.3 / BLADES * (1 + BLADE_WIDENS * depth / 0.6)
                d.polygon([(cx - w, cy), (cx + w, cy), (cx, cy - 1.6 * r)], fill=fill)
            elif kind in ("rock", "snow"):  # an angular facet: a rock face, a wind-cut drift
                a = cv.grain.uniform(0, 2 * np.pi, 3)
                d.polygon([(cx + r * np.cos(t), cy + r * np.sin(t)) for t in sorted(a)], fill=fill)
            elif kind == "water":  # a ripple: long and flat
                d.rectangle((cx - 2 * r, cy, cx + 2 * r, cy + max(0.35 * r, 2.5)), fill=fill)
            else:  # crowns of trees, pebbles, grains of sand and grit: round, flattened on a flat
                flat = 0.45 if kind in ("sand", "asphalt") else 1.0
                d.ellipse((cx - r, cy - r * flat, cx + r, cy + r * flat), fill=fill)
        y += size * 0.7
    if lights and cv.night and kind in NIGHT_LIGHTS:
        floor = cv.horizon if floor is None else floor
        _lights(cv, d, np.asarray(mask) > 0, (x0, y0), NIGHT_LIGHTS[kind], haze, floor)
    cv.image.paste(layer, (x0, y0), mask)


def _lights(cv: _Canvas, d: ImageDraw.ImageDraw, inside: np.ndarray, origin, density, haze,
            floor: float):  # fmt: skip
    """Towns of lit windows and lamps on a surface at night (`inside`: its mask, drawn on `d`
    whose top-left is `origin` in the frame), on its `floor` (a y) and thinning up the slope
    above it: a town's lights lie along a few streets, smaller and dimmer with depth and haze."""
    rows, cols = inside.shape
    lamps = cv.lamps
    clusters = int(density * inside.sum() / (cv.h * 0.093) ** 2)  # 100 px at 1080p
    for cx, cy in zip(lamps.uniform(0, cols, clusters), lamps.uniform(0, rows, clusters),
                      strict=True):  # fmt: skip
        below = (origin[1] + cy - cv.horizon) / cv.h  # under the horizon, share of the height
        uphill = max(0.0, floor - origin[1] - cy) / cv.h
        likely = np.exp(-max(0.0, below) / LIGHTS_NEARER - uphill / LIGHTS_UPHILL)
        if not inside[int(cy), int(cx)] or lamps.uniform() > likely:
            continue
        depth = np.clip(below, 0.0, 0.6)
        size = max(4.0, cv.h * 0.004 * (0.6 + 2.5 * depth) * (1 - 0.5 * haze))
        spread = size * lamps.uniform(3, 9)  # a hamlet to a town
        for _ in range(int(lamps.integers(1, 4))):  # its streets, nearly level in perspective
            y0 = cy + lamps.normal(0, spread * 0.3)
            tilt, gap = lamps.normal(0, 0.08), size * lamps.uniform(1.8, 3.5)
            reach = spread * lamps.uniform(0.5, 1.5)
            for x in np.arange(cx - reach, cx + reach, gap):
                y = y0 + tilt * (x - cx)
                dark = lamps.uniform() < 0.3  # a house with its lights off
                if dark or not (0 <= x < cols and 0 <= y < rows and inside[int(y), int(x)]):
                    continue
                glow = np.array(LIGHT_COLORS[int(lamps.integers(len(LIGHT_COLORS)))], np.float32)
                fill = tuple(int(c) for c in glow * (1 - 0.6 * haze) * lamps.uniform(0.75, 1.0))
                d.rectangle((x, y, x + size * lamps.uniform(1, 1.8), y + size), fill=fill)


def ground(cv: _Canvas, color, at: float = 0.0, texture: str = "grass") -> None:
    top, lit = cv.y(at), cv.lit(color, 0.08)
    outline = [(0, top), (cv.w, top), (cv.w, cv.h), (0, cv.h)]
    cv.draw.polygon(outline, fill=lit)
    _texture(cv, outline, lit, texture, floor=top)
    if texture == "grass" and at > 0:
        _fringe(cv, top, lit)


def _fringe(cv: _Canvas, top: float, color) -> None:
    """Where the size shows it, the field's front edge over the land behind it as grass does
    meet it, blades standing up past the line, not a ruled edge."""
    if not _shows_fine(cv.h):
        return
    grain = np.random.default_rng([cv.params.seed, 4])  # its own: other textures as they were
    depth = np.clip((top - cv.horizon) / cv.h, 0.0, 0.6)
    size = cv.h * FACET * (0.6 + 2.5 * depth)
    spread = TEXTURES["grass"] * RAKING.get(cv.params.time, 1.0)
    count = int(3 * cv.w / size)
    xs, tall = grain.uniform(0, cv.w, count), grain.uniform(0.4, 1.6, count) * size
    shades = np.array(color, np.float32) * grain.uniform(1 - spread, 1 + spread, count)[:, None]
    for x, r, fill in zip(xs, tall, shades.clip(0, 255).astype(int).tolist(), strict=True):
        cv.draw.polygon([(x - r * 0.3, top + r * 0.4), (x + r * 0.3, top + r * 0.4),
                         (x, top - r)], fill=tuple(fill))  # fmt: skip


def hills(
    cv,
    color,
    at=0.0,
    amp=0.15,
    rough=1.0,
    sharp=False,
    snow=0.0,
    haze=0.0,
    texture="rock",
    nearest=False,
) -> None:
    """A ridge across the frame whose base sits `at` below the horizon; `snow` caps the high
    parts; `haze` blends toward the sky's horizon colour (distance); `nearest`: nothing is
    drawn over its foot, so it is textured down to the frame's bottom."""
    ridge = _ridge(cv.w, cv.y(at), amp * cv.h * cv.zoom, rough, cv.rng, sharp)
    crest = _crest(cv, ridge)
    if sharp:
        ridge = _crags(cv, ridge, crest)
    rock = _hazed(cv, color, haze)  # once: lighting draws its jitter from the composition
    _polygon_below(cv, ridge, rock, texture=texture, haze=haze, nearest=nearest)
    if snow:
        line = cv.y(at) - amp * cv.h * cv.zoom * 0.45
        _snowcap(cv, np.arange(cv.w), ridge, line, snow, crest, rock)


# A rocky range's crest where the size shows it: crags and notches, from tens of px down to a
# few, as ridged noise (pointed tops, rounded clefts) of mean zero, so that the outline a small
# picture shows stays as it is. Its snow reaches down the gullies in tongues and stops short on
# the ribs between them, where the small picture has one ruled snow line.
CRAG = 0.012  # the largest crags' height, share of the frame's height (13 px at 1080p)
CRAG_WIDTH = 0.06  # their width, share of the height
GULLY = 0.018  # the longest tongue of snow down a gully, share of the height (19 px at 1080p)
GULLY_WIDTH = 0.012


def _crest(cv: _Canvas, ys: np.ndarray) -> np.random.Generator:
    """A crest's own stream, seeded by its outline too: each range in a scene has its own
    crags and gullies, and the composition (`cv.rng`) is as it was."""
    return np.random.default_rng([cv.params.seed, 6, int(ys.sum()) % 2**32])


def _crags(cv: _Canvas, ys: np.ndarray, stream: np.random.Generator) -> np.ndarray:
    if not _shows_fine(cv.h):
        return ys
    xs = np.arange(len(ys), dtype=np.float32)
    width, height, rise = CRAG_WIDTH * cv.h, CRAG * cv.h, np.zeros(len(ys))
    while width >= 6:  # px: a narrower crag would be lost to the measure's 5x5 median
        ridged = 1 - np.abs(_value_noise(stream, xs / width, np.zeros_like(xs)))
        rise += height * (ridged - ridged.mean())
        width, height = width / 2, height / 2
    return ys - rise


def _snowcap(cv, xs, ys, line, depth, stream: np.random.Generator | None = None,
             rock=None) -> None:  # fmt: skip
    """White where the curve rises above `line`, `depth` (share of height) deep; with `stream`,
    where the size shows it, in tongues down the gullies under that, and broken by ribs of
    `rock`."""
    cap = np.minimum(ys + depth * cv.h, np.maximum(line, ys))
    fine = stream is not None and _shows_fine(cv.h)
    if fine:
        gullies = _value_noise(stream, xs / (GULLY_WIDTH * cv.h), np.zeros(len(xs)))
        ragged = _value_noise(stream, xs / 6.0, np.zeros(len(xs)))  # px scale
        tongue = GULLY * cv.h * np.clip(gullies, 0, None) ** 1.5 + 3 * ragged
        cap = np.where(cap > ys + 1, np.maximum(cap + tongue, ys), cap)
    snow = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]
    snow += [(float(x), float(y)) for x, y in zip(xs[::-1], cap[::-1], strict=True)]
    white = cv.lit((240, 244, 252))
    cv.draw.polygon(snow, fill=white)
    _texture(cv, snow, white, "snow")
    if fine and rock is not None:
        _ribs(cv, xs, ys, cap, rock, stream)


# Rock ribs through a snowfield where the size shows them: the snow lies thin on the spurs
# between couloirs, and their rock shows through from the crest down the fall line, 4 to 12 px
# wide at 1080p and narrowing as the snow deepens below, each with a kink as a buttress has.
RIB_EVERY = 0.03  # a rib per this share of the frame's height, across the snowfield


def _ribs(cv: _Canvas, xs, ys, cap, rock, stream: np.random.Generator) -> None:
    deep = np.flatnonzero(cap - ys > 12)  # px: shallower snow has no room for a rib
    count = int(len(deep) / (RIB_EVERY * cv.h))
    base = np.array(rock, np.float32)
    for i in stream.choice(deep, size=count, replace=False) if count else ():
        half = stream.uniform(2.0, 6.0)
        # From the crest's lower side where the rib meets it, so that no rock stands in the sky.
        x, top = float(xs[i]), float(ys[max(0, i - int(half)) : i + int(half) + 1].max())
        length = (cap[i] - top) * stream.uniform(0.4, 1)
        if length < 6:
            continue
        lean, kink = stream.uniform(-0.3, 0.3, 2) * length  # the fall line's slant; a buttress
        fill = tuple((base * stream.uniform(0.7, 1.0)).astype(int).tolist())
        outline = [(x - half, top), (x + half, top), (x + 0.5 * (lean + kink) + half * 0.6,
                   top + length * 0.5), (x + lean, top + length),
                   (x + 0.5 * (lean + kink) - half * 0.6, top + length * 0.5)]  # fmt: skip
        cv.draw.polygon(outline, fill=fill)


def _hazed(cv, color, haze):
    """The colour as lit, `haze` of the way to the sky at the horizon (distance)."""
    if not haze:
        return cv.lit(color, 0.08)
    low = np.array(SKY[cv.params.time][1], np.float32)
    if cv.params.weather == "cloudy":
        low = 0.5 * low + 0.5 * np.array([150, 155, 165] if not cv.night else [35, 38, 50])
    mixed = np.array(cv.lit(color, 0.08)) * (1 - haze) + low * haze
    return tuple(int(c) for c in mixed.clip(0, 255))


PROFILES = {
    # u in [-1, 1] across the peak's width -> height share
    "mission": lambda u: (
        np.where(u < 0.35, (u + 1) / 1.35, 1 - (u - 0.35) / 0.65 * 0.9) ** 1.4
        + 0.06 * np.sin(9 * u)
    ),
    "cone": lambda u: (1 - np.abs(u)) ** 1.6,
    "spire": lambda u: (1 - np.abs(u)) ** 2.4,
    "crater": lambda u: (
        np.clip(1.6 * (1 - np.abs(u - 0.1)), 0, 1) - 0.15 * np.exp(-((u / 0.2) ** 2))
    ),
    "butte": lambda u: np.clip((1 - np.abs(u)) * 6, 0, 1),
    "dome": lambda u: np.sqrt(np.clip(1 - u**2, 0, 1)),
}


def peak(cv, color, x=0.5, width=0.6, height=0.3, at=0.0, shape="cone", snow=0.0, haze=0.0,
         texture="rock") -> None:  # fmt: skip
    """One named mountain: its profile `shape`, centred at x, `height` (share) above `at`."""
    half = width * cv.w * cv.zoom / 2
    cx = cv.x(x)
    xs = np.arange(int(cx - half), int(cx + half) + 1)
    u = np.clip((xs - cx) / half, -1, 1)
    ys = cv.y(at) - PROFILES[shape](u) * height * cv.h * cv.zoom
    rock = _hazed(cv, color, haze)
    _polygon_below(cv, ys, rock, float(xs[0]), texture=texture, haze=haze)
    if snow:
        line = cv.y(at) - height * cv.h * cv.zoom * 0.55
        _snowcap(cv, xs, ys, line, snow, _crest(cv, ys), rock)


def water(cv, color, at=0.0, to=1.0, glints=40) -> None:
    top, bottom = cv.y(at), cv.y(to) if to < 1 else cv.h
    behind = cv.image.copy() if _shows_fine(cv.h) else None  # what stands beyond the water
    lit = cv.lit(color, 0.08)
    outline = [(0, top), (cv.w, top), (cv.w, bottom), (0, bottom)]
    cv.draw.polygon(outline, fill=lit)
    _texture(cv, outline, lit, "water")
    glint = (255, 200, 120) if cv.night else cv.lit(tuple(min(255, c + 70) for c in color))
    for _ in range(glints):
        y = cv.rng.uniform(top + 1, max(bottom - 1, top + 2))
        x = cv.rng.uniform(0, cv.w)
        n = cv.rng.uniform(0.01, 0.05) * cv.w
        cv.draw.line((x, y, x + n, y), fill=glint, width=max(1, cv.h // 300))
    if behind is not None:
        _reflection(cv, behind, int(top), int(bottom))


# Water mirrors what stands beyond it (shore, towers, lit windows, a low sun), broken by its
# ripples into streaks that drift sideways, and fainter with distance from the shore: the
# detail a photograph of a lake or a bay has, and a flat ripple texture has not. Drawn where the
# size shows it, from its own random stream.
REFLECTED = 0.8  # how much of the mirror's detail shows at the shore, between ripples
RIPPLE_ROWS = (3, 9)  # px at 1080p: a ripple's height; each shifts the mirror sideways
RIPPLE_REACH = 0.25  # below the shore, share of the height, where the mirror has faded to 1/e
MIRROR_BLUR = 8.0  # px at 1080p: what is broader than this the water's colour already holds
MIRROR_DARKEST = 40.0  # grey levels


def _reflection(cv: _Canvas, behind: Image.Image, top: int, bottom: int) -> None:
    """The mirror of `behind` (the frame before the water was drawn) on the water from row
    `top` to `bottom`."""
    depth = min(bottom, cv.h) - top
    if depth < 2 or top < 2:
        return
    stream = np.random.default_rng([cv.params.seed, 5])
    scale = cv.h / 1080
    mirrored = np.asarray(behind, np.float32)[max(0, top - depth) : top][::-1]
    # Only the mirror's detail: its broad colours are the water's own colour already (the
    # model, which draws from training's pictures where water has no mirror, drew them so).
    # Darker than its surround, a detail is held to MIRROR_DARKEST: a moon's mirror was a ring.
    mirrored -= ndimage.gaussian_filter(mirrored, (MIRROR_BLUR * scale, MIRROR_BLUR * scale, 0))
    mirrored = mirrored.clip(-MIRROR_DARKEST, None)
    rows = len(mirrored)
    water = np.asarray(cv.image.crop((0, top, cv.w, top + rows)), np.float32)
    y = 0
    cols = np.arange(cv.w, dtype=np.float32)
    across = np.arange(cv.w)
    while y < rows:
        n = int(stream.integers(*RIPPLE_ROWS) * scale) or 1
        below = y / cv.h
        shift = stream.normal(0, (2 + 60 * below) * scale)  # further out, rougher
        # Along a ripple the mirror shows and breaks: smooth noise, a break every 40-200 px.
        period = stream.uniform(40, 200) * scale
        lattice = stream.uniform(-0.3, 1.6, int(cv.w / period) + 3)
        shows = np.clip(np.interp(cols / period, np.arange(len(lattice)), lattice), 0, 1)
        weight = (REFLECTED * np.exp(-below / RIPPLE_REACH) * shows)[None, :, None]
        source = mirrored[y : y + n][:, np.clip(across - round(shift), 0, cv.w - 1)]
        water[y : y + n] += source * weight
        y += n
    cv.image.paste(Image.fromarray(water.clip(0, 255).astype(np.uint8)), (0, top))


def _windows(cv, box, every=(0.012, 0.02), chance=0.5, color=None) -> None:
    x0, y0, x1, y1 = box
    dx, dy = every[0] * cv.h * cv.zoom, every[1] * cv.h * cv.zoom
    window = LIT if cv.night else cv.lit(color or (150, 180, 210))
    y = y0 + dy * 0.6
    while y < y1 - dy * 0.5:
        x = x0 + dx * 0.5
        while x < x1 - dx * 0.6:
            if cv.rng.uniform() < chance:
                cv.draw.rectangle((x, y, x + dx * 0.45, y + dy * 0.5), fill=window)
            x += dx
        y += dy


def towers(
    cv,
    x0=0.0,
    x1=1.0,
    at=0.0,
    tall=(0.15, 0.4),
    wide=(0.03, 0.07),
    palette=(),
    chance=0.45,
    glass=False,
) -> None:
    """A run of buildings standing on `at` between x0 and x1 (shares, before the offset)."""
    x, end = cv.x(x0), cv.x(x1)
    base = cv.y(at)
    while x < end:
        w = cv.rng.uniform(*wide) * cv.w * cv.zoom
        h = cv.rng.uniform(*tall) * cv.h * cv.zoom
        color = palette[int(cv.rng.integers(len(palette)))]
        cv.draw.rectangle((x, base - h, x + w, base), fill=cv.lit(color, 0.1))
        if glass and not cv.night:  # a lighter face where the sun catches the glass
            cv.draw.rectangle((x, base - h, x + w * 0.3, base), fill=cv.lit(_lighter(color, 35)))
        _storeys(cv, (x, base - h, x + w, base), cv.lit(color))
        _windows(cv, (x, base - h, x + w, base), chance=chance if cv.night else chance * 0.6)
        x += w + cv.rng.uniform(0, 0.008) * cv.w


STOREY = 0.0075  # a storey's height, share of the frame's (8 px at 1080p)


def _storeys(cv, box, color) -> None:
    """A tower's floors, where the size shows them: a spandrel band across the face at every
    storey, a shade darker than the glass or stone between (the tower's own shade per band, so
    a face is not ruled like paper)."""
    if not _shows_fine(cv.h):
        return
    x0, y0, x1, y1 = box
    step = STOREY * cv.h * cv.zoom
    band = max(3.0, 0.4 * step)  # 3 px at least: the measure's 5x5 median keeps it
    base = np.array(color, np.float32)
    y = y0 + step
    while y + band < y1:
        fill = tuple((base * cv.grain.uniform(0.8, 0.9)).astype(int).tolist())
        cv.draw.rectangle((x0, y, x1, y + band), fill=fill)
        y += step


def _lighter(color, by):
    return tuple(min(255, c + by) for c in color)


def landmark(cv, kind, x=0.5, at=0.0, height=0.5, color=(200, 200, 200)) -> None:
    """A named structure: needle tower, ball tower, stepped tower, obelisk, dome, spires..."""
    LANDMARKS[kind](cv, cv.x(x), cv.y(at), height * cv.h * cv.zoom, color)


# What makes a landmark itself at 1:1, beyond its silhouette, drawn where the size shows it
# (`_shows_fine`) from its own random stream, so every other texture is as it was: its shaded
# face (the sun on its left; faint under cloud, none on a clear night), and per structure its
# lattice, columns, windows or ribs, at least 3 px so the measure's 5x5 median keeps them.
SHADED = {"day": 0.8, "golden": 0.7}  # the far face's brightness in direct sun


def _fine(cv: _Canvas) -> _Canvas | None:
    """The canvas to draw a landmark's detail on, or None where the size does not show it."""
    if not _shows_fine(cv.h):
        return None
    return replace(cv, grain=np.random.default_rng([cv.params.seed, 3]))


def _shade(cv: _Canvas, color) -> tuple[int, int, int]:
    """`color`, as lit, on a face turned from the sun."""
    k = SHADED.get(cv.params.time, 1.0) if cv.params.weather == "clear" else 0.93
    return tuple(int(c * k) for c in cv.lit(color))


def _line(cv: _Canvas, points, fill, width: float = 3.0) -> None:
    cv.draw.line(points, fill=fill, width=max(3, round(width)))


def _scaled(color, k: float) -> tuple[int, int, int]:
    return tuple(int(min(255, max(0, c * k))) for c in color)


def _needle(cv, x, base, h, color):
    c = cv.lit(color)
    leg = h * 0.05
    cv.draw.polygon(
        [
            (x - leg * 1.6, base),
            (x - leg * 0.4, base - h * 0.72),
            (x + leg * 0.4, base - h * 0.72),
            (x + leg * 1.6, base),
        ],
        fill=c,
    )
    cv.draw.polygon(
        [
            (x - h * 0.16, base - h * 0.74),
            (x + h * 0.16, base - h * 0.74),
            (x + h * 0.09, base - h * 0.82),
            (x - h * 0.09, base - h * 0.82),
        ],
        fill=c,
    )  # the saucer
    cv.draw.rectangle((x - h * 0.05, base - h * 0.88, x + h * 0.05, base - h * 0.82), fill=c)
    cv.draw.line((x, base - h * 0.88, x, base - h), fill=c, width=max(1, int(h * 0.015)))
    if cv.night:
        cv.draw.line(
            (x - h * 0.15, base - h * 0.75, x + h * 0.15, base - h * 0.75),
            fill=LIT,
            width=max(1, int(h * 0.02)),
        )
    f = _fine(cv)
    if f is None:
        return
    dark, waist = _scaled(c, 0.7), h * 0.72
    # The legs' far side in shade, their cross-bracing, and the top house's glass band under
    # its halo.
    cv.draw.polygon([(x, base - waist), (x + leg * 0.4, base - waist), (x + leg * 1.6, base),
                     (x, base)], fill=_shade(cv, color))  # fmt: skip

    def half(y):  # the legs' half-width at height y
        return leg * 0.4 + leg * 1.2 * (y - (base - waist)) / waist

    tiers = 9
    for k in range(tiers):
        y0, y1 = base - waist + k * waist / tiers, base - waist + (k + 1) * waist / tiers
        _line(f, [(x - half(y0), y0), (x + half(y1), y1)], dark)
        _line(f, [(x + half(y0), y0), (x - half(y1), y1)], dark)
    top, bottom = base - h * 0.805, base - h * 0.76

    def saucer(y):  # the top house's half-width at height y
        return h * 0.09 + h * 0.07 * (y - (base - h * 0.82)) / (h * 0.08)

    glass = (255, 214, 130) if cv.night else cv.lit((70, 90, 110))
    band = [(x - saucer(top), top), (x + saucer(top), top),
            (x + saucer(bottom), bottom), (x - saucer(bottom), bottom)]  # fmt: skip
    cv.draw.polygon(band, fill=glass)
    mullion = max(8.0, h * 0.012)
    for mx in np.arange(x - saucer(top) + mullion, x + saucer(top), mullion):
        _line(f, [(mx, top), (mx, bottom)], c)
    _line(f, [(x - h * 0.17, base - h * 0.818), (x + h * 0.17, base - h * 0.818)], c, h * 0.008)


def _ball(cv, x, base, h, color):
    c = cv.lit(color)
    cv.draw.rectangle((x - h * 0.035, base - h * 0.8, x + h * 0.035, base), fill=c)
    r = h * 0.13
    glow = (255, 250, 230) if cv.night else cv.lit((210, 215, 225))
    cv.draw.ellipse((x - r, base - h * 0.8 - 1.6 * r, x + r, base - h * 0.8 + 0.4 * r), fill=glow)
    for k in range(-2, 3):  # the ball's lattice
        yy = base - h * 0.8 - 0.6 * r + k * r * 0.35
        cv.draw.line((x - r * 0.9, yy, x + r * 0.9, yy), fill=cv.lit((120, 130, 150)))
    f = _fine(cv)
    if f is None:
        return
    # The shaft's far side in shade; the ball's lattice as struts, meridians and rings.
    cv.draw.rectangle((x, base - h * 0.8, x + h * 0.035, base), fill=_shade(cv, color))
    strut, top, bottom = cv.lit((120, 130, 150)), base - h * 0.8 - 1.6 * r, base - h * 0.8 + 0.4 * r
    for k in range(-2, 3):
        yy = base - h * 0.8 - 0.6 * r + k * r * 0.35
        reach = r * np.sqrt(max(0.0, 1 - ((yy - (top + r)) / r) ** 2))
        _line(f, [(x - reach, yy), (x + reach, yy)], strut)
    for k in (0.35, 0.7):
        f.draw.arc((x - r * k, top, x + r * k, bottom), 0, 360, fill=strut, width=3)


def _stepped(cv, x, base, h, color):
    c, f = cv.lit(color), _fine(cv)
    for k, (w, top) in enumerate(((0.22, 0.62), (0.16, 0.82), (0.1, 0.92))):
        box = (x - h * w / 2, base - h * top, x + h * w / 2, base)
        cv.draw.rectangle(box, fill=c)
        if f is not None:  # its floors, under its windows, as every tower's
            _storeys(f, box, _lighter(c, 18))
        _windows(cv, box, chance=0.5 - 0.1 * k)
    for dx in (-0.025, 0.025):  # the two antennas
        cv.draw.line(
            (x + dx * h, base - h * 0.92, x + dx * h, base - h), fill=c, width=max(1, int(h * 0.01))
        )


def _obelisk(cv, x, base, h, color):
    c = cv.lit(color)
    cv.draw.polygon(
        [
            (x - h * 0.05, base),
            (x - h * 0.035, base - h * 0.92),
            (x, base - h),
            (x + h * 0.035, base - h * 0.92),
            (x + h * 0.05, base),
        ],
        fill=c,
    )
    f = _fine(cv)
    if f is None:
        return
    # Its far face in shade; the lower quarter's paler marble (its building paused a
    # generation there); two viewing windows under the tip.
    face = [(x + h * 0.008, base), (x + h * 0.006, base - h * 0.92), (x, base - h),
            (x + h * 0.035, base - h * 0.92), (x + h * 0.05, base)]  # fmt: skip
    cv.draw.polygon(face, fill=_shade(cv, color))
    seam = h * 0.27
    inset = h * 0.015 * seam / (h * 0.92)  # its sides taper by this much up to the seam
    pale = [tuple(min(255, int(v * 1.05)) for v in tone) for tone in (c, _shade(cv, color))]
    near = [(x - h * 0.05, base), (x - h * 0.05 + inset, base - seam),
            (x + h * 0.007, base - seam), (x + h * 0.008, base)]  # fmt: skip
    far = [(x + h * 0.008, base), (x + h * 0.007, base - seam),
           (x + h * 0.05 - inset, base - seam), (x + h * 0.05, base)]  # fmt: skip
    cv.draw.polygon(near, fill=pale[0])
    cv.draw.polygon(far, fill=pale[1])
    window = LIT if cv.night else _scaled(c, 0.45)
    for dx in (-0.022, 0.012):
        cv.draw.rectangle((x + dx * h, base - h * 0.885, x + (dx + 0.01) * h, base - h * 0.87),
                          fill=window)  # fmt: skip


def _dome(cv, x, base, h, color):
    c = cv.lit(color)
    cv.draw.rectangle((x - h * 0.6, base - h * 0.25, x + h * 0.6, base), fill=c)  # the wings
    cv.draw.rectangle((x - h * 0.2, base - h * 0.5, x + h * 0.2, base - h * 0.2), fill=c)
    cv.draw.chord((x - h * 0.2, base - h * 0.8, x + h * 0.2, base - h * 0.25), 180, 360, fill=c)
    cv.draw.rectangle((x - h * 0.02, base - h, x + h * 0.02, base - h * 0.75), fill=c)
    if cv.night:
        for k in range(5):
            xx = x - h * 0.16 + k * h * 0.08
            cv.draw.rectangle((xx, base - h * 0.45, xx + h * 0.03, base - h * 0.3), fill=LIT)
    f = _fine(cv)
    if f is None:
        return
    # Columns along the wings and round the drum; the dome's ribs and its tiers.
    column = _scaled(c, 0.72)
    for x0, x1, y0, y1, every in ((-0.6, -0.2, 0.21, 0.04, 0.03), (0.2, 0.6, 0.21, 0.04, 0.03),
                                  (-0.18, 0.18, 0.46, 0.31, 0.035)):  # fmt: skip
        for cx in np.arange(x + x0 * h, x + x1 * h, every * h):
            _line(f, [(cx, base - y0 * h), (cx, base - y1 * h)], column)
    for k in (0.35, 0.7):
        f.draw.arc((x - h * 0.2 * k, base - h * 0.8, x + h * 0.2 * k, base - h * 0.25), 180, 360,
                   fill=column, width=3)  # fmt: skip
    for y in (0.52, 0.6):
        half = h * 0.2 * np.sqrt(max(0.0, 1 - ((y - 0.525) / 0.275) ** 2))
        _line(f, [(x - half, base - y * h), (x + half, base - y * h)], column)


def _spires(cv, x, base, h, color):
    """A temple: a long white hall with three spires at each end."""
    c = cv.lit(color)
    cv.draw.rectangle((x - h * 0.35, base - h * 0.45, x + h * 0.35, base), fill=c)
    for k, dx in enumerate((-0.32, -0.22, -0.12, 0.12, 0.22, 0.32)):
        top = h * (0.85 + 0.15 * (k in (2, 3)))
        cv.draw.polygon(
            [
                (x + dx * h - h * 0.035, base - h * 0.45),
                (x + dx * h, base - top),
                (x + dx * h + h * 0.035, base - h * 0.45),
            ],
            fill=c,
        )
    f = _fine(cv)
    if f is None:
        return
    # Each spire's far face in shade; two rows of tall arched windows along the hall.
    shade = _shade(cv, color)
    for k, dx in enumerate((-0.32, -0.22, -0.12, 0.12, 0.22, 0.32)):
        top = h * (0.85 + 0.15 * (k in (2, 3)))
        cv.draw.polygon([(x + dx * h, base - h * 0.45), (x + dx * h, base - top),
                         (x + dx * h + h * 0.035, base - h * 0.45)], fill=shade)  # fmt: skip
    window = LIT if cv.night else _scaled(c, 0.55)
    for y0, y1 in ((0.4, 0.28), (0.2, 0.08)):
        for wx in np.arange(x - h * 0.31, x + h * 0.31, h * 0.055):
            w = h * 0.018
            cv.draw.rectangle((wx, base - y0 * h + w, wx + w, base - y1 * h), fill=window)
            cv.draw.ellipse((wx, base - y0 * h, wx + w, base - y0 * h + 2 * w), fill=window)


def _clocktower(cv, x, base, h, color):
    """A brick hall with a white steeple (Independence Hall)."""
    c, white = cv.lit(color), cv.lit((235, 230, 220))
    cv.draw.rectangle((x - h * 0.5, base - h * 0.35, x + h * 0.5, base), fill=c)
    cv.draw.rectangle((x - h * 0.09, base - h * 0.62, x + h * 0.09, base - h * 0.3), fill=c)
    cv.draw.rectangle((x - h * 0.06, base - h * 0.8, x + h * 0.06, base - h * 0.62), fill=white)
    cv.draw.polygon(
        [(x - h * 0.05, base - h * 0.8), (x, base - h), (x + h * 0.05, base - h * 0.8)], fill=white
    )
    cv.draw.ellipse((x - h * 0.04, base - h * 0.56, x + h * 0.04, base - h * 0.48), fill=white)
    f = _fine(cv)
    if f is None:
        return
    # Brick courses; white-framed sash windows in two rows; the clock's hands.
    _courses(f, (x - h * 0.5, base - h * 0.35, base), (x + h * 0.5, base - h * 0.35, base), c)
    frame, glass = white, LIT if cv.night else cv.lit((60, 70, 80))
    for y0 in (0.3, 0.15):
        for wx in np.arange(x - h * 0.45, x + h * 0.45, h * 0.1):
            if abs(wx + h * 0.02 - x) < h * 0.1:
                continue  # the tower stands there
            top, bottom = base - y0 * h, base - (y0 - 0.09) * h
            cv.draw.rectangle((wx, top, wx + h * 0.04, bottom), fill=frame)
            inset = h * 0.006
            cv.draw.rectangle((wx + inset, top + inset, wx + h * 0.034, bottom - inset), fill=glass)
    hand = _scaled(c, 0.5)
    _line(f, [(x, base - h * 0.52), (x, base - h * 0.55)], hand)
    _line(f, [(x, base - h * 0.52), (x + h * 0.022, base - h * 0.51)], hand)


def _pointed(cv, x, base, h, color):
    """A tower with a pointed, gold-lit crown (Atlanta's Bank of America Plaza)."""
    c, f = cv.lit(color), _fine(cv)
    shaft = (x - h * 0.08, base - h * 0.8, x + h * 0.08, base)
    cv.draw.rectangle(shaft, fill=c)
    if f is not None:  # its floors, under its windows
        _storeys(f, shaft, c)
    _windows(cv, shaft, chance=0.5)
    gold = (255, 200, 70) if cv.night else cv.lit((220, 180, 90))
    cv.draw.polygon(
        [(x - h * 0.08, base - h * 0.8), (x, base - h), (x + h * 0.08, base - h * 0.8)], fill=gold
    )
    if f is None:
        return
    # The crown's open gold lattice, its far face in shade.
    if not cv.night:
        cv.draw.polygon([(x, base - h * 0.8), (x, base - h), (x + h * 0.08, base - h * 0.8)],
                        fill=_shade(cv, (220, 180, 90)))  # fmt: skip
    strut = _scaled(gold, 0.7)
    for k in np.linspace(-0.06, 0.06, 7):
        _line(f, [(x + k * h, base - h * 0.8), (x + k * h * 0.25, base - h * 0.95)], strut)


def _wheel(cv, x, base, h, color):
    """A pier on stilts into the sea with a ferris wheel on it (Santa Monica)."""
    c = cv.lit(color)
    deck = base - h * 0.12
    cv.draw.rectangle((x - h * 1.2, deck, cv.w * 1.2, deck + h * 0.03), fill=c)
    for k in range(12):
        px = x - h * 1.1 + k * h * 0.25
        cv.draw.line((px, deck, px, base + h * 0.05), fill=c, width=max(1, int(h * 0.015)))
    r = h * 0.4
    cy = deck - r * 1.1
    rim = (255, 90, 160) if cv.night else cv.lit((230, 70, 60))
    cv.draw.ellipse((x - r, cy - r, x + r, cy + r), outline=rim, width=max(1, int(h * 0.03)))
    for a in np.linspace(0, np.pi, 6, endpoint=False):
        dx, dy = r * np.cos(a), r * np.sin(a)
        cv.draw.line((x - dx, cy - dy, x + dx, cy + dy), fill=rim, width=max(1, int(h * 0.01)))
    cv.draw.polygon([(x, cy), (x - r * 0.5, deck), (x + r * 0.5, deck)], outline=c)
    f = _fine(cv)
    if f is None:
        return
    # Its gondolas round the rim, each its own colour.
    for a in np.linspace(0, 2 * np.pi, 16, endpoint=False):
        gx, gy, size = x + r * np.cos(a), cy + r * np.sin(a), h * 0.025
        tint = (
            LIGHT_COLORS[int(f.grain.integers(len(LIGHT_COLORS)))]
            if cv.night
            else cv.lit(((240, 200, 60), (60, 140, 220), (240, 240, 240))[int(f.grain.integers(3))])
        )
        cv.draw.rectangle((gx - size / 2, gy, gx + size / 2, gy + size * 1.2), fill=tint)


LANDMARKS = {
    "needle": _needle,
    "ball": _ball,
    "stepped": _stepped,
    "obelisk": _obelisk,
    "dome": _dome,
    "spires": _spires,
    "clocktower": _clocktower,
    "pointed": _pointed,
    "wheel": _wheel,
}


def avenue(
    cv,
    palette,
    rise=0.2,
    near=0.5,
    cabs=0,
    balconies=False,
    neon=False,
    lamps=False,
    cobbles=False,
    brick=False,
    floors=5,
) -> None:
    """A street to the vanishing point between two walls of facades. `rise`: how far the far
    facades stand above the horizon; `near`: how low the nearest rooflines come (0 = out of the
    frame's top, i.e. towers); `floors`: rows of windows per facade."""
    w, h = cv.w, cv.h
    vx = cv.x(0.5)
    road = cv.lit((95, 85, 80) if cobbles else (70, 70, 75), 0.05)
    walk = cv.lit((150, 140, 130), 0.05)
    cv.draw.rectangle((0, cv.horizon, w, h), fill=walk)  # sidewalks
    _slabs(cv, vx, walk)
    roadway = [(vx - w * 0.01, cv.horizon), (vx + w * 0.01, cv.horizon), (w * 0.85, h),
               (w * 0.15, h)]  # fmt: skip
    cv.draw.polygon(roadway, fill=road)
    if cobbles:
        for _ in range(400):
            t = cv.rng.uniform(0.05, 1) ** 0.7
            y = cv.horizon + t * (h - cv.horizon)
            x = vx + cv.rng.uniform(-1, 1) * t * (w * 0.35)
            r = t * h * 0.008
            cv.draw.ellipse((x - r * 1.5, y - r, x + r * 1.5, y + r), fill=cv.lit((135, 120, 105)))
    else:
        _asphalt(cv, vx, roadway, road)
        cv.draw.line((vx, cv.horizon, vx, h), fill=cv.lit((230, 210, 120)), width=max(1, h // 150))
    top_far = cv.horizon - rise * h * cv.zoom
    top_near = near * h / cv.zoom
    for side in (0, 1):
        outer, inner = (0, vx - w * 0.02) if side == 0 else (w, vx + w * 0.02)
        n = 6
        for k in range(n):  # facades from far (f=0) to near (f=1), each its own colour
            f0, f1 = k / n, (k + 1) / n
            xa, xb = inner + (outer - inner) * f0**1.6, inner + (outer - inner) * f1**1.6

            def top(f):
                return (
                    top_far
                    + (top_near - top_far) * f**1.6
                    + (cv.rng.uniform(-0.02, 0.02) * h if near > 0.05 else 0)
                )

            def bottom(f):
                return cv.horizon + (h * 0.92 - cv.horizon) * f**1.6

            ta, tb, ba, bb = top(f0), top(f1), bottom(f0), bottom(f1)
            color = palette[int(cv.rng.integers(len(palette)))]
            wall = cv.lit(color, 0.08)
            cv.draw.polygon([(xa, ta), (xb, tb), (xb, bb), (xa, ba)], fill=wall)
            if brick:
                _courses(cv, (xa, ta, ba), (xb, tb, bb), wall)
            _facade(cv, (xa, ta, ba), (xb, tb, bb), balconies, neon, brick, floors)
            if lamps and k % 2 == 1:
                _lamp(cv, xb, bb, (bb - tb) * 0.5)
    for _ in range(cabs):
        t = cv.rng.uniform(0.15, 1.0) ** 1.2
        y = cv.horizon + t * (h * 0.95 - cv.horizon)
        x = vx + cv.rng.uniform(-0.55, 0.55) * t * w * 0.35
        cw, ch = t * w * 0.09, t * w * 0.045
        # Under the street lights at night a cab stays yellow.
        yellow = (190, 150, 25) if cv.night else cv.lit((245, 195, 20))
        cv.draw.rectangle((x - cw / 2, y - ch, x + cw / 2, y), fill=yellow)
        cv.draw.rectangle((x - cw * 0.35, y - ch * 1.4, x + cw * 0.35, y - ch * 0.95), fill=yellow)
        cv.draw.rectangle(
            (x - cw * 0.3, y - ch * 0.85, x + cw * 0.3, y - ch * 0.55), fill=cv.lit((40, 45, 55))
        )
        for dx in (-0.42, 0.3):  # wheels, and the tail lights (lit at night)
            tail = (255, 60, 40) if cv.night else cv.lit((170, 30, 30))
            cv.draw.rectangle(
                (x + cw * dx, y - ch * 0.05, x + cw * (dx + 0.12), y + ch * 0.12), fill=(20, 20, 22)
            )
            cv.draw.rectangle(
                (x + cw * dx, y - ch * 0.45, x + cw * (dx + 0.1), y - ch * 0.3), fill=tail
            )


# A street's surface where the size shows it: the sidewalk in slabs (joints in the street's
# perspective, closer together toward the vanishing point), the asphalt's grit and its sealed
# cracks. All fine (joints and cracks 2 to 4 px, grit as the land's facets), so the street a
# small picture shows is the same; its own stream, so every other texture is as it was.
SLAB = 0.05  # a slab's depth at the frame's bottom, share of the height
CRACKS = 14


def _slabs(cv: _Canvas, vx: float, walk) -> None:
    if not _shows_fine(cv.h):
        return
    w, h, top = cv.w, cv.h, cv.horizon
    joint = _scaled(walk, 0.8)
    # Across: equal steps in depth. On the ground a point's height over the horizon on screen
    # falls as one over its distance, so the joints close up toward the horizon.
    step = SLAB * h / (h - top)  # a slab's depth, in units of the distance at the frame's bottom
    k = 1.0
    while (h - top) * step / k**2 >= 6:  # px between joints: closer would be a grey smear
        y = top + (h - top) / k
        cv.draw.line((0, y, w, y), fill=joint, width=max(2, round(3 * (y - top) / (h - top))))
        k += step
    for share in (0.02, 0.07, 0.93, 0.98):  # along: lines to the vanishing point
        cv.draw.line((vx, top, share * w, h), fill=joint, width=2)


def _asphalt(cv: _Canvas, vx: float, roadway, road) -> None:
    if not _shows_fine(cv.h):
        return
    stream = np.random.default_rng([cv.params.seed, 7])
    w, h, top = cv.w, cv.h, cv.horizon
    _texture(replace(cv, grain=stream), roadway, road, "asphalt", lights=False)
    seal = _scaled(road, 0.7)
    for _ in range(CRACKS):
        t = stream.uniform(0.15, 1.0)  # how near: 1 at the frame's bottom
        x, y = vx + stream.uniform(-0.3, 0.3) * t * w, top + t * (h - top)
        heading, points = stream.uniform(0, 2 * np.pi), [(x, y)]
        for _ in range(int(stream.integers(4, 12))):
            heading += stream.normal(0, 0.6)
            step = stream.uniform(10, 30) * t
            x, y = x + step * np.cos(heading), y + step * np.sin(heading) * 0.4  # lying flat
            if abs(x - vx) > 0.33 * w * (y - top) / (h - top) or not top < y < h:
                break  # the crack stops at the kerb
            points.append((x, y))
        if len(points) > 1:
            cv.draw.line(points, fill=seal, width=max(2, round(4 * t)), joint="curve")


def _facade(cv, a, b, balconies, neon, brick, floors) -> None:
    """Windows (and balconies, neon signs) on one facade between edges a and b, each
    (x, top, bottom)."""
    (xa, ta, ba), (xb, tb, bb) = a, b
    step = 0.85 / floors  # a floor's share of the facade's height
    for j in range(floors):
        for i in range(3):
            fx = (i + 0.3) / 3
            x0 = xa + (xb - xa) * fx
            x1 = xa + (xb - xa) * (fx + 0.18)
            top = ta + (tb - ta) * fx
            bottom = ba + (bb - ba) * fx
            y0 = top + (bottom - top) * (0.1 + j * step)
            y1 = y0 + (bottom - top) * step * 0.55
            lit = cv.night and cv.rng.uniform() < 0.6 and not neon
            trim = cv.lit((235, 230, 220)) if brick else None
            box = (min(x0, x1), y0, max(x0, x1), y1)
            cv.draw.rectangle(box, fill=LIT if lit else cv.lit((60, 70, 90)), outline=trim)
            if brick:
                _sash(cv, box, trim)
        if balconies and j in (1, 2):
            y = ta + (ba - ta) * (0.1 + j * step + step * 0.65)
            y2 = tb + (bb - tb) * (0.1 + j * step + step * 0.65)
            lw = max(1, int(abs(xb - xa) * 0.04))
            cv.draw.line((xa, y, xb, y2), fill=(25, 25, 30), width=lw)
            for k in range(7):
                f = k / 6
                xx, yy = xa + (xb - xa) * f, y + (y2 - y) * f
                cv.draw.line((xx, yy, xx, yy - abs(xb - xa) * 0.12), fill=(25, 25, 30), width=1)
    if neon:
        colors = ((255, 60, 150), (60, 220, 255), (255, 210, 40), (120, 255, 90))
        color = colors[int(cv.rng.integers(len(colors)))]
        if not cv.night:
            color = cv.lit(tuple(int(c * 0.8) for c in color))
        xm = (xa + xb) / 2
        ym = (ta + ba) / 2
        sw, sh = abs(xb - xa) * 0.45, abs(ba - ta) * 0.7
        sign = (xm - sw / 2, ym - sh / 2, xm + sw / 2, ym + sh / 2)
        cv.draw.rectangle(sign, fill=color)
        # The marquee over the door, the length of the facade.
        band = [(xa, ta + (ba - ta) * 0.8), (xb, tb + (bb - tb) * 0.8),
                (xb, tb + (bb - tb) * 0.88), (xa, ta + (ba - ta) * 0.88)]  # fmt: skip
        cv.draw.polygon(band, fill=colors[int(cv.rng.integers(len(colors)))] if cv.night else color)
        _sign_words(cv, sign, color, marquee=(band[0], band[1], (ba - ta) * 0.08))


# Broadway's signs are words in lights: where the size shows them, a blade sign carries its
# word in stacked capitals inside a rim of bulbs, and the marquee a row of bulbs (at least
# `BULB`, so that the measure's 5x5 median keeps them). Painted dark on the sign by day, lit
# at night; the words and bulbs are the night's lights, drawn from their stream.
SIGN_WORDS = ("BAR", "LIVE", "HONKY TONK", "SALOON", "BBQ", "BOOTS", "MUSIC", "TAVERN")
BULB = 5.0  # px: a bulb's smallest width
BULB_LIGHT = (255, 236, 180)


def _sign_words(cv: _Canvas, sign, color, marquee) -> None:
    if not _shows_fine(cv.h):
        return
    x0, y0, x1, y1 = sign
    bulb = max(BULB, (x1 - x0) * 0.06)
    (ma, ya), (mb, yb), band = marquee
    if x1 - x0 < 6 * bulb:  # far down the street: a blur of light at this size
        return
    ring = [(x, y) for x in np.arange(x0 + bulb, x1 - bulb / 2, 2.2 * bulb) for y in (y0, y1)]
    ring += [(x, y) for y in np.arange(y0 + bulb, y1 - bulb / 2, 2.2 * bulb) for x in (x0, x1)]
    ring += [(ma + (mb - ma) * t, ya + (yb - ya) * t + band / 2)
             for t in np.arange(0.5 / 12, 1, 1 / 12)]  # fmt: skip
    for x, y in ring:
        cv.draw.ellipse((x - bulb / 2, y - bulb / 2, x + bulb / 2, y + bulb / 2), fill=BULB_LIGHT)
    word = SIGN_WORDS[int(cv.lamps.integers(len(SIGN_WORDS)))].replace(" ", "")
    size = int(min((x1 - x0 - 2 * bulb) * 0.8, (y1 - y0 - 2 * bulb) / len(word) * 0.95))
    if size < 3 * BULB:
        return
    ink = (255, 250, 235) if cv.night else _scaled(color, 0.3)
    step = (y1 - y0 - 2 * bulb) / len(word)
    for i, letter in enumerate(word):
        xy = ((x0 + x1) / 2, y0 + bulb + (i + 0.5) * step)
        # Heavy strokes, as a sign's letters are: thin ones the measure's median would drop.
        cv.draw.text(xy, letter, fill=ink, font=_font(size), anchor="mm",
                     stroke_width=max(1, size // 12), stroke_fill=ink)  # fmt: skip


@functools.cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size)


# A brick row house's windows are sashes in white-painted frames, six panes over six (fewer
# where the window is small): where the size shows them (panes of 6 px or more), the frame
# and glazing bars, 3 px at least so the measure's 5x5 median keeps them (the frame's 1 px
# outline, all training's size can draw, it drops).
PANE = 6  # px: the smallest pane drawn


def _sash(cv: _Canvas, box, trim) -> None:
    x0, y0, x1, y1 = box
    bar = max(3, round((x1 - x0) * 0.06))
    cols = next((n for n in (3, 2) if (x1 - x0) / n >= PANE + bar), 0)
    rows = next((n for n in (4, 2) if (y1 - y0) / n >= PANE + bar), 0)
    if not _shows_fine(cv.h) or not (cols and rows):
        return
    cv.draw.rectangle(box, outline=trim, width=bar)
    for k in range(1, cols):
        x = x0 + (x1 - x0) * k / cols
        cv.draw.rectangle((x - bar / 2, y0, x + bar / 2, y1), fill=trim)
    for k in range(1, rows):  # the meeting rail, between the two sashes, wider
        width = bar * (1.6 if 2 * k == rows else 1.0)
        y = y0 + (y1 - y0) * k / rows
        cv.draw.rectangle((x0, y - width / 2, x1, y + width / 2), fill=trim)


COURSE = 0.006  # a brick course where a facade is nearest, share of the frame's height


def _courses(cv, a, b, color) -> None:
    """Brick courses across a facade between edges a and b, each (x, top, bottom), where the
    size shows them: darker bands in the facade's perspective, one every 1/n of its height
    (6 px on its near edge at 1080p); none on a facade so far that they would close up."""
    (xa, ta, ba), (xb, tb, bb) = a, b
    n = int(max(ba - ta, bb - tb) / (COURSE * cv.h))
    if not _shows_fine(cv.h) or n < 2 or min(ba - ta, bb - tb) / n < 4:
        return
    base = np.array(color, np.float32)
    for k in range(n):
        t0, t1 = k / n, (k + 0.45) / n  # mortar line and shadow: under half the course
        fill = tuple((base * cv.grain.uniform(0.78, 0.88)).astype(int).tolist())
        left, right = (
            (ta + (ba - ta) * t0, ta + (ba - ta) * t1),
            (tb + (bb - tb) * t0, tb + (bb - tb) * t1),
        )
        cv.draw.polygon([(xa, left[0]), (xb, right[0]), (xb, right[1]), (xa, left[1])], fill=fill)


def _lamp(cv, x, base, h) -> None:
    c = cv.lit((30, 30, 30))
    cv.draw.line((x, base, x, base - h), fill=c, width=max(1, int(h * 0.04)))
    r = h * 0.08
    glow = (255, 220, 140) if cv.night else cv.lit((230, 220, 180))
    if cv.night:
        cv.draw.ellipse(
            (x - 3 * r, base - h - 3 * r, x + 3 * r, base - h + 3 * r), fill=(150, 110, 60)
        )
    cv.draw.ellipse((x - r, base - h - r, x + r, base - h + r), fill=glow)


def beach(cv, sea=(30, 110, 170), sand=(230, 205, 150), shore=0.2, surf=True) -> None:
    water(cv, sea, 0.0, 1.0, glints=30)
    y0 = cv.y(shore * cv.zoom)
    wave = y0 + 0.01 * cv.h * np.sin(
        np.linspace(0, cv.rng.uniform(8, 14), cv.w) + cv.rng.uniform(0, 6)
    )
    _polygon_below(cv, wave, cv.lit(sand, 0.06), texture="sand", nearest=True)  # the foreground
    if surf:
        cv.draw.line(
            [(i, float(wave[i])) for i in range(0, cv.w, 2)],
            fill=cv.lit((250, 250, 250)),
            width=max(1, cv.h // 80),
        )


def palms(cv, xs=(0.1, 0.9), count=3, at=0.3, height=0.45, lean=0.15) -> None:
    for _ in range(count):
        x = cv.w * cv.rng.uniform(*xs)
        base = cv.y(at) + cv.rng.uniform(0, 0.2) * cv.h
        h = height * cv.h * cv.zoom * cv.rng.uniform(0.8, 1.2)
        tip = (x + lean * h * cv.rng.uniform(-1, 1), base - h)
        trunk = cv.lit((110, 85, 60))
        frond = cv.lit((40, 120, 60), 0.1)
        if _shows_fine(cv.h):
            _palm(cv, (x, base), tip, h, trunk, frond)
            continue
        cv.draw.line((x, base, tip[0], tip[1]), fill=trunk, width=max(1, int(h * 0.035)))
        for a in np.linspace(0, 2 * np.pi, 9, endpoint=False):
            ex = tip[0] + np.cos(a) * h * 0.28
            ey = tip[1] + np.sin(a) * h * 0.12 + h * 0.08
            cv.draw.line((tip[0], tip[1], ex, ey), fill=frond, width=max(1, int(h * 0.04)))


def _palm(cv: _Canvas, foot, tip, h: float, trunk, frond) -> None:
    """A palm where the size shows it: its trunk ringed with leaf scars and lit on the sun's
    side, its nine fronds feathers of leaflets, where the coarse drawing has nine strokes (a
    child's asterisk at 1080p). Each part covers what the coarse one does, so the picture the
    model drew from that and this one agree at a distance (`engine.layout_detail` takes this
    one's detail only where they do)."""
    sun, strength = _light(cv)
    (x0, y0), (x1, y1) = foot, tip
    width = max(1, int(h * 0.035))
    cv.draw.line((x0, y0, x1, y1), fill=trunk, width=width)
    lean = (x1 - x0) / (y0 - y1)
    shine = sun[0] * width * 0.25
    cv.draw.line((x0 + shine, y0, x1 + shine, y1), fill=_scaled(trunk, 1 + strength),
                 width=max(1, round(width * 0.3)))  # fmt: skip
    for y in np.arange(y1 + width, y0, max(width * 0.8, 4.0)):  # the rings of old leaf bases
        x = x0 + lean * (y0 - y)
        cv.draw.line((x - width / 2, y, x + width / 2, y + width * 0.15),
                     fill=_scaled(trunk, 0.7), width=2)  # fmt: skip
    stroke = max(1, int(h * 0.04))
    for a in np.linspace(0, 2 * np.pi, 9, endpoint=False):
        end = np.array([x1 + np.cos(a) * h * 0.28, y1 + np.sin(a) * h * 0.12 + h * 0.08])
        along = (end - (x1, y1)) / np.linalg.norm(end - (x1, y1))
        across = np.array([-along[1], along[0]])
        shade = _scaled(frond, cv.grain.uniform(0.85, 1.1) * (1 + strength * (along @ sun)))
        dark = _scaled(shade, 0.75)
        cv.draw.line((x1, y1, *end), fill=dark, width=max(2, round(stroke * 0.25)))
        steps = max(8, int(np.linalg.norm(end - (x1, y1)) / max(3.0, stroke * 0.2)))
        for s in np.linspace(0.05, 1, steps):
            rib = np.array([x1, y1]) * (1 - s) + end * s
            reach = stroke * (0.55 + 0.25 * np.sin(np.pi * s)) * (1.1 - 0.5 * s)
            for side, fill in ((-1, shade), (1, dark)):  # the leaflets, a V along the rib
                leaf = rib + (across * side + along * 0.6) * reach
                cv.draw.line((*rib, *leaf), fill=fill, width=max(2, round(stroke * 0.15)))


def deco(cv, x0=0.0, x1=0.5, at=0.12, tall=(0.1, 0.2)) -> None:
    """Pastel art deco hotels along the beach, each with a rounded corner and a neon line."""
    pastel = ((250, 190, 200), (170, 230, 220), (250, 235, 170), (230, 200, 240), (255, 255, 255))
    x, end, base = cv.x(x0), cv.x(x1), cv.y(at)
    while x < end:
        w = cv.rng.uniform(0.06, 0.11) * cv.w * cv.zoom
        h = cv.rng.uniform(*tall) * cv.h * cv.zoom
        color = cv.lit(pastel[int(cv.rng.integers(len(pastel)))])
        cv.draw.rounded_rectangle((x, base - h, x + w, base), radius=w * 0.2, fill=color)
        cv.draw.rectangle((x + w * 0.42, base - h * 1.25, x + w * 0.58, base - h * 0.9), fill=color)
        stripe = (80, 255, 230) if cv.night else cv.lit((60, 170, 170))
        cv.draw.line(
            (x + w * 0.1, base - h * 0.75, x + w * 0.9, base - h * 0.75),
            fill=stripe,
            width=max(1, int(h * 0.06)),
        )
        _windows(cv, (x, base - h * 0.6, x + w, base), chance=0.6, color=(110, 170, 200))
        if _shows_fine(cv.h):
            _deco_make(cv, (x, base - h, x + w, base), color)
        x += w + cv.rng.uniform(0.0, 0.02) * cv.w


def _deco_make(cv: _Canvas, box, color) -> None:
    """An Ocean Drive hotel's make where the size shows it: the shaded eyebrow ledge over each
    row of windows, and the fins up its central tower."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    ledge = _scaled(color, 0.75)  # `color` is lit already
    dy = 0.02 * cv.h * cv.zoom  # as `_windows` spaces its rows
    y = y1 - h * 0.6 + dy * 0.6 - dy * 0.12
    while y < y1 - dy * 0.5:
        cv.draw.line(
            (x0 + w * 0.04, y, x1 - w * 0.04, y), fill=ledge, width=max(3, round(dy * 0.14))
        )
        y += dy
    for k in (0.46, 0.5, 0.54):
        fin = x0 + w * k
        cv.draw.line(
            (fin, y1 - h * 1.22, fin, y1 - h * 0.8), fill=ledge, width=max(3, round(w * 0.012))
        )


def lifeguard(cv, x=0.7, at=0.3) -> None:
    x, base = cv.x(x), cv.y(at)
    s = 0.12 * cv.h * cv.zoom
    c = cv.lit((235, 100, 80))
    for dx in (-0.4, 0.4):
        cv.draw.line(
            (x + dx * s, base, x + dx * s * 0.6, base - s),
            fill=cv.lit((240, 240, 240)),
            width=max(1, int(s * 0.06)),
        )
    cv.draw.rectangle((x - s * 0.5, base - s * 1.6, x + s * 0.5, base - s), fill=c)
    cv.draw.polygon(
        [(x - s * 0.65, base - s * 1.6), (x, base - s * 2), (x + s * 0.65, base - s * 1.6)],
        fill=cv.lit((120, 200, 220)),
    )


def cliffs(cv, side="left", color=(180, 140, 100), height=0.3, reach=0.35) -> None:
    """Sandstone cliffs dropping into the sea on one side: a scrubby flat top, a steep face
    with strata; where the size shows it, its rock's facets and the gullies rain cut down it."""
    reach = reach * cv.zoom
    xs = np.arange(0, int(cv.w * reach))
    u = xs / xs[-1]
    rough = np.convolve(cv.rng.normal(0, 1, len(xs)), np.ones(9) / 9, mode="same")
    top = cv.y(0.05) - height * cv.h * cv.zoom * np.clip((1 - u) * 4, 0, 1) ** 0.6
    ys = top + rough * 0.006 * cv.h
    if side == "right":
        xs = cv.w - 1 - xs
    points = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)]
    edge = 0 if side == "left" else cv.w
    outline = [(edge, cv.h), *points, (float(xs[-1]), cv.h)]
    rock = cv.lit(color, 0.05)
    cv.draw.polygon(outline, fill=rock)
    if _shows_fine(cv.h):
        _texture(cv, outline, rock, "rock", lights=False)
        _gullies(cv, points, rock)
    scrub = [(float(x), float(y) + 0.025 * cv.h) for x, y in zip(xs[::-1], ys[::-1], strict=True)]
    flat = [i for i, uu in enumerate(u) if uu < 0.7]
    cv.draw.polygon([points[i] for i in flat] + scrub[len(xs) - len(flat):],
                    fill=cv.lit((95, 120, 60), 0.05))  # fmt: skip
    dark = cv.lit(tuple(int(c * 0.82) for c in color))
    for k in range(5):  # strata
        depth = (0.3 + 0.14 * k) * height * cv.h * cv.zoom
        cv.draw.line([(x, y + depth) for x, y in points[::6]], fill=dark, width=max(1, cv.h // 250))


def _gullies(cv: _Canvas, points, rock) -> None:
    """Rain's gullies down a cliff face from its rim: dark, wandering, each with a lit lip on the
    sun's side, a few hundred px long at 1080p."""
    sun, strength = _light(cv)
    shade, lip = _scaled(rock, 0.72), _scaled(rock, 1 + strength)
    width = max(3.0, cv.h * 0.004)
    for x, y in points[:: max(1, int(cv.h * 0.03))]:
        if cv.grain.uniform() < 0.35:
            continue
        length = cv.h * cv.grain.uniform(0.08, 0.35)
        steps = np.arange(0, length, width * 2)
        wander = np.cumsum(cv.grain.normal(0, width * 0.6, len(steps)))
        path = [(x + dx, y + cv.h * 0.03 + dy) for dx, dy in zip(wander, steps, strict=True)]
        if len(path) > 1:
            cv.draw.line(path, fill=shade, width=round(width))
            toward = width * (np.sign(sun[0]) or 1.0)
            lit = [(px + toward, py) for px, py in path]
            cv.draw.line(lit, fill=lip, width=max(2, round(width / 2)))


def surfers(cv, count=4) -> None:
    for _ in range(count):
        x, y = cv.rng.uniform(0.5, 0.97) * cv.w, cv.y(cv.rng.uniform(0.04, 0.14))
        s = 0.025 * cv.h * cv.zoom
        cv.draw.line((x - s, y, x + s, y), fill=cv.lit((250, 250, 250)), width=max(1, int(s * 0.3)))
        cv.draw.line((x, y, x, y - s * 1.4), fill=(20, 20, 25), width=max(1, int(s * 0.3)))


def trees(cv, kind="pine", at=0.0, rows=3, count=18, height=0.2, color=(30, 90, 40), xs=(0, 1)):
    """Rows of trees from `at` down: pines (triangles), firs (tall and narrow), round broadleaf
    (maples, park trees) or birches (white trunks). Where the size shows it, a conifer is tiers
    of drooping boughs and a broadleaf crown clumps of leaves, each lit on the sun's side."""
    fine = _shows_fine(cv.h)
    for row in range(rows):
        base = cv.y(at + row * 0.1)
        shade = 0.7 + 0.15 * row
        for _ in range(count + 4 * row):
            x = cv.w * cv.rng.uniform(xs[0] - 0.02, xs[1] + 0.02)
            h = height * cv.h * cv.rng.uniform(0.7, 1.2) * (0.8 + 0.3 * row) * cv.zoom
            c = tuple(int(v * shade) for v in color)
            if kind in ("pine", "fir"):
                w = h * (0.38 if kind == "pine" else 0.22)
                fill = cv.lit(c, 0.12)
                crown = [(x, base - h), (x - w / 2, base), (x + w / 2, base)]
                if fine:  # the boughs over the shade within, as wide as the small one's
                    core = [(x, base - h), (x - w * 0.35, base), (x + w * 0.35, base)]
                    cv.draw.polygon(core, fill=_scaled(fill, 0.8))
                    _boughs(cv, x, base, w, h, fill)
                else:
                    cv.draw.polygon(crown, fill=fill)
                continue
            if kind == "birch":
                bark = cv.lit((235, 235, 230))
                cv.draw.line((x, base, x, base - h), fill=bark, width=max(1, int(h * 0.05)))
                if fine:
                    _birch_marks(cv, x, base, h)
            r = h * (0.3 if kind == "birch" else 0.35)
            leaf = c if kind != "maple" else MAPLE[int(cv.rng.integers(len(MAPLE)))]
            cy = base - h * (0.8 if kind == "birch" else 0.55)
            fill = cv.lit(leaf, 0.12)
            depths = _scaled(fill, 0.85) if fine else fill  # a crown's depths, under its clumps
            cv.draw.ellipse((x - r, cy - r, x + r, cy + r), fill=depths)
            if fine:
                _clumps(cv, x, cy, r, fill)


def _birch_marks(cv: _Canvas, x: float, base: float, h: float) -> None:
    """A birch's dark lenticels and scars across its white bark."""
    half = max(1, int(h * 0.05)) / 2
    for y in base - h * np.sort(cv.grain.uniform(0.02, 0.75, int(h / 25) + 2)):
        left, right = cv.grain.uniform(-1, 0.3) * half, cv.grain.uniform(-0.3, 1) * half
        if right - left > 2:
            cv.draw.rectangle((x + left, y, x + right, y + max(3.0, h * 0.006)), fill=(40, 38, 36))


# Where the light on a tree comes from (toward it, in the frame, y down) and how much brighter
# its sunny side is than its middle: the sun high at noon, low and to the side at golden hour;
# under cloud the sky lights crowns from above, softly; at night the moon or the towns' glow
# on the clouds does, from above, dimly (less and the clumps of a night crown merged into a
# flat disc).
SUN = {"day": (-0.5, -0.85), "golden": (-0.9, -0.4), "night": (0.0, -1.0)}
SUNNY_SIDE = {"day": 0.35, "golden": 0.45, "night": 0.25}
OVERCAST_SIDE = 0.15


def _light(cv: _Canvas) -> tuple[np.ndarray, float]:
    """Toward the light on a tree (a unit vector in the frame, y down), and how much brighter
    than its colour a surface facing it is."""
    if cv.params.weather == "cloudy" and not cv.night:
        return np.array([0.0, -1.0]), OVERCAST_SIDE
    sun = np.array(SUN[cv.params.time])
    return sun / np.linalg.norm(sun), SUNNY_SIDE[cv.params.time]


def _clumps(cv: _Canvas, x: float, cy: float, r: float, fill) -> None:
    """A broadleaf crown of radius `r` (its disc drawn already, in shade) as clumps of leaves:
    lumpy at its edge, the clumps on the side toward the light brighter, each mottled, lighter
    toward the light; drawn from the darkest up, so the lit ones lie on top, as in a photograph
    of a tree. On average as bright as the disc, which the picture drawn small shows."""
    sun, strength = _light(cv)
    clump = max(r * 0.28, 5.0)
    count = int(np.clip(5 * (r / clump) ** 2, 6, 60))
    turn = cv.grain.uniform(0, 2 * np.pi, count)
    reach = np.sqrt(cv.grain.uniform(0.2, 1, count))  # out to the disc's edge, which they hide
    spots = np.stack([np.cos(turn), np.sin(turn)], 1) * reach[:, None]
    sizes = clump * cv.grain.uniform(0.7, 1.15, count)
    brightness = cv.grain.uniform(0.94, 1.06, count) * (1 + strength * (spots @ sun))
    leaf = float(np.clip(r * 0.09, 3.0, 7.0))  # px: a 5x5 median keeps a spray of leaves
    for i in np.argsort(brightness):
        (dx, dy), s, k = spots[i] * r * 0.78, sizes[i], brightness[i]
        cv.draw.ellipse((x + dx - s, cy + dy - s, x + dx + s, cy + dy + s),
                        fill=_scaled(fill, k * (1 - strength / 2)))  # fmt: skip
        # Its sprays of leaves, mottled, brighter toward the light.
        n = int(2.5 * (s / leaf) ** 2)
        turn, reach = cv.grain.uniform(0, 2 * np.pi, n), s * np.sqrt(cv.grain.uniform(0, 1, n))
        at = np.stack([np.cos(turn), np.sin(turn)], 1) * reach[:, None]
        shades = k * (1 + strength * (at @ sun) / s) * cv.grain.uniform(0.88, 1.08, n)
        for (lx, ly), shade in zip(at + np.array([x + dx, cy + dy]), shades, strict=True):
            cv.draw.ellipse((lx - leaf, ly - leaf, lx + leaf, ly + leaf), fill=_scaled(fill, shade))


def _boughs(cv: _Canvas, x: float, base: float, w: float, h: float, fill) -> None:
    """A conifer `w` wide at its foot and `h` tall as tiers of drooping boughs: a saw-toothed
    outline, each tier's underside in shadow, its sunny half lighter."""
    sun, strength = _light(cv)
    tiers = int(np.clip(h / max(w * 0.3, 6.0), 3, 14))
    top = base - h
    for t in range(tiers):  # from the top down, each lower tier wider and drawn over
        y1 = top + h * (t + 1) / tiers
        y0 = max(top, y1 - 1.8 * h / tiers)
        half = w / 2 * (t + 1) / tiers * cv.grain.uniform(1.0, 1.2)
        droop = (y1 - y0) * 0.35
        tip = cv.grain.uniform(-0.15, 0.15) * half
        for side in (-1, 1):
            cv.draw.polygon([(x, y0), (x + side * (half + tip), y1 + droop * 0.3),
                             (x + side * half * 0.55, y1 - droop), (x, y1 - droop * 0.5)],
                            fill=_scaled(fill, 1 + strength * side * sun[0]))  # fmt: skip
        # the tier's shaded underside
        cv.draw.line([(x - half * 0.9, y1), (x, y1 - droop * 0.5), (x + half * 0.9, y1)],
                     fill=_scaled(fill, 0.7), width=max(2, round((y1 - y0) * 0.12)))  # fmt: skip


MAPLE = ((200, 70, 30), (230, 140, 30), (240, 190, 40), (60, 110, 40))


def saguaros(cv, count=3, at=0.15, height=0.35) -> None:
    for _ in range(count):
        x = cv.rng.uniform(0.05, 0.95) * cv.w
        base = cv.y(at + cv.rng.uniform(0, 0.25))
        h = height * cv.h * cv.zoom * cv.rng.uniform(0.7, 1.2)
        g = cv.lit((50, 110, 55), 0.1)
        tw = h * 0.09
        cv.draw.rounded_rectangle((x - tw, base - h, x + tw, base), radius=tw, fill=g)
        for side, up in ((-1, 0.45), (1, 0.6)):  # the arms, bent upward
            ax = x + side * h * 0.2
            cv.draw.rounded_rectangle(
                (min(x, ax), base - h * up, max(x, ax), base - h * up + tw * 1.4),
                radius=tw * 0.6,
                fill=g,
            )
            cv.draw.rounded_rectangle(
                (ax - tw * 0.8, base - h * (up + 0.28), ax + tw * 0.8, base - h * up + tw * 1.4),
                radius=tw * 0.7,
                fill=g,
            )


def strip(cv, x0=0.3, x1=0.75, at=0.0, tall=(0.1, 0.3)) -> None:
    """The Strip: a cluster of hotel towers on the horizon, ablaze with lights at night."""
    x, end, base = cv.x(x0), cv.x(x1), cv.y(at)
    neon = ((255, 210, 80), (255, 80, 180), (90, 200, 255), (255, 255, 255))
    while x < end:
        w = cv.rng.uniform(0.015, 0.035) * cv.w * cv.zoom
        h = cv.rng.uniform(*tall) * cv.h * cv.zoom
        body = cv.lit((200, 180, 140) if cv.rng.uniform() < 0.5 else (170, 150, 120), 0.1)
        cv.draw.rectangle((x, base - h, x + w, base), fill=body)
        if cv.night:
            glow = neon[int(cv.rng.integers(len(neon)))]
            cv.draw.rectangle((x, base - h, x + w, base), fill=tuple(int(c * 0.6) for c in glow))
            cv.draw.rectangle((x, base - h, x + w, base - h * 0.9), fill=glow)
            _windows(cv, (x, base - h, x + w, base), every=(0.008, 0.012), chance=0.8)
        x += w + cv.rng.uniform(0, 0.01) * cv.w
    if cv.night:  # the glow over it
        halo = Image.new("L", cv.image.size, 0)
        ImageDraw.Draw(halo).ellipse(
            (cv.x(x0) - 0.05 * cv.w, base - 0.5 * cv.h, end + 0.05 * cv.w, base + 0.1 * cv.h),
            fill=120,
        )
        halo = halo.filter(ImageFilter.GaussianBlur(cv.h / 12))
        cv.image.paste(Image.new("RGB", cv.image.size, (255, 140, 200)), (0, 0), halo)
        cv.draw = ImageDraw.Draw(cv.image)


def houses(cv, at=0.25, count=14, palette=((230, 220, 200), (210, 190, 160), (200, 200, 210))):
    """Low suburban houses with pitched roofs along a band."""
    for _ in range(count):
        x = cv.rng.uniform(0, 1) * cv.w
        base = cv.y(at + cv.rng.uniform(0, 0.08))
        w, h = cv.rng.uniform(0.03, 0.05) * cv.w, 0.03 * cv.h
        c = cv.lit(palette[int(cv.rng.integers(len(palette)))], 0.05)
        cv.draw.rectangle((x, base - h, x + w, base), fill=c)
        cv.draw.polygon(
            [(x - w * 0.1, base - h), (x + w / 2, base - h * 1.8), (x + w * 1.1, base - h)],
            fill=cv.lit((150, 80, 60)),
        )
        if cv.night:
            cv.draw.rectangle(
                (x + w * 0.3, base - h * 0.7, x + w * 0.45, base - h * 0.35), fill=LIT
            )


def highway(cv, at=0.05, to=0.3, lanes=6) -> None:
    """A wide highway across the foreground, with car lights."""
    y0, y1 = cv.y(at), cv.y(to)
    cv.draw.rectangle((0, y0, cv.w, y1), fill=cv.lit((90, 90, 95)))
    for k in range(1, lanes):
        y = y0 + (y1 - y0) * k / lanes
        for x in np.arange(0, cv.w, cv.w * 0.05):
            cv.draw.line(
                (x, y, x + cv.w * 0.025, y), fill=cv.lit((230, 230, 230)), width=max(1, cv.h // 300)
            )
    for _ in range(24):
        y = cv.rng.uniform(y0, y1)
        x = cv.rng.uniform(0, cv.w)
        s = (y1 - y0) / lanes * 0.6
        head = (y - y0) / (y1 - y0) < 0.5
        light = (
            ((255, 250, 220) if head else (255, 40, 40))
            if cv.night
            else cv.lit(tuple(int(v) for v in cv.rng.integers(60, 230, 3)))
        )
        cv.draw.rectangle((x, y - s / 2, x + s * 2.2, y + s / 2), fill=light)


def bayou(cv, at=0.1) -> None:
    """A winding brown-green bayou through park lawns in the foreground."""
    ground(cv, (80, 140, 60), at)
    xs = np.arange(cv.w)
    centre = cv.y(at + 0.25) + 0.08 * cv.h * np.sin(
        xs / cv.w * 2 * np.pi * 1.3 + cv.rng.uniform(0, 6)
    )
    width = 0.06 * cv.h * (1 + xs / cv.w)
    top = [(float(x), float(y)) for x, y in zip(xs, centre - width, strict=True)]
    bottom = [(float(x), float(y)) for x, y in zip(xs[::-1], (centre + width)[::-1], strict=True)]
    river = cv.lit((90, 100, 70), 0.05)
    cv.draw.polygon(top + bottom, fill=river)
    if _shows_fine(cv.h):  # its slow ripples, and the far bank's shade and the near one's mud
        _texture(cv, top + bottom, river, "water")
        cv.draw.line(top, fill=_scaled(river, 0.6), width=max(3, round(cv.h * 0.006)))
        cv.draw.line(bottom, fill=_scaled(river, 1.25), width=max(3, round(cv.h * 0.004)))
    trees(cv, "round", at=at + 0.02, rows=1, count=10, height=0.08, color=(50, 110, 45))


def mall(cv, at=0.0) -> None:
    """The National Mall: a long lawn with paths to the monument."""
    ground(cv, (90, 150, 70), at)
    vx = cv.x(0.5)
    for side in (-1, 1):
        cv.draw.polygon(
            [
                (vx + side * 0.01 * cv.w, cv.y(at)),
                (vx + side * 0.02 * cv.w, cv.y(at)),
                (vx + side * 0.4 * cv.w, cv.h),
                (vx + side * 0.33 * cv.w, cv.h),
            ],
            fill=cv.lit((215, 205, 180)),
        )
    cv.draw.rectangle((0, cv.y(at), cv.w, cv.y(at + 0.015)), fill=cv.lit((60, 100, 50)))


def ridges(cv, count=5, color=(70, 100, 150), at=0.1, amp=0.12) -> None:
    """Layer after layer of forested ridges fading into blue haze (the Blue Ridge)."""
    for k in range(count):
        haze = 0.75 - k * 0.7 / count
        hills(cv, color, at=at - 0.08 * (count - k) + 0.02, amp=amp, rough=0.7, haze=haze,
              texture="canopy")  # fmt: skip


PRIMITIVES = {
    "ground": ground,
    "hills": hills,
    "peak": peak,
    "water": water,
    "towers": towers,
    "landmark": landmark,
    "avenue": avenue,
    "beach": beach,
    "palms": palms,
    "deco": deco,
    "lifeguard": lifeguard,
    "cliffs": cliffs,
    "surfers": surfers,
    "trees": trees,
    "saguaros": saguaros,
    "strip": strip,
    "houses": houses,
    "highway": highway,
    "bayou": bayou,
    "mall": mall,
    "ridges": ridges,
}

GREY_TOWERS = ((95, 100, 110), (120, 125, 135), (80, 85, 95), (140, 140, 150))
GLASS = ((90, 130, 160), (110, 150, 175), (70, 100, 130), (150, 170, 185))
BRICK = ((150, 70, 55), (130, 60, 50), (165, 85, 60))
CREOLE = ((240, 200, 120), (230, 150, 160), (120, 190, 180), (240, 230, 210))
DARK_GLASS = ((45, 55, 70), (60, 72, 90), (35, 40, 52), (80, 92, 108))
SNOWY_ROCK = (105, 105, 120)

# --- the table: every built-in geography by its signature ------------------------------------

SIGNATURES: dict[str, Signature] = {
    "San Francisco Bay Area": Signature("mission peak above the bay", (0.5, 0.62), (
        ("hills", dict(color=(120, 125, 140), at=0.0, amp=0.06, haze=0.4)),
        ("water", dict(color=(60, 100, 140), at=0.0, to=0.08)),
        ("peak", dict(color=(190, 160, 85), x=0.55, width=1.3, height=0.32, at=0.12,
                      shape="mission", texture="grass")),
        ("ground", dict(color=(175, 150, 80), at=0.12)),
        ("houses", dict(at=0.18, count=16)),
    )),
    "Manhattan": Signature("manhattan avenue with yellow cabs", (0.55, 0.68), (
        ("avenue", dict(palette=(*GREY_TOWERS, (150, 110, 80)), rise=0.45, near=0.0, cabs=7,
                        floors=12)),
    )),
    "Miami": Signature("south beach palms and art deco", (0.4, 0.5), (
        ("beach", dict(sea=(40, 170, 180), sand=(240, 225, 190), shore=0.1)),
        ("deco", dict(x0=-0.15, x1=0.55, at=0.2, tall=(0.12, 0.22))),
        ("lifeguard", dict(x=0.75, at=0.38)),
        ("palms", dict(xs=(0.0, 1.0), count=4, at=0.3, height=0.5)),
    )),
    "Denver": Signature("the front range above the plains", (0.5, 0.6), (
        ("hills", dict(color=SNOWY_ROCK, at=0.0, amp=0.2, rough=1.6, sharp=True, snow=0.05,
                       haze=0.25)),
        ("ground", dict(color=(170, 160, 110), at=0.0)),
        ("towers", dict(x0=0.35, x1=0.6, at=0.06, tall=(0.03, 0.12), wide=(0.01, 0.02),
                        palette=GLASS)),
        ("ground", dict(color=(150, 145, 95), at=0.06)),
    )),
    "Chicago": Signature("chicago skyline on the lake", (0.45, 0.55), (
        ("towers", dict(x0=-0.2, x1=1.2, tall=(0.08, 0.3), wide=(0.02, 0.05),
                        palette=GREY_TOWERS)),
        ("landmark", dict(kind="stepped", x=0.4, height=0.45, color=(40, 40, 45))),
        ("water", dict(color=(50, 90, 120), at=0.0, glints=60)),
    )),
    "Phoenix": Signature("saguaros and red buttes", (0.45, 0.55), (
        # Two saguaros large in the foreground, green to the frame's top, in front of the
        # buttes: Las Vegas is red rock and tan towers on the horizon, with nothing near.
        ("peak", dict(color=(175, 80, 50), x=0.3, width=0.35, height=0.18, shape="butte")),
        ("peak", dict(color=(190, 95, 60), x=0.75, width=0.25, height=0.12, shape="butte")),
        ("ground", dict(color=(210, 140, 90), at=0.0, texture="gravel")),
        ("saguaros", dict(count=3, at=0.1, height=0.3)),
        ("saguaros", dict(count=2, at=0.3, height=0.75)),
    )),
    "Seattle": Signature("the space needle and mount rainier", (0.55, 0.65), (
        # Rainier broad and white over Puget Sound's blue band, the needle on a wooded hill:
        # Portland is a lone white spire over firs, with no water and no tower.
        ("peak", dict(color=(150, 155, 175), x=0.3, width=1.1, height=0.32, shape="cone",
                      snow=0.2, haze=0.25)),
        ("water", dict(color=(50, 95, 135), at=0.0, to=0.14, glints=40)),
        ("ground", dict(color=(45, 80, 50), at=0.14)),
        ("landmark", dict(kind="needle", x=0.7, at=0.16, height=0.75, color=(235, 235, 240))),
        ("trees", dict(kind="pine", at=0.14, rows=2, count=24, height=0.16, color=(25, 75, 40))),
    )),
    "Los Angeles": Signature("santa monica pier and palms", (0.45, 0.55), (
        ("beach", dict(sea=(40, 110, 160), sand=(225, 200, 150), shore=0.22)),
        ("landmark", dict(kind="wheel", x=0.68, at=0.12, height=0.3, color=(90, 70, 60))),
        ("palms", dict(xs=(0.0, 0.3), count=3, at=0.1, height=0.8, lean=0.05)),
    )),
    "San Diego": Signature("la jolla cliffs and surfers", (0.4, 0.5), (
        ("beach", dict(sea=(25, 95, 140), sand=(215, 190, 140), shore=0.35)),
        ("cliffs", dict(side="left", color=(190, 145, 95), height=0.3, reach=0.4)),
        ("surfers", dict(count=5)),
    )),
    "Boston": Signature("beacon hill brick and gas lamps", (0.55, 0.65), (
        ("avenue", dict(palette=BRICK, rise=0.08, near=0.25, lamps=True, brick=True)),
    )),
    "Washington, D.C.": Signature("the washington monument and the capitol", (0.55, 0.65), (
        ("landmark", dict(kind="dome", x=0.6, height=0.24, color=(235, 235, 230))),
        ("landmark", dict(kind="obelisk", x=0.42, at=0.02, height=0.5, color=(240, 238, 230))),
        ("trees", dict(kind="round", at=0.0, rows=1, count=14, height=0.06, color=(60, 110, 50))),
        ("mall", dict(at=0.02)),
    )),
    "Philadelphia": Signature("independence hall and cobblestones", (0.5, 0.6), (
        ("landmark", dict(kind="clocktower", x=0.5, height=0.35, color=(150, 75, 55))),
        ("avenue", dict(palette=BRICK, rise=0.04, near=0.4, cobbles=True, brick=True)),
    )),
    "Atlanta": Signature("midtown towers above the trees", (0.5, 0.6), (
        ("towers", dict(x0=0.1, x1=0.9, tall=(0.12, 0.35), wide=(0.025, 0.05), palette=GLASS,
                        glass=True)),
        ("landmark", dict(kind="pointed", x=0.45, height=0.5, color=(120, 130, 150))),
        ("ground", dict(color=(55, 105, 50), at=0.0)),
        ("trees", dict(kind="round", at=0.0, rows=3, count=22, height=0.12, color=(50, 120, 45))),
    )),
    "Dallas": Signature("reunion tower over the highways", (0.5, 0.6), (
        ("towers", dict(x0=0.0, x1=1.0, tall=(0.1, 0.3), wide=(0.03, 0.06), palette=GLASS,
                        glass=True)),
        ("landmark", dict(kind="ball", x=0.3, height=0.45, color=(150, 150, 160))),
        ("ground", dict(color=(120, 130, 80), at=0.0)),
        ("highway", dict(at=0.1, to=0.4)),
    )),
    "Houston": Signature("houston skyline over buffalo bayou", (0.45, 0.55), (
        # A tight cluster of tall dark glass over a wide bayou: Dallas and Atlanta spread
        # lighter glass across the frame.
        ("towers", dict(x0=0.3, x1=0.72, tall=(0.25, 0.5), wide=(0.035, 0.055),
                        palette=DARK_GLASS, glass=True)),
        ("bayou", dict(at=0.0)),
    )),
    "Austin": Signature("lady bird lake and the hill country", (0.45, 0.55), (
        ("hills", dict(color=(95, 125, 70), at=0.0, amp=0.08, rough=0.6, haze=0.2,
                       texture="canopy")),
        ("towers", dict(x0=0.3, x1=0.7, at=0.0, tall=(0.06, 0.2), wide=(0.02, 0.04),
                        palette=GLASS)),
        ("trees", dict(kind="round", at=0.01, rows=1, count=20, height=0.05, color=(60, 110, 50))),
        ("water", dict(color=(60, 105, 95), at=0.03, glints=40)),
    )),
    "Las Vegas": Signature("the strip under red rock canyon", (0.5, 0.6), (
        ("hills", dict(color=(170, 85, 60), at=0.0, amp=0.2, rough=1.2, haze=0.1)),
        ("strip", dict(x0=0.25, x1=0.75, at=0.02, tall=(0.08, 0.25))),
        ("ground", dict(color=(200, 160, 110), at=0.02, texture="gravel")),
    )),
    "Salt Lake City": Signature("the wasatch range and the temple", (0.45, 0.55), (
        ("hills", dict(color=SNOWY_ROCK, at=0.0, amp=0.3, rough=1.3, sharp=True, snow=0.08)),
        # Temple Square's lawn and its white temple large in front of the Wasatch: Denver
        # is a low range over tan plains with a small skyline.
        ("ground", dict(color=(75, 130, 65), at=0.0)),
        ("landmark", dict(kind="spires", x=0.5, at=0.1, height=0.45, color=(240, 237, 230))),
        ("trees", dict(kind="round", at=0.1, rows=1, count=14, height=0.06, color=(60, 110, 50))),
    )),
    "Portland": Signature("douglas firs and mount hood", (0.55, 0.65), (
        # Hood alone, tall and white to its foot, over dark firs; no water, no tower.
        ("peak", dict(color=(140, 145, 165), x=0.5, width=0.7, height=0.62, shape="spire",
                      snow=0.3, haze=0.1)),
        ("ground", dict(color=(40, 75, 45), at=0.0)),
        ("trees", dict(kind="fir", at=0.0, rows=3, count=18, height=0.2, color=(20, 65, 40))),
    )),
    "Minneapolis": Signature("the chain of lakes and birches", (0.4, 0.5), (
        ("towers", dict(x0=0.6, x1=0.85, tall=(0.05, 0.14), wide=(0.015, 0.03),
                        palette=GLASS)),
        ("ground", dict(color=(80, 130, 60), at=-0.005)),
        ("water", dict(color=(55, 95, 130), at=0.0, to=0.25, glints=50)),
        ("ground", dict(color=(90, 140, 60), at=0.25)),
        ("trees", dict(kind="birch", at=0.3, rows=1, count=7, height=0.55, color=(120, 170, 70))),
    )),
    "Lake Tahoe": Signature("alpine lake tahoe ringed by pines", (0.35, 0.45), (
        ("hills", dict(color=SNOWY_ROCK, at=0.0, amp=0.16, rough=1.0, snow=0.06, haze=0.2)),
        ("trees", dict(kind="pine", at=0.0, rows=1, count=50, height=0.05, color=(30, 75, 45))),
        ("water", dict(color=(20, 110, 160), at=0.01, glints=30)),
        ("trees", dict(kind="pine", at=0.35, rows=1, count=8, height=0.45, color=(25, 70, 40),
                       xs=(0.0, 0.25))),
        ("trees", dict(kind="pine", at=0.35, rows=1, count=8, height=0.45, color=(25, 70, 40),
                       xs=(0.8, 1.0))),
    )),
    "Nashville": Signature("broadway honky-tonk neon", (0.55, 0.65), (
        # Big neon signs over most of each facade, the only light at night (windows dark
        # behind them): Boston's and New Orleans' streets show rows of lit windows.
        ("avenue", dict(palette=(*BRICK, (110, 80, 60)), rise=0.12, near=0.2, neon=True)),
    )),
    "New Orleans": Signature("french quarter iron balconies", (0.55, 0.65), (
        ("avenue", dict(palette=CREOLE, rise=0.1, near=0.15, balconies=True)),
    )),
    "Honolulu": Signature("waikiki and diamond head", (0.45, 0.55), (
        ("peak", dict(color=(110, 120, 80), x=0.72, width=0.6, height=0.2, shape="crater")),
        ("beach", dict(sea=(30, 140, 180), sand=(240, 220, 170), shore=0.25)),
        ("towers", dict(x0=-0.1, x1=0.35, at=0.0, tall=(0.06, 0.14), wide=(0.02, 0.035),
                        palette=((235, 235, 230), (220, 215, 200)))),
        ("palms", dict(xs=(0.0, 0.5), count=3, at=0.35, height=0.45)),
    )),
    "Anchorage": Signature("the chugach mountains over the inlet", (0.5, 0.6), (
        # Its foot is the inlet's near shore too, rock down to the frame's bottom.
        ("hills", dict(color=SNOWY_ROCK, at=0.0, amp=0.35, rough=1.5, sharp=True, snow=0.15,
                       nearest=True)),
        ("water", dict(color=(80, 100, 115), at=0.0, to=0.2, glints=20)),
        ("trees", dict(kind="fir", at=0.2, rows=2, count=30, height=0.15, color=(25, 55, 40))),
    )),
    "Asheville": Signature("the blue ridge mountains", (0.55, 0.65), (
        ("ridges", dict(count=5, color=(60, 90, 150), at=0.2, amp=0.12)),
        ("ground", dict(color=(55, 95, 55), at=0.2)),
        ("trees", dict(kind="round", at=0.25, rows=1, count=30, height=0.08, color=(50, 100, 50))),
    )),
    "Burlington": Signature("green mountains in maple and pine", (0.45, 0.55), (
        ("hills", dict(color=(60, 110, 70), at=0.0, amp=0.18, rough=0.6, haze=0.3,
                       texture="canopy")),
        ("hills", dict(color=(70, 120, 60), at=0.08, amp=0.12, rough=0.8, texture="canopy",
                       nearest=True)),
        ("trees", dict(kind="maple", at=0.15, rows=3, count=24, height=0.12, color=(200, 90, 30))),
    )),
}  # fmt: skip

# The catalog's landscape of each geography (app/services/catalog/geographies.toml: the
# scene archetype mini-sd draws), which leads the engine's background prompt; landmark
# captions are also trained with it in front (`landmark_dit.caption`).
LANDSCAPES = {
    "San Francisco Bay Area": "green mountains",
    "Manhattan": "street with buildings",
    "Miami": "beach and ocean",
    "Denver": "snowy peaks",
    "Chicago": "city skyline",
    "Phoenix": "desert dunes",
    "Seattle": "pine forest",
    "Los Angeles": "beach and ocean",
    "San Diego": "beach and ocean",
    "Boston": "street with buildings",
    "Washington, D.C.": "city skyline",
    "Philadelphia": "street with buildings",
    "Atlanta": "city skyline",
    "Dallas": "city skyline",
    "Houston": "city skyline",
    "Austin": "mountain lake",
    "Las Vegas": "desert dunes",
    "Salt Lake City": "snowy peaks",
    "Portland": "pine forest",
    "Minneapolis": "mountain lake",
    "Lake Tahoe": "mountain lake",
    "Nashville": "street with buildings",
    "New Orleans": "street with buildings",
    "Honolulu": "beach and ocean",
    "Anchorage": "snowy peaks",
    "Asheville": "green mountains",
    "Burlington": "pine forest",
}


# --- measurement ----------------------------------------------------------------------------


def held_out(per_combination: int, seed_base: int = 50_000_000) -> list[LandmarkParams]:
    """Every geography x time x weather, `per_combination` seeds each, far from training's."""
    combos = [(g, t, w) for g in SIGNATURES for t in TIMES for w in WEATHER]
    return [
        LandmarkParams(*combo, seed=seed_base + i * len(combos) + k)
        for i in range(per_combination)
        for k, combo in enumerate(combos)
    ]
