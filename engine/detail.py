"""How much real detail a picture carries: its effective lines; and how visible a patch grid is.

A picture of H lines carries h lines of detail when shrinking it to h lines and enlarging it back
loses almost nothing: the smallest h whose round trip keeps PSNR >= 38 dB against the picture,
after a 5x5 median filter so that grain and noise, which any upscaler can add, do not
count. A 128-line picture enlarged carries little more than 128 lines however large it is
shown; a crisp 1080p photograph carries most of its 1080. (The filter is applied once, to the
picture; the round trip is measured against that.)
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageFilter

THRESHOLD_DB = 38.0
MEDIAN = 5


def effective_lines(image: Image.Image, threshold_db: float = THRESHOLD_DB) -> int:
    """The smallest line count below the picture's own whose shrink-and-enlarge round trip keeps
    `threshold_db`; the picture's height when none does (saturated: it carries all its lines,
    and the measure can say no more). At the full height the round trip is the identity, so it
    is not tried.

    Fidelity does not fall strictly as lines go (resampling phase makes it ripple by a few
    lines), so instead of a bisection, which assumes it does, the counts are scanned on a grid
    from the bottom and the first that keeps is refined downwards within its grid step."""
    picture = image.convert("RGB").filter(ImageFilter.MedianFilter(MEDIAN))
    width, height = picture.size
    reference = np.asarray(picture, dtype=np.float64)

    def keeps(lines: int) -> bool:
        small = picture.resize((max(1, round(width * lines / height)), lines), Image.LANCZOS)
        back = np.asarray(small.resize((width, height), Image.BICUBIC), dtype=np.float64)
        mse = np.mean((back - reference) ** 2)
        return mse == 0 or 10 * np.log10(255.0**2 / mse) >= threshold_db

    grid = max(1, height // 64)
    for coarse in range(grid, height, grid):
        if keeps(coarse):
            return next(h for h in range(max(1, coarse - grid + 1), coarse + 1) if keeps(h))
    return height


def patch_grid(image: Image.Image, period: int = 16) -> float:
    """How much a grid of `period`-pixel tiles stands out: the mean step in brightness between
    neighbouring pixels across the tiles' borders over the mean step elsewhere, in both
    directions, for the grid's own alignment and the one half a tile over (where shifted
    patches put theirs: engine.patch_shift); the larger of the two. About 1 where no grid
    shows: the landmark scenes drawn at 256x144 read 1.14 (the median over places; windows and
    facets that fall on a border by chance vary it, 0.7-2.2)."""
    grey = np.asarray(image.convert("L"), dtype=np.float64)
    steps = (np.abs(np.diff(grey, axis=1)), np.abs(np.diff(grey, axis=0)).T)
    ratios = []
    for phase in (period - 1, period // 2 - 1):
        ratio = 0.0
        for step in steps:
            border = np.arange(step.shape[1]) % period == phase
            ratio += step[:, border].mean() / max(step[:, ~border].mean(), 1e-9) / 2
        ratios.append(ratio)
    return float(max(ratios))
