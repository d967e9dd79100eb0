"""Create, read, update and delete for every model, through the tenant API where one exists."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from storage import InvalidValue, NotFound
from storage.models import (
    Asset,
    Campaign,
    CampaignStatus,
    Order,
    Render,
    RenderTier,
    Spot,
    Variant,
    VariantStatus,
)
from storage.repos.variants import GenerationParams
from tests.samples import png_bytes

pytestmark = pytest.mark.backends  # on SQLite and on PostgreSQL

PARAMS = GenerationParams(
    model_id="mini-sd",
    model_revision="v1",
    task="text-to-image",
    prompt="mountains at dawn",
    negative_prompt="text, watermark",
    seed=42,
    steps=20,
    guidance=5.0,
    width=256,
    height=256,
    recipe="exact",
    engine_version="0.1.0",
    extra={"scheduler": "ddim"},
)


def test_campaign_crud(ctx, business_ids):
    biz, _ = business_ids
    with ctx.tenant(biz) as t:
        first = t.campaigns.create("  Spring sale ", "More runners in store")
        second = t.campaigns.create("Summer")
    with ctx.tenant(biz) as t:
        assert [c.name for c in t.campaigns.list()] == ["Summer", "Spring sale"]
        assert t.campaigns.get(first.id).objective == "More runners in store"
        t.campaigns.set_status(first.id, "active")
    with ctx.tenant(biz) as t:
        assert t.campaigns.get(first.id).status is CampaignStatus.ACTIVE
        t.campaigns.get(second.id).name = "Summer trails"
    with ctx.tenant(biz) as t:
        assert t.campaigns.get(second.id).name == "Summer trails"
    with ctx.db.session() as s:
        s.delete(s.get(Campaign, second.id))
    with ctx.tenant(biz) as t, pytest.raises(NotFound, match=f"campaign {second.id} not found"):
        t.campaigns.get(second.id)


@pytest.mark.parametrize(
    ("name", "objective", "message"),
    [("", "", "needs a name"), ("x" * 121, "", "at most 120"), ("ok", "y" * 501, "at most 500")],
)
def test_campaign_rejects_bad_input(ctx, business_ids, name, objective, message):
    with ctx.tenant(business_ids[0]) as t, pytest.raises(InvalidValue, match=message):
        t.campaigns.create(name, objective)


def _spot(t, product_ids=()):
    campaign = t.campaigns.create("Spring sale")
    return t.campaigns.create_spot(
        campaign.id,
        template_id="product-hero",
        template_version="1",
        duration_s=15.0,
        copy={"headline": "Run further"},
        product_asset_ids=list(product_ids),
    )


def test_spot(ctx, business_ids):
    with ctx.tenant(business_ids[0]) as t:
        photo = t.assets.add(png_bytes(), "shoe.png")
        spot = _spot(t, [photo.id])
        with pytest.raises(InvalidValue, match="15 or 30 seconds"):
            t.campaigns.create_spot(
                spot.campaign_id, template_id="x", template_version="1", duration_s=20
            )
    with ctx.tenant(business_ids[0]) as t:
        spot = t.campaigns.spot(spot.id)
        assert [a.original_name for a in spot.product_assets] == ["shoe.png"]
        assert spot.copy == {"headline": "Run further"}
        assert [s.id for s in t.campaigns.spots(spot.campaign_id)] == [spot.id]
    with ctx.db.session() as s:  # deleting a spot keeps its product photos
        s.delete(s.get(Spot, spot.id))
    with ctx.tenant(business_ids[0]) as t:
        assert [a.id for a in t.assets.list()] == [photo.id]


def test_variant_render_and_status(ctx, business_ids):
    with ctx.tenant(business_ids[0]) as t:
        spot = _spot(t)
        geo = t.library.add_geography(
            "Bay Area",
            region="CA",
            landscape="golden hills",
            landmarks="Mission Peak",
            time_of_day="golden hour",
        )
        aud = t.library.add_audience(
            "Young runners",
            age_band="18-29",
            interests=["trail"],
            tone="energetic",
            palette_hints=["#FF6600"],
        )
        variant = t.variants.create(spot.id, PARAMS, geography_id=geo.id, audience_id=aud.id)
        frame = t.assets.add(png_bytes((0, 90, 200)), "frame.png")
        render = t.variants.add_render(
            variant.id,
            tier="preview",
            asset_id=frame.id,
            qc_report={"pass": True},
            timings={"denoise": 1.5},
        )
        t.variants.set_status(variant.id, VariantStatus.FAILED, "out of memory")
    with ctx.tenant(business_ids[0]) as t:
        stored = t.variants.get(variant.id)
        assert GenerationParams.of(stored) == PARAMS
        assert (stored.status, stored.last_error) == (VariantStatus.FAILED, "out of memory")
        assert t.library.geography(geo.id).landmarks == "Mission Peak"
        assert t.library.audience(aud.id).interests == ["trail"]
        [r] = t.variants.renders(variant.id)
        assert (r.id, r.tier, r.timings) == (render.id, RenderTier.PREVIEW, {"denoise": 1.5})
        assert [v.id for v in t.variants.list(spot.id)] == [variant.id]
    with ctx.db.session() as s:
        s.delete(s.get(Variant, variant.id))
    with ctx.db.session() as s:
        assert s.scalar(select(func.count()).select_from(Render)) == 0


def test_orders(ctx, business_ids):
    with ctx.tenant(business_ids[0]) as t:
        spot = _spot(t)
        variants = [t.variants.create(spot.id, PARAMS) for _ in range(2)]
        order = t.orders.create([v.id for v in variants] + [variants[0].id])
        t.orders.quote(order.id, 49_900)
    with ctx.tenant(business_ids[0]) as t:
        order = t.orders.get(order.id)
        assert (order.status.value, order.quote_cents, len(order.variants)) == ("quoted", 49_900, 2)
        assert [o.id for o in t.orders.list()] == [order.id]
        with pytest.raises(InvalidValue, match="at least one variant"):
            t.orders.create([])
    with ctx.db.session() as s:
        s.delete(s.get(Order, order.id))
    with ctx.tenant(business_ids[0]) as t, pytest.raises(NotFound):
        t.orders.get(order.id)


def test_unknown_ids_are_clear_errors(ctx, business_ids):
    with ctx.tenant(business_ids[0]) as t:
        for call, kind in [
            (lambda: t.campaigns.get(999), "campaign"),
            (lambda: t.campaigns.spot(999), "spot"),
            (lambda: t.variants.get(999), "variant"),
            (lambda: t.assets.get(999), "asset"),
            (lambda: t.orders.get(999), "order"),
            (lambda: t.library.geography(999), "geography"),
            (
                lambda: t.campaigns.create_spot(
                    999, template_id="a", template_version="1", duration_s=15
                ),
                "campaign",
            ),
            (lambda: t.orders.create([999]), "variant"),
        ]:
            with pytest.raises(NotFound, match=f"^{kind} 999 not found$"):
                call()
    with pytest.raises(NotFound, match="business 999 not found"), ctx.tenant(999):
        pass


def test_asset_rows_record_media(ctx, business_ids, mp4_bytes):
    with ctx.tenant(business_ids[0]) as t:
        image = t.assets.add(png_bytes(size=(64, 48)), "a.png")
        clip = t.assets.add(mp4_bytes, "clip.mp4")
    with ctx.db.session() as s:
        rows = {a.id: a for a in s.scalars(select(Asset))}
    assert (rows[image.id].media_type, rows[image.id].width, rows[image.id].height) == (
        "image/png",
        64,
        48,
    )
    assert (rows[clip.id].media_type, rows[clip.id].width, rows[clip.id].height) == (
        "video/mp4",
        160,
        90,
    )
    assert rows[clip.id].duration_s == pytest.approx(1.0, abs=0.05)
