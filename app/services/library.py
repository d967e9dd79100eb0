"""The geography and audience library a campaign personalizes with.

Built-ins come from `app/services/catalog/*.toml` and are written to the database at every
start (`install_builtins`), so editing the catalog updates them. A business sees the built-ins
plus its own entries; customizing a built-in gives the business its own copy under the same
name, which shadows the built-in for that business only.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.services.errors import UserError
from app.services.pictures import Backdrop, checked
from storage import Audience, Database, Geography, install_shared

if TYPE_CHECKING:  # context.py installs the built-ins at start, so it imports this module
    from app.services.context import AppContext

CATALOG = Path(__file__).with_name("catalog")
TIMES_OF_DAY = {"day": "during the day", "golden": "at golden hour", "night": "at night"}


@dataclass(frozen=True)
class GeographyView:
    id: int
    name: str
    region: str
    landscape: str
    landmarks: str
    architecture: str
    weather: str
    builtin: bool
    # The business's own picture its variants here are set in, instead of a generated one.
    background: Backdrop | None = None


@dataclass(frozen=True)
class AudienceView:
    id: int
    name: str
    age_band: str
    interests: tuple[str, ...]
    tone: str
    palette_hints: tuple[str, ...]
    time_of_day: str
    offer_emphasis: str
    call_to_action: str
    builtin: bool


@cache
def catalog() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The built-in geographies and audiences as the catalog files define them (a geography's
    stored fields: the names it is known by are `known_as()`'s)."""
    geographies = [
        {k: v for k, v in entry.items() if k != "known_as"} for entry in _geography_entries()
    ]
    audiences = tomllib.loads((CATALOG / "audiences.toml").read_text())["audience"]
    for entry in audiences:
        _check_time(entry["time_of_day"])
    return geographies, audiences


@cache
def known_as() -> dict[str, tuple[str, ...]]:
    """Each built-in geography's name with the other names a person types for it."""
    return {g["name"]: (g["name"], *g.get("known_as", ())) for g in _geography_entries()}


@cache
def _geography_entries() -> list[dict[str, Any]]:
    return tomllib.loads((CATALOG / "geographies.toml").read_text())["geography"]


def install_builtins(db: Database) -> None:
    geographies, audiences = catalog()
    with db.session() as session:
        install_shared(session, geographies, audiences)


def geographies(ctx: AppContext, business_id: int) -> list[GeographyView]:
    with ctx.tenant(business_id) as tenant:
        return [_geography(g) for g in _own_first(tenant.library.geographies())]


def audiences(ctx: AppContext, business_id: int) -> list[AudienceView]:
    with ctx.tenant(business_id) as tenant:
        return [_audience(a) for a in _own_first(tenant.library.audiences())]


def save_geography(ctx: AppContext, business_id: int, name: str, **changes: str) -> GeographyView:
    """Add a geography, or change one: the business's own, or its copy of a built-in."""
    _check_fields(GeographyView, changes)
    with ctx.tenant(business_id) as tenant:
        return _geography(_save(tenant.library, "geograph", name, changes))


def set_geography_background(
    ctx: AppContext, business_id: int, name: str, backdrop: Backdrop | None
) -> GeographyView:
    """Set this business's variants in geography `name` in one of its own pictures (None: back
    to generated backgrounds). A built-in becomes the business's own copy; another business's
    picture is "not found"."""
    with ctx.tenant(business_id) as tenant:
        if name.strip() not in {g.name for g in tenant.library.geographies()}:
            raise UserError(f"There is no place called {name.strip()!r} in your library.")
        if backdrop is not None:
            checked(tenant, backdrop)
        stored = {
            "background_asset_id": None if backdrop is None else backdrop.asset_id,
            "background_focus": None if backdrop is None else list(backdrop.focus),
        }
        return _geography(_save(tenant.library, "geograph", name, stored))


def save_audience(ctx: AppContext, business_id: int, name: str, **changes: Any) -> AudienceView:
    _check_fields(AudienceView, changes)
    if "time_of_day" in changes:
        _check_time(changes["time_of_day"])
    with ctx.tenant(business_id) as tenant:
        return _audience(_save(tenant.library, "audience", name, changes))


def builtin_names() -> tuple[list[str], list[str]]:
    """The built-in geographies' and audiences' names (every business has them), sorted."""
    geographies, audiences = catalog()
    return sorted(g["name"] for g in geographies), sorted(a["name"] for a in audiences)


def builtin_views() -> tuple[list[GeographyView], list[AudienceView]]:
    """The built-ins as the catalog defines them, for a look that is no business's (id 0:
    these are not the stored rows)."""
    geographies, audiences = catalog()
    places = [GeographyView(0, **g, builtin=True) for g in geographies]
    people = [
        AudienceView(0, **{**a, "interests": tuple(a["interests"]),
                           "palette_hints": tuple(a["palette_hints"])}, builtin=True)
        for a in audiences
    ]  # fmt: skip
    return sorted(places, key=lambda g: g.name), sorted(people, key=lambda a: a.name)


def background_prompt(geography: GeographyView, light: str) -> str:
    """The background of a place in a light (an audience's time of day): the geography's
    landscape in that light first (what every model, mini-sd included, draws from), then the
    details real models add. Only the light comes from an audience, so audiences that share it
    share the background."""
    details = ", ".join(
        part for part in (geography.landmarks, geography.architecture) if part.strip()
    )
    head = f"{geography.landscape} {TIMES_OF_DAY[light]}, {geography.weather}"
    return f"{head}, {details}, photograph, no people"


def _save(library, kind: str, name: str, changes: dict[str, Any]):
    name = name.strip()
    rows = library.geographies() if kind == "geograph" else library.audiences()
    own = {r.name: r for r in rows if r.business_id is not None}
    builtin = {r.name: r for r in rows if r.business_id is None}
    if name in own:
        row = own[name]
        for field, value in changes.items():
            setattr(row, field, value)
        return row
    base = _columns(builtin[name]) if name in builtin else {}
    add = library.add_geography if kind == "geograph" else library.add_audience
    return add(name, **{**base, **changes})


def _columns(row: Geography | Audience) -> dict[str, Any]:
    skip = {"id", "business_id", "name", "created_at", "updated_at"}
    return {c.key: getattr(row, c.key) for c in row.__table__.columns if c.key not in skip}


def _own_first(rows: list) -> list:
    """Each name once: the business's own entry where it has one, else the built-in."""
    by_name: dict[str, Any] = {}
    for row in rows:
        if row.name not in by_name or row.business_id is not None:
            by_name[row.name] = row
    return sorted(by_name.values(), key=lambda r: r.name)


def _check_fields(view: type, changes: dict[str, Any]) -> None:
    allowed = {f.name for f in fields(view)} - {"id", "name", "builtin", "background"}
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise UserError(
            f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )


def _check_time(value: str) -> None:
    if value not in TIMES_OF_DAY:
        raise UserError(f"time_of_day must be one of {', '.join(TIMES_OF_DAY)}, not {value!r}")


def _geography(row: Geography) -> GeographyView:
    return GeographyView(
        row.id,
        row.name,
        row.region,
        row.landscape,
        row.landmarks,
        row.architecture,
        row.weather,
        row.business_id is None,
        None
        if row.background_asset_id is None
        else Backdrop(row.background_asset_id, tuple(row.background_focus or (0.5, 0.5))),
    )


def _audience(row: Audience) -> AudienceView:
    return AudienceView(
        row.id,
        row.name,
        row.age_band,
        tuple(row.interests),
        row.tone,
        tuple(row.palette_hints),
        row.time_of_day,
        row.offer_emphasis,
        row.call_to_action,
        row.business_id is None,
    )
