"""A business can neither read nor reference another business's rows or files."""

from __future__ import annotations

import pytest

from storage import NotFound
from storage.models import Audience, Geography
from tests.samples import png_bytes
from tests.storage.test_crud import PARAMS

pytestmark = pytest.mark.backends  # on SQLite and on PostgreSQL


@pytest.fixture
def other_business_data(ctx, business_ids):
    """Everything business A owns, made through its own tenant."""
    a, _ = business_ids
    with ctx.tenant(a) as t:
        campaign = t.campaigns.create("Secret launch")
        photo = t.assets.add(png_bytes((5, 5, 5)), "secret.png")
        spot = t.campaigns.create_spot(
            campaign.id,
            template_id="product-hero",
            template_version="1",
            duration_s=15,
            product_asset_ids=[photo.id],
        )
        variant = t.variants.create(spot.id, PARAMS)
        t.variants.add_render(variant.id, tier="preview", asset_id=photo.id)
        order = t.orders.create([variant.id])
        geo = t.library.add_geography("Our secret beach")
    return dict(
        campaign=campaign.id,
        photo=photo.id,
        spot=spot.id,
        variant=variant.id,
        order=order.id,
        geo=geo.id,
        sha=photo.sha256,
    )


def test_reads_are_scoped(ctx, business_ids, other_business_data):
    d = other_business_data
    with ctx.tenant(business_ids[1]) as t:
        assert t.campaigns.list() == []
        assert t.orders.list() == []
        assert t.assets.list() == []
        assert "Our secret beach" not in [g.name for g in t.library.geographies()]
        for read in [
            lambda: t.campaigns.get(d["campaign"]),
            lambda: t.campaigns.spot(d["spot"]),
            lambda: t.campaigns.spots(d["campaign"]),
            lambda: t.variants.get(d["variant"]),
            lambda: t.variants.renders(d["variant"]),
            lambda: t.variants.ancestors(d["variant"]),
            lambda: t.variants.descendants(d["variant"]),
            lambda: t.variants.provenance(d["photo"]),
            lambda: t.assets.get(d["photo"]),
            lambda: t.assets.path(d["photo"]),
            lambda: t.orders.get(d["order"]),
            lambda: t.library.geography(d["geo"]),
        ]:
            with pytest.raises(NotFound):  # the same answer as for an id that never existed
                read()
        assert t.assets.by_sha256(d["sha"]) is None


def test_cannot_reference_another_business(ctx, business_ids, other_business_data):
    d = other_business_data
    with ctx.tenant(business_ids[1]) as t:
        own = t.campaigns.create("Ours")
        own_spot = t.campaigns.create_spot(
            own.id, template_id="product-hero", template_version="1", duration_s=15
        )
        for write in [
            lambda: t.campaigns.create_spot(
                d["campaign"], template_id="x", template_version="1", duration_s=15
            ),
            lambda: t.campaigns.create_spot(
                own.id,
                template_id="x",
                template_version="1",
                duration_s=15,
                product_asset_ids=[d["photo"]],
            ),
            lambda: t.variants.create(d["spot"], PARAMS),
            lambda: t.variants.create(own_spot.id, PARAMS, parent_id=d["variant"]),
            lambda: t.variants.create(own_spot.id, PARAMS, geography_id=d["geo"]),
            lambda: t.variants.add_render(d["variant"], tier="final", asset_id=d["photo"]),
            lambda: t.orders.create([d["variant"]]),
            lambda: t.orders.transition(d["order"], "cancelled"),
        ]:
            with pytest.raises(NotFound):
                write()


def test_same_file_uploaded_by_two_businesses(ctx, business_ids):
    a, b = business_ids
    data = png_bytes((7, 7, 7))
    with ctx.tenant(a) as t:
        mine = t.assets.add(data, "a.png")
    with ctx.tenant(b) as t:
        theirs = t.assets.add(data, "b.png")
        assert theirs.id != mine.id  # each business owns its own row...
        assert t.assets.path(theirs.id) == ctx.assets.path(mine.path)  # ...of one stored file
        with pytest.raises(NotFound):
            t.assets.get(mine.id)


def test_builtin_library_is_shared_but_own_entries_are_not(ctx, business_ids):
    # The app installs its catalog as built-ins too; these tests look only at their own names.
    a, b = business_ids
    with ctx.db.session() as s:
        s.add(Geography(name="Harbor town", landmarks="piers, fishing boats"))
        s.add(Audience(name="Sailors", age_band="30+"))
    with ctx.tenant(a) as t:
        t.library.add_geography("Marin headlands")
        t.library.add_audience("Trail club")
    with ctx.tenant(b) as t:
        geographies = [g.name for g in t.library.geographies()]
        assert "Harbor town" in geographies and "Marin headlands" not in geographies
        audiences = [x.name for x in t.library.audiences()]
        assert "Sailors" in audiences and "Trail club" not in audiences
        t.library.add_geography("Harbor town")  # a business may shadow a built-in name
    with ctx.tenant(a) as t:
        geographies = [g.name for g in t.library.geographies()]
        assert geographies.count("Harbor town") == 1 and "Marin headlands" in geographies


def test_writes_cannot_reach_the_shared_library(ctx, business_ids):
    from storage import StorageError

    with ctx.db.session() as s:
        s.add(Geography(name="Chicago lakefront"))
    refused = pytest.raises(StorageError, match="would alter the built-in library's geography")
    with refused, ctx.tenant(business_ids[0]) as t:
        [builtin] = [g for g in t.library.geographies() if g.name == "Chicago lakefront"]
        builtin.name = "Renamed by one business"
    with ctx.tenant(business_ids[1]) as t:
        assert "Chicago lakefront" in [g.name for g in t.library.geographies()]
