"""A spot from a brief: refused with a reason when something is wrong, its storyboard, its
scenes reordered or one redrawn, each edit a new base variant in its lineage."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from skimage import data

from app.services import UserError, businesses, library, renders, spots
from app.services.demo import BRIEF
from app.services.spots import brief_of
from engine import Engine
from storage import Business
from storage.errors import StorageError
from templates.errors import BriefError
from templates.export import frames_at
from templates.spec import load_template
from templates.storyboard import CopyError, build_storyboard
from tests.storage.rows import all_rows

COPY = {k: v for k, v in BRIEF.items() if k != "business_name"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "espresso.png"
    Image.fromarray(data.coffee()).save(path)
    return path


def form(photo, **changes) -> spots.BriefForm:
    fields = {
        "campaign_name": "Espresso week",
        "template_id": "product-hero",
        "copy": {**COPY, "setting": "street with buildings during the day"},
        "colors": ["#1F3A5F", "#F2B134"],
        "product_photos": [photo],
    }
    return spots.BriefForm(**{**fields, **changes})


def test_a_brief_with_a_problem_is_refused_and_stores_nothing(
    ctx, business_ids, photo, tmp_path, font_bytes
):
    business = business_ids[0]
    text = tmp_path / "notes.png"
    text.write_text("not a picture")
    font = tmp_path / "brand.ttf"
    font.write_bytes(font_bytes)
    too_long = {**COPY, "offer": "An unbelievable forty percent off every single bag"}
    for changes, error, match in (
        ({"product_photos": []}, UserError, "Add a photo of your product"),
        ({"copy": too_long}, CopyError, "offer: 50 characters, the limit is 32"),
        ({"colors": ["navy"]}, UserError, "colours look like #1A2B3C"),
        ({"product_photos": [text]}, StorageError, "not recognised"),
        ({"template_id": "nope"}, BriefError, "nope"),
        ({"template_id": "../../pyproject"}, BriefError, "no template"),
        # A photo that is fine, then a file that is not what its role needs: nothing is kept.
        ({"logo": font}, UserError, "The logo must be a PNG, JPEG or WebP image"),
        ({"heading_font": photo}, UserError, "The heading font must be a TTF or OTF font"),
        ({"campaign_name": "x" * 121}, UserError, "campaign name has 121 characters"),
        ({"campaign_name": "\u200b\u200c"}, UserError, "do not show on screen"),
        ({"copy": {**COPY, "headline": "Fresh\x00 espresso"}}, UserError, "headline has"),
        ({"copy": {**COPY, "body": "x" * 301}}, UserError, "body has 301 characters"),
        ({"copy": {**COPY, "offer": "\u202eff0 %02"}}, UserError, "U\\+202E"),
        # Fits its character limit, but one word wider than the screen can show.
        ({"copy": {**COPY, "cta_url": "x" * 50 + ".com"}}, BriefError, "url: .* does not fit"),
    ):
        with pytest.raises(error, match=match):
            spots.create_spot(ctx, business, form(photo, **changes))
    with ctx.tenant(business) as tenant:
        assert tenant.campaigns.list() == [] and tenant.assets.list() == []
    stored = [p for p in ctx.assets.root.rglob("*") if p.is_file()]
    assert stored == []  # not a photo, not a temporary part


def test_reorder_and_redraw_make_new_bases(ctx, business_ids, photo, engine):
    business = business_ids[0]
    spot = spots.create_spot(ctx, business, form(photo)).id
    first = spots.choose_background(ctx, engine, business, spot, 1)
    cards = spots.storyboard(ctx, engine, business, spot)
    assert [c.kind for c in cards] == ["establishing", "hero", "offer", "end_card"]
    assert cards[2].copy == {"offer": BRIEF["offer"]}

    reordered = spots.reorder_scenes(ctx, engine, business, spot, [0, 2, 1, 3])
    cards = spots.storyboard(ctx, engine, business, spot)
    assert [c.kind for c in cards] == ["establishing", "offer", "hero", "end_card"]
    with pytest.raises(UserError, match="names each of the 4 scenes once"):
        spots.reorder_scenes(ctx, engine, business, spot, [0, 0, 1, 3])
    with pytest.raises(UserError, match="brand card"):
        spots.regenerate_scene(ctx, engine, business, spot, 3)

    before = renders.render_variant(ctx, engine, business, reordered, "preview")
    redrawn = spots.regenerate_scene(ctx, engine, business, spot, 0)
    after = renders.render_variant(ctx, engine, business, redrawn, "preview")
    assert before.qc_passed and after.qc_passed
    with ctx.tenant(business) as tenant:
        lineage = [v.id for v in tenant.variants.ancestors(redrawn)]
        assert lineage == [reordered, first]  # each edit under the one it changed
        assert tenant.variants.get(redrawn).extra_params["scene_seeds"] == {"0": 2}
    # Only the redrawn scene changed: the opening differs, the offer (scene 2 now) does not.
    times = [1.75, 5.0]
    old, new = (
        [np.asarray(f, dtype=np.float32) for f in frames_at(r.path, times)] for r in (before, after)
    )
    assert np.abs(old[0] - new[0]).mean() > 8
    assert np.abs(old[1] - new[1]).mean() < 3


def test_reading_a_spot_its_campaigns_and_the_library_changes_nothing(ctx, business_ids, photo):
    business = business_ids[0]
    spot = spots.create_spot(ctx, business, form(photo))
    before = all_rows(ctx.db)
    assert spots.spot_view(ctx, business, spot.id) == spot
    assert library.geographies(ctx, business) and library.audiences(ctx, business)
    assert [c.id for c in businesses.list_campaigns(ctx, business)] == [spot.campaign_id]
    assert businesses.first_spot(ctx, business, spot.campaign_id) == spot.id
    assert len(businesses.list_all(ctx)) == 2
    assert all_rows(ctx.db) == before


def test_the_end_card_names_the_business_it_belongs_to(ctx, business_ids, photo, engine):
    """The name on the spot is the business's own (never typed again, never another's), and
    each variant stores it with the rest of its copy: what was approved is what airs."""
    business = business_ids[0]
    with ctx.db.session() as session:
        name = session.get(Business, business).name
    view = spots.create_spot(ctx, business, form(photo, copy={**COPY, "business_name": "Other"}))
    assert view.brief.business_name == name == "Trailhead Running"
    base = spots.choose_background(ctx, engine, business, view.id, 0)
    with ctx.tenant(business) as tenant:
        stored = tenant.variants.get(base).extra_params["copy"]
    assert stored["business_name"] == name
    with ctx.db.session() as session:  # the account is renamed after the preview was approved
        session.get(Business, business).name = "Trailhead Running & Walking"
    end = build_storyboard(load_template(view.template_id), brief_of(stored)).scenes[-1]
    assert end.copy_text["business"] == name  # the variant airs as approved
    assert end.copy_text["url"] == COPY["cta_url"]


def test_the_brief_says_what_a_template_will_not_show(ctx, business_ids, photo):
    business = business_ids[0]
    # Product hero has no line for the body copy, and there is no logo yet: both are said.
    view = spots.create_spot(ctx, business, form(photo))
    assert view.notes == (
        "Product hero does not show what you wrote under Body: it stays in your brief but will "
        "not be on screen in this spot. App or online-shop promo, Service business and "
        "Storefront or restaurant show it.",
        "No logo yet: the end card names your business in text. Add your logo to show it too.",
    )
    assert view.brief.body == COPY["body"]  # kept, as the note says
    assert spots.spot_view(ctx, business, view.id).notes == view.notes  # and said again later
    # A template that shows every field, with a logo: nothing to say.
    shown = spots.create_spot(ctx, business, form(photo, template_id="online-shop", logo=photo))
    assert shown.notes == ()
    assert "It does not show the Body field." in spots.template_note("product-hero")
    assert "does not show" not in spots.template_note("online-shop")
