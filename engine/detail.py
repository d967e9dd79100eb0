"""How much real detail a picture carries: its effective lines.

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
    """The smallest line count whose shrink-and-enlarge round trip keeps `threshold_db`."""
    picture = image.convert("RGB").filter(ImageFilter.MedianFilter(MEDIAN))
    width, height = picture.size
    reference = np.asarray(picture, dtype=np.float64)

    def keeps(lines: int) -> bool:
        small = picture.resize((max(1, round(width * lines / height)), lines), Image.LANCZOS)
        back = np.asarray(small.resize((width, height), Image.BICUBIC), dtype=np.float64)
        mse = np.mean((back - reference) ** 2)
        return mse == 0 or 10 * np.log10(255.0**2 / mse) >= threshold_db

    # Fewer lines lose more: the smallest that keeps, by bisection.
    low, high = 1, height
    while low < high:
        middle = (low + high) // 2
        if keeps(middle):
            high = middle
        else:
            low = middle + 1
    return low
