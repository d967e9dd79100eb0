"""Text, logo and QR overlays, laid out in the title-safe area and kept legible.

Layout is in fractions of the frame, so the preview tier (640x360) shows exactly the final's
(1920x1080) layout, scaled. Text is auto-fitted: the largest size at which it wraps into its
role's lines and box. Legibility is checked with the WCAG contrast ratio against the picture
under each block; where it falls below 4.5:1, a scrim just dark (or light) enough is drawn.
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
from templates.storyboard import Brand, Scene, Storyboard

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FALLBACK_BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"
FALLBACK_REGULAR = FONT_DIR / "DejaVuSans.ttf"
SAFE = 0.05  # title-safe: the central 90 % of width and height
# The moments of a scene (fractions of its length) at which copy over a moving picture is made
# to read, and at which review reads it back.
JUDGED_AT = (0.0, 0.5, 0.999)
MIN_CONTRAST = 4.5  # WCAG AA for body text

# Per role: largest size (fraction of frame height), most lines, heading font or body font.
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
# Vertical band per position (fractions of frame height, inside title-safe).
BANDS = {
    "top": (0.05, 0.27),
    "center": (0.36, 0.64),
    "lower_third": (0.62, 0.82),
    "bottom": (0.78, 0.95),
}
# End card: a column for the QR code and the contact lines under it (fraction of width) at the
# right of title-safe, the rest of the text stacked in the column at its left.
CONTACT_COLUMN = 0.34
COLUMN_GAP = 0.03
STACK_GAP = 0.035  # between stacked blocks (fraction of height)
END_LOGO = (0.4, 0.16)  # the logo's largest width, height on an end card (fractions of frame)
QR_SIDE = 0.3  # fraction of frame height
MIN_SIZE = 0.028  # below ~30 px at 1080p text is not legible on a TV across a room
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
    safe = (
        round(SAFE * width),
        round(SAFE * height),
        round((1 - SAFE) * width),
        round((1 - SAFE) * height),
    )
    if scene.kind == "end_card":
        return layer, _end_card(layer, moments, scene, brand, safe)
    text_right = safe[2]
    if scene.qr_url:
        qr = _qr(scene.qr_url, round(QR_SIDE * height))
        x, y = safe[2] - qr.width, (height - qr.height) // 2
        layer.alpha_composite(qr, (x, y))
        text_right = x - round(COLUMN_GAP * width)
    if scene.logo and brand.logo:
        _logo(layer, Path(brand.logo), scene, safe)
    blocks = []
    for slot in scene.slots:
        text = scene.copy_text.get(slot.slot)
        if not text:
            continue
        top, bottom = BANDS[slot.position]
        box = (safe[0], round(top * height), text_right, round(bottom * height))
        fit = _fit(text, slot.slot, slot.role, box, brand, height)
        blocks.append(_draw(layer, moments, fit, box, slot.slot, slot.role, brand))
    return layer, blocks


def check_layout(board: Storyboard, size: tuple[int, int] = (1920, 1080)) -> None:
    """Lay out every scene's copy as the final will: a LayoutError names the line that does not
    fit on screen, so a brief can be refused before anything is rendered."""
    card = Image.new("RGB", size, _rgb(board.brief.brand.colors[0]))
    for scene in board.scenes:
        overlay(scene, board.brief.brand, card)


def _end_card(layer, background, scene: Scene, brand: Brand, safe) -> list[Block]:
    """Who the business is and how to reach it. Left column, stacked and centred: the logo,
    the name, the call to action, the tagline. Right column: the QR code with the web address
    and the phone under it, where a viewer's eye goes to act."""
    width, height = layer.size
    column = safe[2] - round(CONTACT_COLUMN * width)
    left = (safe[0], safe[1], column - round(COLUMN_GAP * width), safe[3])
    right = (column, safe[1], safe[2], safe[3])
    order = list(BANDS)
    texts = [
        (slot, text)
        for slot in sorted(
            scene.slots,
            key=lambda s: order.index(s.position) if s.position in order else len(order),
        )
        if (text := scene.copy_text.get(slot.slot))
    ]
    items: list = []  # (height, draw(y) -> Block | None)
    if scene.logo and brand.logo:
        items.append(_logo_item(layer, Path(brand.logo), left))
    for slot, text in texts:
        if slot.position != "contact":
            items.append(_text_item(layer, background, text, slot, left, brand))
    blocks = _stack(items, left, round(STACK_GAP * height))
    items = []
    if scene.qr_url:
        qr = _qr(scene.qr_url, round(QR_SIDE * height))
        x = (right[0] + right[2] - qr.width) // 2
        items.append((qr.height, lambda y, qr=qr, x=x: layer.alpha_composite(qr, (x, y))))
    for slot, text in texts:
        if slot.position == "contact":
            items.append(_text_item(layer, background, text, slot, right, brand))
    return blocks + _stack(items, right, round(0.02 * height))


def _stack(items, column, gap: int) -> list[Block]:
    """Draw the items one under another, the group centred in the column's height."""
    total = sum(h for h, _ in items) + gap * max(0, len(items) - 1)
    y = column[1] + max(0, (column[3] - column[1] - total) // 2)
    blocks = []
    for h, draw in items:
        block = draw(y)
        if block is not None:
            blocks.append(block)
        y += h + gap
    return blocks


def _text_item(layer, background, text, slot, column, brand):
    fit = _fit(text, slot.slot, slot.role, column, brand, layer.height)

    def draw(y: int) -> Block:
        box = (column[0], y, column[2], y + fit.block_h)
        return _draw(layer, background, fit, box, slot.slot, slot.role, brand)

    return fit.block_h, draw


def _logo_item(layer, path: Path, column):
    width, height = layer.size
    logo = Image.open(path).convert("RGBA")
    max_w = min(END_LOGO[0] * width, column[2] - column[0])
    scale = min(max_w / logo.width, END_LOGO[1] * height / logo.height)
    logo = logo.resize(
        (max(1, round(logo.width * scale)), max(1, round(logo.height * scale))),
        Image.Resampling.LANCZOS,
    )
    x = (column[0] + column[2] - logo.width) // 2
    return logo.height, lambda y: layer.alpha_composite(logo, (x, y))


@dataclass(frozen=True)
class _Fit:
    lines: list[str]
    font: ImageFont.FreeTypeFont
    size: int
    line_h: int

    @property
    def block_h(self) -> int:
        return self.line_h * len(self.lines)


def _fit(text, slot, role, box, brand, height) -> _Fit:
    """The largest size at which the text wraps into its role's lines and the box."""
    max_size, max_lines, heading = ROLES[role]
    font_path = str(
        (brand.heading_font if heading else brand.body_font)
        or (FALLBACK_BOLD if heading else FALLBACK_REGULAR)
    )
    box_w, box_h = box[2] - box[0], box[3] - box[1]
    # Fit at the reference height, then scale: every tier wraps the same words on the same lines.
    scale = height / REFERENCE_HEIGHT
    ref = round(max_size * REFERENCE_HEIGHT)
    while True:
        lines = _wrap(text, _font(font_path, ref), box_w / scale)
        if len(lines) <= max_lines and round(ref * LEADING) * len(lines) <= box_h / scale:
            break
        if ref <= MIN_SIZE * REFERENCE_HEIGHT:
            raise LayoutError(
                f"{slot}: {text!r} does not fit on screen even at the smallest "
                "legible size; shorten it"
            )
        ref = max(round(ref * 0.92), round(MIN_SIZE * REFERENCE_HEIGHT))
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
    lum = np.stack([relative_luminance(np.asarray(m.crop(area).convert("RGB"), np.float64) / 255)
                    for m in background])  # fmt: skip
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


def _logo(layer: Image.Image, path: Path, scene: Scene, safe) -> None:
    width, height = layer.size
    logo = Image.open(path).convert("RGBA")
    max_w, max_h = 0.3 * width, 0.1 * height  # a corner mark (end cards lay theirs out)
    scale = min(max_w / logo.width, max_h / logo.height)
    logo = logo.resize(
        (max(1, round(logo.width * scale)), max(1, round(logo.height * scale))),
        Image.Resampling.LANCZOS,
    )
    x = safe[0]
    layer.alpha_composite(logo, (x, safe[1]))


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
