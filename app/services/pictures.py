"""Your pictures: photos and short clips a business uploads to its library, to set its spot, one
of its scenes or one of its places in, instead of a generated background.

A picture is used at its full resolution, cropped to each frame around the focus point the
owner chose, and graded toward the light of the audience it airs to (`templates.grading`); a
clip plays at its own speed, trimmed to its scene or looped with a crossfade
(`templates.footage`, `templates.motion`). A variant records the picture (its asset id) and the
focus point in its parameters, so it renders the same again; nothing about it is generated, so
the generation cache has no part in it.

Another business's picture is "not found", like a missing one, whatever id is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageOps

from app.services.errors import UserError
from storage import NotFound
from templates import footage
from templates.grading import grade
from templates.motion import Clip, Still

if TYPE_CHECKING:
    from app.services.context import AppContext

MAX_CLIP_S = 60.0  # a scene is a few seconds: a longer clip is trimmed anyway
NOT_A_PICTURE = "Upload a photo (JPEG, PNG or WebP) or a short clip (MP4 or MOV)."
# The brief's 3x3 choice of where a picture is cropped around.
FOCUS_POINTS = {
    "top left": (0.0, 0.0), "top": (0.5, 0.0), "top right": (1.0, 0.0),
    "left": (0.0, 0.5), "centre": (0.5, 0.5), "right": (1.0, 0.5),
    "bottom left": (0.0, 1.0), "bottom": (0.5, 1.0), "bottom right": (1.0, 1.0),
}  # fmt: skip
CENTRE = (0.5, 0.5)


@dataclass(frozen=True)
class PictureView:
    asset_id: int
    name: str  # the file's name as uploaded: what the page calls it
    kind: str  # "photo" or "clip"
    width: int
    height: int
    duration_s: float | None
    path: Path

    @property
    def caption(self) -> str:
        size = f"{self.width}×{self.height}"
        if self.kind == "clip":
            return f"{self.name} · clip, {self.duration_s or 0:.1f} s, {size}"
        return f"{self.name} · photo, {size}"


@dataclass(frozen=True)
class Backdrop:
    """One of the business's pictures as a background: which, and where it is cropped around
    (shares of its width and height, 0 to 1)."""

    asset_id: int
    focus: tuple[float, float] = CENTRE

    def as_json(self) -> dict[str, Any]:
        return {"asset_id": self.asset_id, "focus": list(self.focus)}

    @classmethod
    def of(cls, stored: dict[str, Any] | None) -> Backdrop | None:
        """From its stored form (a brief's, a geography's, a variant's parameters)."""
        if not stored:
            return None
        return cls(int(stored["asset_id"]), focus_of(stored.get("focus")))


def focus_of(value: object) -> tuple[float, float]:
    """A focus point from [x, y] (0 to 1 each) or one of FOCUS_POINTS' names; refused with a
    sentence otherwise. None is the centre."""
    if value is None or value == "":
        return CENTRE
    if isinstance(value, str):
        if value.strip().lower() not in FOCUS_POINTS:
            raise UserError(f"The focus point is one of: {', '.join(FOCUS_POINTS)}.")
        return FOCUS_POINTS[value.strip().lower()]
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        and all(0.0 <= float(v) <= 1.0 for v in value)
    ):
        return float(value[0]), float(value[1])
    raise UserError("The focus point is [x, y], each from 0 (left, top) to 1 (right, bottom).")


def upload(ctx: AppContext, business_id: int, path: Path, name: str = "") -> PictureView:
    """Add a photo or clip to the business's pictures; a file that is neither, that does not
    decode, or a clip longer than MAX_CLIP_S is refused with a sentence, and nothing is kept."""
    check_upload(ctx, path)
    with ctx.tenant(business_id) as tenant:
        asset = tenant.assets.add(path, name or path.name, library=True)
        return _view(tenant, asset)


def check_upload(ctx: AppContext, path: Path) -> None:
    """Refuse, before anything is stored, a file that cannot be one of the pictures."""
    info = ctx.assets.inspect(path)  # InvalidAsset / AssetTooLarge: their own sentences
    family = info.media_type.split("/")[0]
    if family not in ("image", "video"):
        raise UserError(NOT_A_PICTURE)
    if family == "video" and (info.duration_s or 0.0) > MAX_CLIP_S:
        raise UserError(
            f"This clip is {info.duration_s:.0f} s long; upload one of at most "
            f"{MAX_CLIP_S:.0f} s (a scene shows a few seconds of it)."
        )
    if family == "video":
        try:  # ffprobe read its header; a clip whose pictures do not decode is refused too
            footage.first_frame(path, (64, 36))
        except ValueError:
            raise UserError("This clip cannot be played; export it again as MP4.") from None


def pictures(ctx: AppContext, business_id: int) -> list[PictureView]:
    with ctx.tenant(business_id) as tenant:
        return [_view(tenant, a) for a in tenant.assets.library()]


def checked(tenant, backdrop: Backdrop) -> Backdrop:
    """`backdrop` if its picture is one of this business's; NotFound otherwise (another
    business's asset, a render, a generated background: none is one of "your pictures")."""
    try:
        asset = tenant.assets.get(backdrop.asset_id)
    except NotFound:
        raise NotFound("picture", backdrop.asset_id) from None
    if not asset.in_library:
        raise NotFound("picture", backdrop.asset_id)
    return backdrop


def is_clip(tenant, backdrop: Backdrop) -> bool:
    return tenant.assets.get(backdrop.asset_id).media_type.startswith("video/")


def visual(
    tenant,
    backdrop: Backdrop,
    *,
    light: str,
    size: tuple[int, int],
    seconds: float,
    subject: Image.Image | None = None,
) -> Still | Clip:
    """The picture as a scene of `seconds` at `size` shows it: a photo at full resolution
    (cropped around its focus by the scene's motion), a clip decoded at the frame's size;
    both graded toward `light`, with `subject` (the product's cut-out) on them."""
    path = tenant.assets.path(checked(tenant, backdrop).asset_id)
    if is_clip(tenant, backdrop):
        return footage.clip(path, size, seconds, focus=backdrop.focus, light=light, subject=subject)
    return Still(grade(photo(path), light), subject=subject, focus=backdrop.focus)


def key_frame(tenant, backdrop: Backdrop, *, light: str, size: tuple[int, int]) -> Image.Image:
    """The picture as a variant's key frame shows it behind the product: cropped to `size`
    around its focus from full resolution, graded toward `light` (a clip: its first frame)."""
    path = tenant.assets.path(checked(tenant, backdrop).asset_id)
    if is_clip(tenant, backdrop):
        return footage.first_frame(path, size, focus=backdrop.focus, light=light)
    fitted = ImageOps.fit(photo(path), size, Image.Resampling.LANCZOS, centering=backdrop.focus)
    return grade(fitted, light)


def thumbnail(picture: PictureView, size: tuple[int, int] = (320, 180)) -> Image.Image:
    """A small view of the whole picture (a clip: its first frame), for the library."""
    if picture.kind == "clip":
        return footage.first_frame(picture.path, size)
    shown = photo(picture.path)
    shown.thumbnail(size, Image.Resampling.LANCZOS)
    return shown


def photo(path: Path) -> Image.Image:
    """A stored photo upright (a camera's EXIF orientation applied), as RGB."""
    with Image.open(path) as image:
        return ImageOps.exif_transpose(image).convert("RGB")


def _view(tenant, asset) -> PictureView:
    clip = asset.media_type.startswith("video/")
    return PictureView(
        asset.id,
        asset.original_name or ("clip" if clip else "photo"),
        "clip" if clip else "photo",
        int(asset.width or 0),
        int(asset.height or 0),
        asset.duration_s,
        tenant.assets.path(asset.id),
    )
