"""The delivery package of an order: its masters under names a traffic desk can file, each QC
report, and the spec sheet, in one zip stored as an asset of the business.

A master is named `business-campaign-geography-audience-shape-length.mp4` (slugs; the shape as
16x9, 9x16 or 1x1; a part the variant has not, such as the geography of a spot's base variant,
is left out), e.g. harbor-coffee-spring-bay-area-retirees-9x16-15s.mp4. Two variants that share
those words (an edited child and its parent) are told apart by -2, -3, ... in the order's
variant order. The same names serve each file on its own (`download`).
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.services.errors import UserError
from app.services.files import Download
from storage import OrderStatus
from templates import package
from templates.package import Master
from templates.qc_specs import MASTERS, SPECS

if TYPE_CHECKING:
    from app.services.context import AppContext
    from app.services.orders import OrderView

DISCLOSURE = package.DISCLOSURE
report = package.report  # a master's QC report file, as the zip holds it
SLUG_MAX = 40  # characters of one part of a name


@dataclass(frozen=True)
class Named:
    """A delivered master as the page lists it."""

    name: str
    render_id: int
    shape: str
    verdicts: tuple[tuple[str, bool | None], ...]


def slug(text: str | None) -> str:
    ascii_text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:SLUG_MAX].strip("-")


def names(ctx: AppContext, business_id: int, order: OrderView) -> list[Named]:
    """Each rendered master of the order with its file name, in the order's order."""
    taken: dict[str, int] = {}
    named = []
    with ctx.tenant(business_id) as tenant:
        business = slug(tenant.business.name)
        for d in order.deliveries:
            if d.render_id is None:
                continue
            variant = tenant.variants.get(d.variant_id)
            spot = tenant.campaigns.spot(variant.spot_id)
            campaign = tenant.campaigns.get(spot.campaign_id).name
            geography = (
                tenant.library.geography(variant.geography_id).name
                if variant.geography_id
                else None
            )
            audience = (
                tenant.library.audience(variant.audience_id).name if variant.audience_id else None
            )
            parts = [business, slug(campaign), slug(geography), slug(audience)]
            stem = "-".join(p for p in parts if p)
            stem += f"-{d.shape.replace(':', 'x')}-{spot.duration_s:g}s"
            taken[stem] = taken.get(stem, 0) + 1
            if taken[stem] > 1:
                stem += f"-{taken[stem]}"
            named.append(Named(f"{stem}.mp4", d.render_id, d.shape, d.verdicts))
    return named


def package_name(ctx: AppContext, business_id: int, order_id: int) -> str:
    with ctx.tenant(business_id) as tenant:
        tenant.orders.get(order_id)  # another business's order is not found
        return f"{slug(tenant.business.name) or 'spotforge'}-order-{order_id}.zip"


def build(ctx: AppContext, business_id: int, order: OrderView) -> int:
    """The order's package, stored as an asset of the business; its id. The same order makes
    the same bytes (entries are stamped with one date), so building it twice stores it once."""
    made = masters(ctx, business_id, order)
    with ctx.tenant(business_id) as tenant:
        title = f"{tenant.business.name} · order {order.id}"
    measured = {m.name: package.facts(m.path) for m in made}
    sheet = package.spec_sheet(title, made, measured)
    with tempfile.TemporaryDirectory(prefix="spotforge-package-") as tmp:
        name = package_name(ctx, business_id, order.id)
        zipped = package.write(Path(tmp) / name, made, sheet)
        with ctx.tenant(business_id) as tenant:
            return tenant.assets.add(zipped, name, made=True).id


def download(ctx: AppContext, business_id: int, order_id: int, name: str) -> Download:
    """A delivered order's file by its name: the package, or one master. Another business's
    order, an order not delivered and a name not in it all read as not found."""
    from app.services import orders  # orders settles into delivery: imported where used

    order = orders.status(ctx, business_id, order_id)
    if order.status != OrderStatus.DELIVERED:
        raise UserError(f"Order {order_id} has no delivered files.")
    # An order delivered before packages were made has its masters but no zip.
    if order.package_asset_id is not None and name == package_name(ctx, business_id, order_id):
        with ctx.tenant(business_id) as tenant:
            path = tenant.assets.path(order.package_asset_id)
        return Download(path, name, "application/zip")
    for master in masters(ctx, business_id, order):
        if master.name == name:
            return Download(master.path, name, "video/mp4")
    raise UserError(f"Order {order_id} has no file named {name!r}.")


def package_path(ctx: AppContext, business_id: int, order_id: int) -> Download:
    """The stored zip of a delivered order."""
    return download(ctx, business_id, order_id, package_name(ctx, business_id, order_id))


def masters(ctx: AppContext, business_id: int, order: OrderView) -> list[Master]:
    """The order's rendered masters under their names, each with its report per destination
    that applies (`report` makes its file): the check it had when it was made for the
    destination of its shape, the later checks for the rest."""
    found = []
    for named in names(ctx, business_id, order):
        with ctx.tenant(business_id) as tenant:
            render = tenant.variants.render(named.render_id)
            qc = dict(render.qc_report or {})
            path = tenant.assets.path(render.asset_id)
        later = qc.pop("destinations", {})
        reports = {
            dest: qc if SPECS[dest] is MASTERS[named.shape] else later[dest]
            for dest, _ in named.verdicts
        }
        found.append(Master(named.name, path, named.shape, reports))
    return found
