"""A product cut-out placed on a generated background, its own pixels kept.

What a small business sells must look exactly as photographed: the product's colours and
printed text never pass through a diffusion model. The cut-out is scaled (in premultiplied
alpha, so its edges take no dark fringe) and pasted back nearly as it is: its colour is nudged
toward the scene's light by at most `PRODUCT_TOLERANCE` levels per channel (enough to sit in the
scene, too little to see as a different product). Only a thin band along its outline is touched
more: its alpha feathered and its colour pulled toward the scene (light wrap), so the seam does
not read as a sticker. A soft contact shadow grounds it.

`CompositeResult.interior` is where the pixels are the product's own, which is what product
fidelity is measured on; `CompositeResult.layer` is the product with its shadow and edges as one
transparent layer, for a renderer that moves the product over a moving scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

from templates.errors import BriefError

PRODUCT_TOLERANCE = 6  # most a product pixel's channel moves, in 8-bit levels, by harmonisation


@dataclass(frozen=True)
class Placement:
    height: float = 0.55  # product height as a share of the frame's
    centre_x: float = 0.5  # horizontal centre, as a share of the width
    base_y: float = 0.9  # where the product stands, as a share of the height
    max_width: float = 0.9  # its widest, as a share of the width (a narrow frame's limit)


@dataclass(frozen=True)
class CompositeResult:
    image: Image.Image  # RGB, the frame
    product: Image.Image  # RGBA, the cut-out as scaled and placed (before any edge work)
    box: tuple[int, int, int, int]  # where `product` sits in the frame
    interior: Image.Image  # L mask of the frame: 255 where the pixels are the product's own
    layer: Image.Image  # RGBA at the frame's size: shadow and product, transparent elsewhere


def composite(
    background: Image.Image,
    cutout: Image.Image,
    size: tuple[int, int],
    placement: Placement = Placement(),
    *,
    edge_px: int = 2,
    light_wrap: float = 0.35,
    shadow_opacity: float = 0.35,
    harmonise: float = 0.1,
) -> CompositeResult:
    """`cutout` is RGBA (alpha = the product); `background` is fitted to `size` (cropped, not
    stretched). Raises BriefError when the cut-out is empty, ValueError when the placement
    leaves no room."""
    width, height = size
    frame = fitted_background(background.convert("RGB"), size)
    product = _scaled_product(cutout.convert("RGBA"), width, height, placement)
    x = round(placement.centre_x * width - product.width / 2)
    y = round(placement.base_y * height - product.height)
    if x < 0 or y < 0 or x + product.width > width or y + product.height > height:
        raise ValueError("the product does not fit in the frame at this placement")
    box = (x, y, x + product.width, y + product.height)

    alpha = np.asarray(product.getchannel("A"), dtype=np.float32) / 255
    inner = _eroded(product.getchannel("A"), edge_px)
    band = np.clip(alpha - inner, 0, 1)  # the outline, where light wrap and feathering act
    feathered = np.asarray(
        product.getchannel("A").filter(ImageFilter.GaussianBlur(edge_px / 2)), dtype=np.float32
    )
    feathered = np.maximum(feathered / 255 * (alpha > 0), inner)  # the interior stays opaque

    under = frame.crop(box)
    colour = np.asarray(product.convert("RGB"), dtype=np.float32)
    colour = colour + _harmonising_shift(colour, alpha, np.asarray(under), harmonise)
    scene_light = np.asarray(
        under.filter(ImageFilter.GaussianBlur(max(2, product.width // 8))), dtype=np.float32
    )
    wrap = (light_wrap * band)[..., None]
    colour = colour * (1 - wrap) + scene_light * wrap
    rgba = np.dstack([colour, feathered * 255])
    layer = _contact_shadow(size, box, shadow_opacity)
    layer.alpha_composite(Image.fromarray(np.clip(rgba + 0.5, 0, 255).astype(np.uint8)), box[:2])
    out = frame.convert("RGBA")
    out.alpha_composite(layer)

    interior = Image.new("L", size, 0)
    interior.paste(Image.fromarray((inner * 255).astype(np.uint8)), box[:2])
    return CompositeResult(out.convert("RGB"), product, box, interior, layer)


def _harmonising_shift(
    colour: np.ndarray, alpha: np.ndarray, scene: np.ndarray, strength: float
) -> np.ndarray:
    """One offset per channel moving the product's mean a little toward the scene's, so a warm
    evening or a cool street tints it as real light would; bounded by PRODUCT_TOLERANCE."""
    weight = alpha[..., None]
    product_mean = (colour * weight).sum((0, 1)) / max(weight.sum(), 1.0)
    scene_mean = scene.reshape(-1, 3).astype(np.float32).mean(0)
    shift = strength * (scene_mean - product_mean)
    return np.clip(np.round(shift), -PRODUCT_TOLERANCE, PRODUCT_TOLERANCE)


def fitted_background(background: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Cropped to the frame's shape and scaled. A background enlarged several times (mini-sd
    draws 128 px) is softened in proportion, as a shallow depth of field would; that also hides
    the resampling ringing and the VAE's 8-pixel grid, which sharpness would show."""
    enlarged = max(size[0] / background.width, size[1] / background.height)
    if enlarged > 2:  # pixel-level texture would become stripes `enlarged` pixels wide
        background = background.filter(ImageFilter.GaussianBlur(0.8))
    frame = ImageOps.fit(background, size, Image.Resampling.BICUBIC)
    if enlarged > 2:
        frame = frame.filter(ImageFilter.GaussianBlur(0.25 * enlarged))
    return frame


def _scaled_product(cutout: Image.Image, width: int, height: int, p: Placement) -> Image.Image:
    bounds = cutout.getchannel("A").getbbox()
    if bounds is None:
        raise BriefError("the cut-out is empty: no product was found in the photo")
    cutout = cutout.crop(bounds)
    scale = min(p.height * height / cutout.height, p.max_width * width / cutout.width)
    target = (max(1, round(cutout.width * scale)), max(1, round(cutout.height * scale)))
    # Premultiplied alpha: transparent pixels' colours do not bleed into the edge.
    return cutout.convert("RGBa").resize(target, Image.Resampling.LANCZOS).convert("RGBA")


def _eroded(alpha: Image.Image, px: int) -> np.ndarray:
    """1 where the product is fully opaque and at least `px` pixels inside its outline."""
    solid = alpha.point(lambda v: 255 if v == 255 else 0)
    if px > 0:
        solid = solid.filter(ImageFilter.MinFilter(2 * px + 1))
    return (np.asarray(solid) > 0).astype(np.float32)


def _contact_shadow(
    size: tuple[int, int], box: tuple[int, int, int, int], opacity: float
) -> Image.Image:
    """A transparent layer with a soft dark ellipse where the product meets the ground."""
    left, _, right, bottom = box
    width = right - left
    depth = max(2, round(width * 0.12))
    shade = Image.new("L", size, 0)
    if opacity > 0:
        ImageDraw.Draw(shade).ellipse(
            (left + width * 0.05, bottom - depth / 2, right - width * 0.05, bottom + depth / 2),
            fill=round(255 * opacity),
        )
        shade = shade.filter(ImageFilter.GaussianBlur(max(1, depth / 2)))
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    layer.putalpha(shade)
    return layer
