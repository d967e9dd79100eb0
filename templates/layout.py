"""Where copy and the product go, per screen shape (`templates.spec.SHAPES`).

A layout is fractions of the frame and is picked by the frame's shape, so every tier of one shape
shows the same layout, scaled. Type is sized on the frame's short side (a 16:9 frame's height),
so a line is as large on a phone held upright as on a TV. Each shape keeps its copy inside its
own 90 % title-safe area and its product whole in the frame, however the scene moves: the
product grows by at most `PRODUCT_GROWTH` and drifts by `PRODUCT_DRIFT` (templates/motion.py),
and a zoom crops into it (1.15 at most in the catalogue), which its `max_width` leaves room for:
a long product is at most 0.8 of the frame's width (0.92 at the deepest zoom or the end of its
growth); on the broadcast master 0.6, so the place it is set in shows either side of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from templates.composite import Placement
from templates.spec import SHAPES

PRODUCT_GROWTH = 0.08 / 0.62  # a parallax product grows this share of its size over a scene
PRODUCT_DRIFT = 0.02  # and drifts this share of the width either side of centre


@dataclass(frozen=True)
class Layout:
    # Vertical band per text position (fractions of the frame's height, inside title-safe).
    bands: dict[str, tuple[float, float]]
    product: Placement
    # An end card in two columns (the text, then the QR code with the contact lines under it),
    # two rows (the text, then the QR code with the contact lines beside it) or one stack:
    # name, call to action, QR code, address, phone.
    end_card: Literal["columns", "rows", "stack"]
    contact_column: float = 0.34  # the QR column's width (fraction of width), in columns
    column_gap: float = 0.03  # between the columns (fraction of width)
    qr_side: float = 0.3  # fraction of the short side
    # An end card logo's largest width (fraction of width) and height (of the short side).
    end_logo: tuple[float, float] = (0.4, 0.16)
    stack_gap: float = 0.035  # between stacked blocks (fraction of the short side)
    contact_gap: float = 0.02  # between the QR code and the lines under it (short side)
    extra_lines: int = 0  # a narrow frame wraps copy onto one more line than a wide one


LAYOUTS = {
    # The broadcast master: copy in bands across the width, the product standing large in the
    # middle (a long one, a shoe, leaves the place in view: Mission Peak behind it, not hidden by
    # it), the end card in two columns.
    "16:9": Layout(
        bands={
            "top": (0.05, 0.27),
            "center": (0.36, 0.64),
            "lower_third": (0.62, 0.82),
            "bottom": (0.78, 0.95),
        },
        product=Placement(height=0.62, base_y=0.94, max_width=0.6),
        end_card="columns",
    ),
    # Upright on a phone: a caption above the product, the product in the upper half, the rest
    # of the copy below it; the end card stacked down the middle, its QR code large enough to
    # scan from another phone.
    "9:16": Layout(
        bands={
            "top": (0.05, 0.155),
            "center": (0.36, 0.64),
            "lower_third": (0.655, 0.80),
            # Clear of the lowest tenth, where a feed's own caption and buttons sit.
            "bottom": (0.77, 0.90),
        },
        product=Placement(height=0.40, base_y=0.63, max_width=0.8),
        end_card="stack",
        qr_side=0.36,
        end_logo=(0.6, 0.16),
        stack_gap=0.045,
        contact_gap=0.025,
        extra_lines=1,
    ),
    # A square feed post: a caption on top, the product between, copy under it; the end card
    # in two rows, the name and call to action across the width over the QR code.
    "1:1": Layout(
        bands={
            "top": (0.05, 0.18),
            "center": (0.33, 0.67),
            "lower_third": (0.735, 0.95),
            "bottom": (0.735, 0.95),
        },
        product=Placement(height=0.45, base_y=0.70, max_width=0.8),
        end_card="rows",
        qr_side=0.28,
        end_logo=(0.5, 0.12),
        stack_gap=0.03,
        extra_lines=1,
    ),
}


def shape_of(size: tuple[int, int]) -> str:
    """The shape a frame of this size is (the nearest in aspect)."""
    aspect = size[0] / size[1]
    return min(SHAPES, key=lambda s: abs(SHAPES[s][0] / SHAPES[s][1] - aspect))


def layout_for(size: tuple[int, int]) -> Layout:
    return LAYOUTS[shape_of(size)]
