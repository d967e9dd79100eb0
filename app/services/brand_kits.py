"""A business's brand kit: what stays the same across its campaigns (colours, logo, fonts, web
address, phone, tagline), saved from its last brief so that the next one starts from it.

The offer, headline and call to action belong to one campaign, so they are not in it. The
kit's files are the business's own stored assets; what leaves here names them, never their
paths."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from templates.storyboard import Brand, Brief

if TYPE_CHECKING:
    from app.services.context import AppContext

DEFAULT_COLORS = tuple(Brand().colors)
KIT_COPY = ("cta_url", "phone", "tagline")  # the brief's lines that are the business's own


@dataclass(frozen=True)
class BrandKit:
    colors: tuple[str, ...] = DEFAULT_COLORS  # primary first
    cta_url: str = ""
    phone: str = ""
    tagline: str = ""
    files: dict[str, str] = field(default_factory=dict)  # role (logo, ...) -> the file's name

    def primary_and_accent(self) -> tuple[str, str]:
        """The brief page's two colours; a kit of one colour keeps the default accent."""
        primary, *others = self.colors
        return primary, (*others, DEFAULT_COLORS[1])[0]

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "colors": list(self.colors)}


def brand_kit(ctx: AppContext, business_id: int) -> BrandKit:
    """The business's kit; a business that has made no spot yet gets the defaults."""
    with ctx.tenant(business_id) as tenant:
        kit = tenant.brand_kit.get()
        if kit is None:
            return BrandKit()
        files = {
            role: tenant.assets.get(a).original_name for role, a in tenant.brand_kit.files().items()
        }
        return BrandKit(tuple(kit.colors), kit.cta_url, kit.phone, kit.tagline, files)


def save(tenant, brief: Brief, files: dict[str, int]) -> None:
    """The brief's brand and details become the business's kit; `files` (role -> asset id)
    are the logo and fonts it was made with."""
    tenant.brand_kit.save(
        colors=brief.brand.colors, files=files, **{k: getattr(brief, k) for k in KIT_COPY}
    )


def saved_files_note(kit: BrandKit) -> str:
    """What the brief will use when nothing is uploaded, said beside the upload fields."""
    fonts = sum(role.endswith("font") for role in kit.files)
    saved = ["logo"] * ("logo" in kit.files) + ["font" if fonts == 1 else "fonts"] * bool(fonts)
    if not saved:
        return ""
    return f"Using your saved {' and '.join(saved)}; upload one to replace it."
