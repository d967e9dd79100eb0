"""The fine detail of a picture drawn from a layout, taken from that layout drawn at the final's
size: the last part of the upscaling stage for a built-in place.

Why: landmark-dit's 256x144 picture, enlarged to 1080p, carries about 66 lines of detail, its
upscaled one about 130, mostly a crisp rendering of the model's mosaic: a learned upscaler
cannot invent the windows, lane lines and canopy the base never drew (docs/benchmarks.md,
"Detail from the layout"). A picture drawn from a layout (`engine.layouts`) has a reference that
does carry them: the same procedural scene, at the same seed, drawn natively at 1920x1080. This
is reference-based super-resolution in its simplest, deterministic form (detail transfer, as in
Petschnigg et al., 2004, "Digital Photography with Flash and No-Flash Image Pairs", and the
joint upsampling of Kopf et al., 2007): where the model's picture agrees with its layout below
`CUTOFF_LINES`, the final is the layout in the model's light (the picture's difference from
the layout as it was given it, smoothed to `GRADE_LINES`, added back); where the model drew
something else (a cab moved, a cloud added), the upscaler's own picture is kept, so no ghost of
the layout shows. The picture agrees with its layout where it matches it as either size draws
it: as it was given to the model, at the model's size, or as the final's size draws it. Detail
only the final's size shows (a far town's lit windows, facets, a cloud deck's cells:
`engine.training.landmarks._shows_fine`) is in no picture the model learned from, so it never
draws it, which is no disagreement (judged against the final's size alone, the towns' lights,
most of a night's detail, were dropped); a glint on water or a lit window is thicker at the
model's size, where a pixel is 7.5 of the final's, and a model that drew it thinner drew what
the final's size has (judged against the model's size alone, glints were dropped). A clear
sky's sun or moon is the layout's wherever it is seen: the model draws it as a blob, often
bitten by the sky's blue at one side, which is a blemish, not something else drawn there. The
layout is named by the request, so a variant's lineage re-renders its final bit for bit.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

# The base's own detail: landmark-dit's 256x144 pictures, enlarged to 1080p, carry a median 66
# lines (the upscaler's card). Agreement is judged below this cut; above it the model's picture
# is mostly the upscaler's crisp rendering of its mosaic, which the layout's detail replaces.
CUTOFF_LINES = 64
# How far (RGB in [0, 1], root mean square over the channels) the picture and the layout may
# differ below the cut and still be the same thing: at this distance a third of the layout is
# taken, at half of it 94 %, at 1.4 times it 2 % (exp(-(d / TOLERANCE) ** 4): flat near
# agreement, steep past it, so a blurred window takes its detail back and sky painted over one
# takes none).
TOLERANCE = 0.15
# The agreement is smoothed over this radius (pixels at the final's size), so that the layout
# fades in and out instead of switching at an edge.
SMOOTHING = 8
# The model's light (its colours, haze, glow) is carried onto the layout at this scale: coarse
# enough that where the model drew a window dimmer or a palm thinner, the difference is spread
# over a region instead of ringing round the edge (adding the layout's detail to the model's
# own picture, at the cut, left dark halos round lit windows and a glow round palms).
GRADE_LINES = 16


def with_layout_detail(
    picture: Image.Image, layout: Image.Image, given: Image.Image, sun: Image.Image | None = None
) -> Image.Image:
    """`picture` (the upscaler's final) as `layout` (the scene it was drawn from, drawn at the
    same size) in the picture's light, where the picture agrees with it or with `given` (that
    scene as the model was given it, at the model's size); the picture itself elsewhere; and
    the layout's own sun or moon where `sun` (a mask) says it is seen."""
    drawn, reference = _tensor(picture), _tensor(layout)
    asked = _enlarged(_tensor(given), drawn)
    agreement = F.avg_pool2d(
        torch.maximum(_agreement(drawn, asked), _agreement(drawn, reference)),
        2 * SMOOTHING + 1,
        stride=1,
        padding=SMOOTHING,
        count_include_pad=False,
    )
    regraded = reference + _agreeing_mean(drawn - asked, agreement)
    final = (agreement * regraded + (1 - agreement) * drawn).clamp(0, 1)
    if sun is not None:
        seen = torch.from_numpy(np.asarray(sun, dtype=np.float32) / 255)[None, None]
        final = seen * reference + (1 - seen) * final
    return Image.fromarray((final[0].permute(1, 2, 0) * 255).round().to(torch.uint8).numpy())


def _agreement(drawn: torch.Tensor, layout: torch.Tensor) -> torch.Tensor:
    """How nearly the two are the same below `CUTOFF_LINES`, per pixel: 1 alike, 0 not."""
    distance = (_below(drawn, CUTOFF_LINES) - _below(layout, CUTOFF_LINES)).pow(2).mean(1, True)
    return torch.exp(-((distance / TOLERANCE**2) ** 2))


def _tensor(image: Image.Image) -> torch.Tensor:
    pixels = np.asarray(image.convert("RGB"), dtype=np.float32) / 255
    return torch.from_numpy(pixels).permute(2, 0, 1)[None]


def _shrunk(pixels: torch.Tensor, lines: int) -> torch.Tensor:
    height, width = pixels.shape[-2:]
    return F.interpolate(pixels, size=(lines, round(width * lines / height)), mode="area")


def _enlarged(pixels: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return F.interpolate(pixels, size=like.shape[-2:], mode="bicubic", align_corners=False)


def _below(pixels: torch.Tensor, lines: int) -> torch.Tensor:
    """What of `pixels` a picture of `lines` lines holds, at their own size."""
    return _enlarged(_shrunk(pixels, lines), pixels)


def _agreeing_mean(difference: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """`difference` averaged over each cell of a `GRADE_LINES`-line picture, weighted by where
    the two agree (a cell with none gets nothing), at full size: the model's light, and not its
    strays, which would tint the layout round them."""
    total = _shrunk(weight, GRADE_LINES)
    mean = _shrunk(weight * difference, GRADE_LINES) / total.clamp_min(1e-3)
    return _enlarged(mean, difference)
