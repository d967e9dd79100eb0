"""Reference-to-video's first frame: the reference's subject, cut out and placed on a backdrop.

The clip is then made by image-to-video from this frame, so the subject's pixels start exactly
as in the reference.
"""

from __future__ import annotations

from PIL import Image, ImageOps

from engine.requests import ReferenceToVideo
from engine.segmentation import Segmenter


def first_frame(request: ReferenceToVideo, segmenter: Segmenter, width: int, height: int):
    if request.background is not None:
        frame = ImageOps.fit(
            request.background.convert("RGB"), (width, height), Image.Resampling.LANCZOS
        )
    else:
        frame = _backdrop(width, height)
    subject = segmenter.cutout(request.reference)
    box = subject.getchannel("A").getbbox()
    if box is None:
        return frame  # nothing salient: the prompt alone drives the clip
    subject = subject.crop(box)
    scale = min(request.subject_scale * height / subject.height, 0.9 * width / subject.width)
    size = (max(1, round(subject.width * scale)), max(1, round(subject.height * scale)))
    subject = subject.resize(size, Image.Resampling.LANCZOS)
    # Centred, standing on the lower third, as a product shot is framed.
    x = (width - subject.width) // 2
    y = min(height - subject.height, round(height * 0.72 - subject.height / 2))
    frame.paste(subject, (x, max(0, y)), subject)
    return frame


def _backdrop(width: int, height: int) -> Image.Image:
    """A soft studio gradient, light at the top."""
    top, bottom = (236, 236, 232), (196, 196, 190)
    column = Image.linear_gradient("L").resize((1, height))
    return Image.merge(
        "RGB",
        [
            column.point(lambda v, a=a, b=b: a + (b - a) * v // 255).resize((width, height))
            for a, b in zip(top, bottom, strict=True)
        ],
    )
