"""Variants as a business sees them: a gallery filtered by geography and audience, two side by
side, and a campaign's lineage tree (base creatives and what was personalized from them)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.services import library
from storage import Variant
from templates.spec import load_template

if TYPE_CHECKING:
    from app.services.context import AppContext

ROLE_WORDS = {"retry": ", made again", "edit": ", your edit"}


@dataclass(frozen=True)
class VariantCard:
    id: int
    spot_id: int
    parent_id: int | None
    geography: str  # "as briefed" for a base
    audience: str
    status: str
    error: str | None
    frame: Path | None  # the key frame, once made
    # What a gallery shows of it, once its frame is made: its spot at a glance
    # (`renders.keep_picture`), or the frame where none was drawn (a variant made before).
    picture: Path | None
    seed: int
    prompt: str
    headline: str
    role: str | None = None  # "retry" (made again after a check) or "edit" (the owner's words)
    personalized: bool = False  # made for a place and an audience (not a base, as briefed)
    # A base the spot no longer airs: another background, scene order or scene picture was
    # chosen after it (each makes a new base).
    superseded: bool = False

    @property
    def caption(self) -> str:
        """The variant in an owner's words: its place and audience, and what sets a retry, an
        edit or an earlier version apart from the others (ids are the controls' values, not
        words)."""
        earlier = ", an earlier version" if self.superseded else ""
        return f"{self.geography} · {self.audience}{ROLE_WORDS.get(self.role, '')}{earlier}"


def cards(
    ctx: AppContext,
    business_id: int,
    spot_id: int,
    *,
    geography: str | None = None,
    audience: str | None = None,
    personalized_only: bool = False,
    limit: int | None = None,
) -> list[VariantCard]:
    """The spot's variants, oldest first, optionally only one place's or audience's (by name)
    and only the newest `limit`; a few queries, each bounded by `limit`, however many variants
    the spot has."""
    names = _names(ctx, business_id)
    geographies, audiences = ({v: k for k, v in n.items()} for n in names)
    if (geography is not None and geography not in geographies) or (
        audience is not None and audience not in audiences
    ):
        return []  # a place or audience this business does not have has no variants
    with ctx.tenant(business_id) as tenant:
        chosen = tenant.variants.newest(
            spot_id,
            limit=limit,
            geography_id=geographies.get(geography),
            audience_id=audiences.get(audience),
            personalized_only=personalized_only,
        )
        frames = tenant.variants.frames([v.id for v in chosen])
        base = tenant.variants.base_of(spot_id)
        return [_card(ctx, tenant, v, names, frames.get(v.id), base) for v in chosen]


def card(ctx: AppContext, business_id: int, variant_id: int) -> VariantCard:
    names = _names(ctx, business_id)
    with ctx.tenant(business_id) as tenant:
        frame = tenant.variants.frames([variant_id]).get(variant_id)
        variant = tenant.variants.get(variant_id)
        return _card(ctx, tenant, variant, names, frame, tenant.variants.base_of(variant.spot_id))


def last_choice(ctx: AppContext, business_id: int, spot_id: int) -> tuple[list[str], list[str]]:
    """The places and audiences the spot's newest run was made for, in the library's order;
    none before its first run."""
    geographies, audiences = _names(ctx, business_id)
    with ctx.tenant(business_id) as tenant:
        run = tenant.variants.newest_run(spot_id)
        cells = set() if run is None else tenant.variants.run_cells(run)
    made = {(g, a) for spot, g, a in cells if spot == spot_id}
    places = [name for id_, name in geographies.items() if any(g == id_ for g, _ in made)]
    people = [name for id_, name in audiences.items() if any(a == id_ for _, a in made)]
    return places, people


@dataclass(frozen=True)
class LineageRow:
    """One line of a campaign's tree: `depth` 0 is a spot, 1 its first base, deeper rows
    descend from the row above them."""

    depth: int
    text: str
    variant_id: int | None = None  # None on a spot's line


def lineage(ctx: AppContext, business_id: int, campaign_id: int) -> tuple[str, list[LineageRow]]:
    """The campaign's name and its tree: spots, their base creatives (each later base under the
    one it replaced), and the variants personalized from each."""
    names = _names(ctx, business_id)
    rows: list[LineageRow] = []
    with ctx.tenant(business_id) as tenant:
        campaign = tenant.campaigns.get(campaign_id)
        for spot in tenant.campaigns.spots(campaign_id):
            name = load_template(spot.template_id).name
            rows.append(LineageRow(0, f"Spot · {name} · {spot.duration_s:g} s"))
            variants, base = tenant.variants.list(spot.id), tenant.variants.base_of(spot.id)
            children: dict[int | None, list[Variant]] = {}
            for v in variants:
                children.setdefault(v.parent_id, []).append(v)
            stack = [(v, 1) for v in reversed(children.get(None, []))]
            while stack:  # depth first, oldest sibling first
                v, depth = stack.pop()
                c = _card(ctx, tenant, v, names, None, base)
                rows.append(LineageRow(depth, f"{c.caption} ({c.status})", v.id))
                stack += [(child, depth + 1) for child in reversed(children.get(v.id, []))]
            if not variants:
                rows.append(LineageRow(1, "no variants yet"))
        return campaign.name, rows


def picture_path(ctx: AppContext, business_id: int, variant: Variant) -> Path:
    """Where the variant's picture is kept (`keep_picture`): a view of its row, not an asset,
    but in the asset folder, which every node of a cluster shares; named by a digest of all
    the row says it is made from, so a database restored or made anew over that folder never
    finds another variant's picture under its id."""
    made_from = json.dumps([variant.prompt, variant.seed, variant.extra_params], sort_keys=True)
    digest = hashlib.sha256(made_from.encode()).hexdigest()[:16]
    folder = ctx.settings.resolved_asset_dir / "variant-pictures" / str(business_id)
    return folder / f"{variant.id}-{digest}.jpg"


def _names(ctx: AppContext, business_id: int) -> tuple[dict[int, str], dict[int, str]]:
    geographies = {g.id: g.name for g in library.geographies(ctx, business_id)}
    audiences = {a.id: a.name for a in library.audiences(ctx, business_id)}
    return geographies, audiences


def _card(
    ctx, tenant, v: Variant, names, frame_asset: int | None, current_base: Variant | None
) -> VariantCard:
    """`current_base`: the spot's base now; any other base is an earlier version."""
    geographies, audiences = names
    frame = picture = None
    if frame_asset is not None:
        frame, drawn = tenant.assets.path(frame_asset), picture_path(ctx, tenant.business.id, v)
        picture = drawn if drawn.exists() else frame
    base = v.geography_id is None
    return VariantCard(
        v.id,
        v.spot_id,
        v.parent_id,
        "as briefed" if base else geographies.get(v.geography_id, "?"),
        "everyone" if v.audience_id is None else audiences.get(v.audience_id, "?"),
        v.status.value,
        v.last_error,
        frame,
        picture,
        v.seed,
        v.prompt,
        str(v.extra_params.get("copy", {}).get("headline", "")),
        v.role,
        personalized=not base,
        superseded=v.role == "base" and current_base is not None and v.id != current_base.id,
    )
