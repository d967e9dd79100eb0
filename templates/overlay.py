"""Text, logo and QR overlays, laid out in the title-safe area and kept legible.

Layout is in fractions of the frame, so the preview tier (640x360) shows exactly the final's
(1920x1080) layout, scaled. Text is auto-fitted: the largest size at which it wraps into its
role's lines and box. Legibility is checked with the WCAG contrast ratio against the picture
under each block; where it falls below 4.5:1, a scrim just dark (or light) enough is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import qrcode
from PIL import Image, ImageDraw, ImageFont

from templates.errors import BriefError
from templates.storyboard import Brand, Scene

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FALLBACK_BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"
FALLBACK_REGULAR = FONT_DIR / "DejaVuSans.ttf"
SAFE = 0.05  # title-safe: the central 90 % of width and height
MIN_CONTRAST = 4.5  # WCAG AA for body text

# Per role: largest size (fraction of frame height), most lines, heading font or body font.
ROLES = {
    "headline": (0.085, 2, True),
    "offer": (0.13, 2, True),
    "cta": (0.075, 2, True),
    "caption": (0.06, 1, True),
    "body": (0.055, 3, False),
    "tagline": (0.045, 1, False),
}
# Vertical band per position (fractions of frame height, inside title-safe).
BANDS = {
    "top": (0.05, 0.27),
    "center": (0.36, 0.64),
    "lower_third": (0.62, 0.82),
    "bottom": (0.78, 0.95),
}
MIN_SIZE = 0.028  # below ~30 px at 1080p text is not legible on a TV across a room
REFERENCE_HEIGHT = 1080
LEADING = 1.18


@dataclass(frozen=True)
class Block:
    """One laid-out text block, for tests and for QC of the layout."""

    slot: str
    box: tuple[int, int, int, int]
    font_px: int
    contrast: float  # after the scrim, if one was drawn
    scrim: bool


class LayoutError(BriefError):
    pass


def overlay(scene: Scene, brand: Brand, background: Image.Image) -> tuple[Image.Image, list[Block]]:
    """The scene's overlay layer (RGBA, the background's size) and where each block landed."""
    width, height = background.size
    layer = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    safe = (
        round(SAFE * width),
        round(SAFE * height),
        round((1 - SAFE) * width),
        round((1 - SAFE) * height),
    )
    text_right = safe[2]
    if scene.qr_url:
        qr = _qr(scene.qr_url, round(0.3 * height))
        x, y = safe[2] - qr.width, (height - qr.height) // 2
        layer.alpha_composite(qr, (x, y))
        text_right = x - round(0.03 * width)
    if scene.logo and brand.logo:
        _logo(layer, Path(brand.logo), scene, safe)
    blocks = []
    for slot in scene.slots:
        text = scene.copy_text.get(slot.slot)
        if not text:
            continue
        top, bottom = BANDS[slot.position]
        box = (safe[0], round(top * height), text_right, round(bottom * height))
        blocks.append(_text(layer, background, text, slot.slot, slot.role, box, brand))
    return layer, blocks


def _text(layer, background, text, slot, role, box, brand) -> Block:
    width, height = layer.size
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
    font = _font(font_path, size)
    line_h = round(size * LEADING)
    block_h = line_h * len(lines)
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
    color, contrast, scrim = _legible(background.crop(area), brand, role)
    draw = ImageDraw.Draw(layer)
    if scrim is not None:
        draw.rounded_rectangle(area, radius=pad, fill=scrim)
    for i, (line, w) in enumerate(zip(lines, widths, strict=True)):
        x = box[0] + (box_w - w) / 2
        draw.text((x, y0 + i * line_h), line, font=font, fill=color)
    return Block(slot, area, size, contrast, scrim is not None)


def _legible(region: Image.Image, brand: Brand, role: str):
    """Text colour, resulting contrast, and the scrim colour (RGBA) if one is needed."""
    lum = relative_luminance(np.asarray(region.convert("RGB"), dtype=np.float64) / 255.0)
    # Judge against the part of the picture that is hardest to read on: for light text the
    # brightest tenth, for dark text the darkest tenth.
    light_bg, dark_bg = float(np.percentile(lum, 90)), float(np.percentile(lum, 10))
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
        if lines and font.getlength(f"{lines[-1]} {word}") <= max_width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
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
    code.add_data(url)
    code.make(fit=True)
    image = code.make_image(fill_color="black", back_color="white").get_image()
    # Nearest-neighbour keeps modules crisp for a phone camera across the room.
    return image.convert("RGBA").resize((side, side), Image.Resampling.NEAREST)


def _logo(layer: Image.Image, path: Path, scene: Scene, safe) -> None:
    width, height = layer.size
    logo = Image.open(path).convert("RGBA")
    max_w, max_h = 0.3 * width, (0.2 if scene.kind == "end_card" else 0.1) * height
    scale = min(max_w / logo.width, max_h / logo.height)
    logo = logo.resize(
        (max(1, round(logo.width * scale)), max(1, round(logo.height * scale))),
        Image.Resampling.LANCZOS,
    )
    x = safe[0]
    layer.alpha_composite(logo, (x, safe[1]))


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]
