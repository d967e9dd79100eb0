"""Text, logo and QR overlays, laid out in the title-safe area and kept legible.

Layout is in fractions of the frame, one per screen shape (templates/layout.py), so the preview
tier (640x360) shows exactly the final's (1920x1080) layout, scaled, and a 9:16 or 1:1 frame
its own. Text is auto-fitted: the largest size at which it wraps into its role's lines and
box. Legibility is checked with the WCAG contrast ratio against the picture under each block;
where it falls below 4.5:1, a scrim just dark (or light) enough is drawn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import qrcode
from PIL import Image, ImageDraw, ImageFont
from scipy import ndimage

from templates.errors import BriefError
from templates.layout import Layout, layout_for
from templates.spec import SHAPES
from templates.storyboard import Brand, Scene, Storyboard

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FALLBACK_BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"
FALLBACK_REGULAR = FONT_DIR / "DejaVuSans.ttf"
SAFE = 0.05  # title-safe: the central 90 % of width and height
# The moments of a scene (fractions of its length) at which copy over a moving picture is made
# to read, and at which review reads it back.
JUDGED_AT = (0.0, 0.5, 0.999)
MIN_CONTRAST = 4.5  # WCAG AA for body text
# A logo made for a white page can vanish on a dark card (dark lettering on navy): where more
# than LOGO_FAINT of its opaque pixels read below WCAG's 3:1 for graphics against what is
# behind it, it sits on a plate (white, or near-black for a light logo) with a margin round it.
LOGO_CONTRAST = 3.0
LOGO_FAINT = 0.1
PLATE_MARGIN = 0.15  # of the logo's shorter side

# Per role: largest size (fraction of the frame's short side), most lines, heading font or not.
ROLES = {
    "headline": (0.085, 2, True),
    "offer": (0.13, 2, True),
    "cta": (0.075, 2, True),
    "caption": (0.06, 1, True),
    "body": (0.055, 3, False),
    "tagline": (0.045, 1, False),
    "name": (0.075, 3, True),  # the business on its end card: a long name wraps, then shrinks
    "web": (0.05, 2, False),  # the web address under the QR code (a long one breaks at a /)
    "phone": (0.05, 1, False),  # a phone number is read in one go
}
POSITIONS = ("top", "center", "lower_third", "bottom")  # an end card stacks its text in this order
MIN_SIZE = 0.028  # below ~30 px at 1080p text is not legible on a TV across a room
SHRINK = 0.92  # each step down while fitting
REFERENCE_HEIGHT = 1080
LEADING = 1.18
BREAKS = re.compile(r"(?<=[/.\-])")


@dataclass(frozen=True)
class Block:
    """One laid-out text block, for tests and for QC of the layout."""

    slot: str
    box: tuple[int, int, int, int]
    font_px: int
    contrast: float  # after the scrim, if one was drawn
    scrim: bool
    lines: tuple[str, ...] = ()  # the words as a viewer reads them, line by line


class LayoutError(BriefError):
    pass


def overlay(
    scene: Scene, brand: Brand, background: Image.Image | Sequence[Image.Image]
) -> tuple[Image.Image, list[Block]]:
    """The scene's overlay layer (RGBA, the background's size) and where each block landed.
    A moving picture is given as its moments (at JUDGED_AT of the scene): each block's colour
    and scrim are chosen to read at the hardest of them."""
    moments = [background] if isinstance(background, Image.Image) else list(background)
    width, height = moments[0].size
    layer = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    layout = layout_for((width, height))
    if scene.kind == "end_card":
        return layer, _end_card(layer, moments, scene, brand, layout)
    safe = safe_area((width, height))
    short = min(width, height)
    text_right = safe[2]
    if scene.qr_url:
        qr = _qr(scene.qr_url, round(layout.qr_side * short))
        x, y = safe[2] - qr.width, (height - qr.height) // 2
        layer.alpha_composite(qr, (x, y))
        text_right = x - round(layout.column_gap * width)
    if scene.logo and brand.logo:
        _logo(layer, moments, Path(brand.logo), safe)
    blocks = []
    for slot in scene.slots:
        text = scene.copy_text.get(slot.slot)
        if not text:
            continue
        top, bottom = layout.bands[slot.position]
        box = (safe[0], round(top * height), text_right, round(bottom * height))
        fit = _fit(text, slot.slot, slot.role, box, brand, short, layout.extra_lines)
        blocks.append(_draw(layer, moments, fit, box, slot.slot, slot.role, brand))
    return layer, blocks


def safe_area(size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The frame's 90 % title-safe box (left, top, right, bottom) in pixels."""
    width, height = size
    return (
        round(SAFE * width),
        round(SAFE * height),
        round((1 - SAFE) * width),
        round((1 - SAFE) * height),
    )


def check_layout(board: Storyboard, sizes: Sequence[tuple[int, int]] | None = None) -> None:
    """Lay out every scene's copy as the finals will, in every shape: a LayoutError names the
    line that does not fit on screen, so a brief can be refused before anything is rendered."""
    for size in sizes or SHAPES.values():
        card = Image.new("RGB", size, _rgb(board.brief.brand.colors[0]))
        for scene in board.scenes:
            overlay(scene, board.brief.brand, card)


def _end_card(layer, background, scene: Scene, brand: Brand, layout: Layout) -> list[Block]:
    """Who the business is and how to reach it: the logo, the name, the call to action and the
    tagline, stacked and centred; then the QR code with the web address and the phone by it,
    where a viewer's eye goes to act. A wide frame sets these side by side ("columns": the
    contact lines under the QR code), a square one one above the other ("rows": the contact
    lines beside it), an upright one in a single column ("stack"). Copy too tall for its place
    is set smaller, all of it together, until it fits."""
    width, height = layer.size
    short = min(width, height)
    safe = safe_area(layer.size)
    texts = [
        (slot, text)
        for slot in sorted(
            scene.slots,
            key=lambda s: POSITIONS.index(s.position) if s.position in POSITIONS else 99,
        )
        if (text := scene.copy_text.get(slot.slot))
    ]
    logo = Path(brand.logo) if scene.logo and brand.logo else None
    qr = _qr(scene.qr_url, round(layout.qr_side * short)) if scene.qr_url else None
    qr_side = qr.height if qr is not None else 0
    gap, contact_gap = round(layout.stack_gap * short), round(layout.contact_gap * short)
    left = right = safe
    if layout.end_card == "columns":
        split = safe[2] - round(layout.contact_column * width)
        left = (safe[0], safe[1], split - round(layout.column_gap * width), safe[3])
        right = (split, safe[1], safe[2], safe[3])
    elif layout.end_card == "rows" and qr is not None:
        right = (safe[0] + qr_side + round(layout.column_gap * width), *safe[1:])

    def items(cap: float) -> tuple[list, list]:
        """The two groups' items, each (gap above, height, draw(y) -> Block | None)."""
        told = [
            (gap, *_text_item(layer, background, text, slot, left, brand, layout, cap))
            for slot, text in texts
            if slot.position != "contact"
        ]
        if logo is not None:
            told.insert(0, (gap, *_logo_item(layer, behind, logo, left, layout, cap)))
        act = [
            (contact_gap, *_text_item(layer, background, text, slot, right, brand, layout, cap))
            for slot, text in texts
            if slot.position == "contact"
        ]
        if qr is not None and layout.end_card != "rows":
            x = (right[0] + right[2] - qr.width) // 2
            act.insert(0, (gap, qr.height, lambda y: layer.alpha_composite(qr, (x, y))))
        return told, act

    def placed(told: list, act: list) -> list[tuple[tuple, list]]:
        """Each group with the box it is centred in."""
        if layout.end_card == "columns":
            return [(left, told), (right, act)]
        if layout.end_card == "stack":
            return [(safe, told + act)]
        row_h = max(qr_side, _height(act))
        y = safe[1] + (safe[3] - safe[1] - _height(told) - gap - row_h) // 2
        row = y + _height(told) + gap
        return [((*left[:3], row - gap), told), ((right[0], row, right[2], row + row_h), act)]

    behind = _luminance(background, left) if logo is not None else None
    cap = 1.0
    while True:
        groups = placed(*items(cap))
        if all(_height(group) <= box[3] - box[1] and box[1] >= safe[1] for box, group in groups):
            break
        if cap < MIN_SIZE / max(size for size, _, _ in ROLES.values()):
            raise LayoutError("the end card's copy does not fit on screen; shorten it")
        cap *= SHRINK
    if layout.end_card == "rows" and qr is not None:
        row = groups[-1][0]
        layer.alpha_composite(qr, (safe[0], (row[1] + row[3] - qr_side) // 2))
    return [block for box, group in groups for block in _stack(group, box)]


def _height(items) -> int:
    return sum(h for _, h, _ in items) + sum(g for g, _, _ in items[1:])


def _stack(items, column) -> list[Block]:
    """Draw the items one under another, the group centred in the column's height."""
    y = column[1] + max(0, (column[3] - column[1] - _height(items)) // 2)
    blocks = []
    for i, (gap, h, draw) in enumerate(items):
        y += gap if i else 0
        block = draw(y)
        if block is not None:
            blocks.append(block)
        y += h
    return blocks


def _text_item(layer, background, text, slot, column, brand, layout: Layout, cap: float):
    short = min(layer.size)
    fit = _fit(text, slot.slot, slot.role, column, brand, short, layout.extra_lines, cap)

    def draw(y: int) -> Block:
        box = (column[0], y, column[2], y + fit.block_h)
        return _draw(layer, background, fit, box, slot.slot, slot.role, brand)

    return fit.block_h, draw


def _logo_item(layer, behind: np.ndarray, path: Path, column, layout: Layout, cap: float):
    """`behind`: the luminance of the column it is centred in (where in it is not known yet)."""
    width, height = layer.size
    logo = Image.open(path).convert("RGBA")
    max_w = min(layout.end_logo[0] * width, column[2] - column[0])
    scale = cap * min(max_w / logo.width, layout.end_logo[1] * min(width, height) / logo.height)
    logo = logo.resize(
        (max(1, round(logo.width * scale)), max(1, round(logo.height * scale))),
        Image.Resampling.LANCZOS,
    )
    logo = _plated(logo, behind)
    x = (column[0] + column[2] - logo.width) // 2
    return logo.height, lambda y: layer.alpha_composite(logo, (x, y))


def _luminance(moments: list[Image.Image], box) -> np.ndarray:
    """The relative luminance of every moment of the picture inside `box`."""
    return np.stack([relative_luminance(np.asarray(m.crop(box).convert("RGB"), np.float64) / 255)
                     for m in moments])  # fmt: skip


def _plated(logo: Image.Image, behind: np.ndarray) -> Image.Image:
    """`logo` as it is seen over `behind` (luminances, a row per moment of the picture): on a
    plate where too much of it would not be at its hardest moment (LOGO_FAINT). A logo with a
    background of its own (a JPEG, a badge) is its own plate."""
    rgba = np.asarray(logo, np.float64) / 255
    opaque = rgba[..., 3] > 0.5
    rim = np.r_[opaque[0], opaque[-1], opaque[:, 0], opaque[:, -1]]
    if not opaque.any() or rim.mean() >= 0.9:
        return logo
    lum = relative_luminance(rgba[..., :3][opaque])

    def faint(ground: float) -> float:
        high, low = np.maximum(lum, ground), np.minimum(lum, ground)
        return float(np.mean((high + 0.05) / (low + 0.05) < LOGO_CONTRAST))

    if max(faint(float(np.median(moment))) for moment in behind) <= LOGO_FAINT:
        return logo
    plates = ((255, 255, 255), (17, 17, 17))
    plate = min(plates, key=lambda c: faint(float(relative_luminance(np.array(c) / 255))))
    margin = max(2, round(PLATE_MARGIN * min(logo.size)))
    plated = Image.new("RGBA", (logo.width + 2 * margin, logo.height + 2 * margin))
    ImageDraw.Draw(plated).rounded_rectangle(
        (0, 0, plated.width - 1, plated.height - 1), radius=margin, fill=(*plate, 255)
    )
    plated.alpha_composite(logo, (margin, margin))
    return plated


@dataclass(frozen=True)
class _Fit:
    lines: list[str]
    font: ImageFont.FreeTypeFont
    size: int
    line_h: int

    @property
    def block_h(self) -> int:
        return self.line_h * len(self.lines)


def _fit(text, slot, role, box, brand, short, extra_lines=0, cap=1.0) -> _Fit:
    """The largest size (at most `cap` of the role's) at which the text wraps into its role's
    lines (`extra_lines` more on a narrow frame; a phone number keeps to one) and the box."""
    max_size, max_lines, heading = ROLES[role]
    max_lines += extra_lines if role != "phone" else 0
    font_path = str(
        (brand.heading_font if heading else brand.body_font)
        or (FALLBACK_BOLD if heading else FALLBACK_REGULAR)
    )
    box_w, box_h = box[2] - box[0], box[3] - box[1]
    # Fit at the reference size, then scale: every tier wraps the same words on the same lines.
    scale = short / REFERENCE_HEIGHT
    smallest = round(MIN_SIZE * REFERENCE_HEIGHT)
    ref = max(round(max_size * cap * REFERENCE_HEIGHT), smallest)
    while True:
        lines = _wrap(text, _font(font_path, ref), box_w / scale)
        if len(lines) <= max_lines and round(ref * LEADING) * len(lines) <= box_h / scale:
            break
        if ref <= MIN_SIZE * REFERENCE_HEIGHT:
            raise LayoutError(
                f"{slot}: {text!r} does not fit on screen even at the smallest "
                "legible size; shorten it"
            )
        ref = max(round(ref * SHRINK), smallest)
    lines = _balanced(text, _font(font_path, ref), lines)
    size = max(1, round(ref * scale))
    return _Fit(lines, _font(font_path, size), size, round(size * LEADING))


def _draw(layer, background: list[Image.Image], fit: _Fit, box, slot, role, brand) -> Block:
    """The fitted lines centred in the box, over a scrim where the picture (at each of its
    moments) needs one."""
    width, height = layer.size
    font, size, lines = fit.font, fit.size, fit.lines
    box_w, box_h = box[2] - box[0], box[3] - box[1]
    block_h = fit.block_h
    widths = [font.getlength(line) for line in lines]
    y0 = box[1] + (box_h - block_h) // 2
    x0 = box[0] + (box_w - round(max(widths))) // 2
    pad = round(0.35 * size)
    area = (
        max(0, x0 - pad),
        max(0, y0 - pad // 2),
        min(width, x0 + round(max(widths)) + pad),
        min(height, y0 + block_h + pad // 2),
    )

    def letters_on(target: Image.Image, fill) -> None:
        pen = ImageDraw.Draw(target)
        for i, (line, w) in enumerate(zip(lines, widths, strict=True)):
            x = box[0] + (box_w - w) / 2 - area[0]
            pen.text((x, y0 + i * fit.line_h - area[1]), line, font=font, fill=fill)

    # Judged where the eye reads it, as review measures it: the picture just around the letters.
    shape = Image.new("L", (area[2] - area[0], area[3] - area[1]))
    letters_on(shape, 255)
    near = ~ndimage.binary_dilation(np.asarray(shape) == 255, iterations=3)
    lum = _luminance(background, area)
    lum = lum[:, near] if near.sum() >= 20 else lum.reshape(len(background), -1)
    color, contrast, scrim = _legible(lum, brand, role)
    draw = ImageDraw.Draw(layer)
    if scrim is not None:
        draw.rounded_rectangle(area, radius=pad, fill=scrim)
    text = Image.new("RGBA", shape.size)
    letters_on(text, color)
    layer.alpha_composite(text, area[:2])
    return Block(slot, area, size, contrast, scrim is not None, tuple(lines))


def _legible(lum: np.ndarray, brand: Brand, role: str):
    """Text colour, resulting contrast, and the scrim colour (RGBA) if one is needed, over a
    picture whose luminances around the text are `lum` (a row per moment of the picture)."""
    # Judge against the part of the picture that is hardest to read on, at its hardest moment:
    # for light text the brightest tenth, for dark text the darkest tenth.
    light_bg = float(np.percentile(lum, 90, axis=1).max())
    dark_bg = float(np.percentile(lum, 10, axis=1).min())
    candidates = [(255, 255, 255), (17, 17, 17)]
    if role in ("offer", "cta") and len(brand.colors) > 1:
        candidates.insert(0, _rgb(brand.colors[1]))  # the accent, where it reads well
    best = None
    for color in candidates:
        text_lum = float(relative_luminance(np.array(color) / 255.0))
        worst_bg = light_bg if text_lum > 0.5 else dark_bg
        ratio = contrast_ratio(text_lum, worst_bg)
        if ratio >= MIN_CONTRAST:
            return color, ratio, None
        if best is None or ratio > best[1]:
            best = (color, ratio, text_lum)
    color, _, text_lum = best
    # A scrim of black under light text (white under dark), just opaque enough.
    scrim_rgb, scrim_lum = ((0, 0, 0), 0.0) if text_lum > 0.5 else ((255, 255, 255), 1.0)
    bg = light_bg if text_lum > 0.5 else dark_bg
    for alpha in np.linspace(0.3, 0.95, 27):
        blended = bg * (1 - alpha) + scrim_lum * alpha  # luminance is linear light
        ratio = contrast_ratio(text_lum, blended)
        if ratio >= MIN_CONTRAST:
            return color, ratio, (*scrim_rgb, round(alpha * 255))
    return color, contrast_ratio(text_lum, bg * 0.05 + scrim_lum * 0.95), (*scrim_rgb, 242)


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of sRGB values in [0, 1] (last axis: R, G, B)."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def contrast_ratio(a: float, b: float) -> float:
    high, low = max(a, b), min(a, b)
    return (high + 0.05) / (low + 0.05)


def _wrap(text: str, font, max_width: float) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        # A word wider than the line (a long web address) breaks after a / . or -, never inside.
        pieces = [word] if font.getlength(word) <= max_width else BREAKS.split(word)
        for k, piece in enumerate(p for p in pieces if p):
            glue = "" if k else " "  # the pieces of one word join without a space
            if lines and font.getlength(lines[-1] + glue + piece) <= max_width:
                lines[-1] += glue + piece
            else:
                lines.append(piece)
    if any(font.getlength(line) > max_width for line in lines):
        return lines * 99  # a single word wider than the box: force a smaller size
    return lines


def _balanced(text: str, font, lines: list[str]) -> list[str]:
    """The same number of lines, as even as they go: no lone word on a last line."""
    if len(lines) < 2:
        return lines
    low, high = font.getlength(text) / len(lines), max(font.getlength(line) for line in lines)
    best = lines
    while high - low > 2:
        mid = (low + high) / 2
        trial = _wrap(text, font, mid)
        if len(trial) == len(lines):
            best, high = trial, mid
        else:
            low = mid
    return best


@cache
def _font(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def _qr(url: str, side: int) -> Image.Image:
    code = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_M)
    # A phone's camera opens an address only with its scheme; the screen shows it without.
    code.add_data(url if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.IGNORECASE) else f"https://{url}")
    code.make(fit=True)
    image = code.make_image(fill_color="black", back_color="white").get_image()
    # Nearest-neighbour keeps modules crisp for a phone camera across the room.
    return image.convert("RGBA").resize((side, side), Image.Resampling.NEAREST)


def _logo(layer: Image.Image, moments: list[Image.Image], path: Path, safe) -> None:
    width, height = layer.size
    logo = Image.open(path).convert("RGBA")
    max_w, max_h = 0.3 * width, 0.1 * min(width, height)  # a corner mark (end cards lay out theirs)
    scale = min(max_w / logo.width, max_h / logo.height)
    logo = logo.resize(
        (max(1, round(logo.width * scale)), max(1, round(logo.height * scale))),
        Image.Resampling.LANCZOS,
    )
    corner = (safe[0], safe[1], safe[0] + logo.width, safe[1] + logo.height)
    layer.alpha_composite(_plated(logo, _luminance(moments, corner)), corner[:2])


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
