"""The fine detail of a picture drawn from a layout, taken from that layout drawn at the final's
size: the last part of the upscaling stage for a built-in place.

Why: landmark-dit's 256x144 picture, enlarged to 1080p, carries about 66 lines of detail, its
upscaled one about 130, mostly a crisp rendering of the model's mosaic: a learned upscaler
cannot invent the windows, lane lines and canopy the base never drew (docs/benchmarks.md,
"Detail from the layout"). A picture drawn from a layout (`engine.layouts`) has a reference that
does carry them: the same procedural scene, at the same seed, drawn natively at 1920x1080. This
is reference-based super-resolution in its simplest, deterministic form (detail transfer, as in
Petschnigg et al., 2004, "Digital Photography with Flash and No-Flash Image Pairs", and the
joint upsampling of Kopf et al., 2007): the final keeps the model's picture below `CUTOFF_LINES`
(its colours, light and forms: all the detail the base itself carries), and above them takes the
layout's, but only where the two agree in colour at the cut; where the model drew something else
(a cab moved, a cloud added), the upscaler's own picture is kept, so no ghost of the layout
shows. The layout is named by the request, so a variant's lineage re-renders its final bit for
bit.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

# The base's own detail: landmark-dit's 256x144 pictures, enlarged to 1080p, carry a median 66
# lines (the upscaler's card). Below the cut the model's picture is kept whole (its colours,
# light and forms); above it the layout's detail is taken, in place of the upscaler's crisp
# rendering of the model's mosaic. (At 96 finals carried a median 480 lines, at 64 557:
# docs/benchmarks.md, "Detail from the layout".)
CUTOFF_LINES = 64
# How far (RGB in [0, 1], root mean square over the channels) the picture and the layout may
# differ below the cut and still be the same thing: at this distance a third of the layout's
# detail is taken, at half of it 94 %, at 1.4 times it 2 % (exp(-(d / TOLERANCE) ** 4): flat
# near agreement, steep past it, so a blurred window takes its detail back and sky painted over
# one takes none).
TOLERANCE = 0.15
# The agreement is smoothed over this radius (pixels at the final's size), so that the detail
# fades in and out instead of switching at an edge.
SMOOTHING = 8


def with_layout_detail(picture: Image.Image, layout: Image.Image) -> Image.Image:
    """`picture` (the upscaler's final) with the fine detail of `layout`, the scene it was drawn
    from drawn at the same size, where the two agree."""
    drawn, reference = _tensor(picture), _tensor(layout)
    drawn_low, reference_low = _below_cut(drawn), _below_cut(reference)
    distance = (drawn_low - reference_low).pow(2).mean(1, keepdim=True)
    agreement = F.avg_pool2d(
        torch.exp(-((distance / TOLERANCE**2) ** 2)),
        2 * SMOOTHING + 1,
        stride=1,
        padding=SMOOTHING,
        count_include_pad=False,
    )
    # Where they agree, the picture's own detail above the cut gives way to the layout's.
    detail = (reference - reference_low) - (drawn - drawn_low)
    final = (drawn + agreement * detail).clamp(0, 1)
    return Image.fromarray((final[0].permute(1, 2, 0) * 255).round().to(torch.uint8).numpy())


def _tensor(image: Image.Image) -> torch.Tensor:
    pixels = np.asarray(image.convert("RGB"), dtype=np.float32) / 255
    return torch.from_numpy(pixels).permute(2, 0, 1)[None]


def _below_cut(pixels: torch.Tensor) -> torch.Tensor:
    """What of `pixels` a picture of `CUTOFF_LINES` lines holds, at their own size."""
    height, width = pixels.shape[-2:]
    small = F.interpolate(pixels, size=(CUTOFF_LINES, round(width * CUTOFF_LINES / height)),
                          mode="area")  # fmt: skip
    return F.interpolate(small, size=(height, width), mode="bicubic", align_corners=False)
