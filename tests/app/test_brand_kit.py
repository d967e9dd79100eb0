"""Remembered: a spot's brand and end card details become its business's kit, the next brief
starts from it (its logo and fonts reused when none is uploaded), a returning owner lands on
their last spot, and another business sees none of it."""

from __future__ import annotations

import json

import gradio as gr
import pytest
from PIL import Image
from starlette.requests import Request

from app.services import UserError, accounts, brand_kits, spots
from app.services.brand_kits import BrandKit
from app.ui.studio import Studio
from engine import Engine
from storage import NotFound
from tests.app.test_spots import COPY, form

PASSWORD = "a-long-password"
KIT_COPY = {"cta_url": "harborcoffee.test", "phone": "555-0142", "tagline": "Roasted daily"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):  # the storyboard's cut-out of the product
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "espresso.png"
    Image.new("RGB", (320, 240), "saddlebrown").save(path)
    return path


@pytest.fixture
def logo(tmp_path):
    path = tmp_path / "harbor-logo.png"
    Image.new("RGBA", (120, 60), (224, 90, 42, 255)).save(path)
    return path


@pytest.fixture
def font(tmp_path, font_bytes):
    path = tmp_path / "harbor.ttf"
    path.write_bytes(font_bytes)
    return path


def branded(photo, logo=None, font=None, **changes) -> spots.BriefForm:
    """A brief with Harbor's own colours and details (and its logo and font, when given)."""
    copy = {**COPY, **KIT_COPY, "setting": "street with buildings during the day"}
    own = {"copy": copy, "colors": ["#203040", "#E05A2A"], "logo": logo, "heading_font": font}
    return form(photo, **{**own, **changes})


def signed_in(ctx, business: str, email: str) -> tuple[gr.Request, int]:
    """A request signed in as a new account of its own business, as the page sends it; and
    that business's id."""
    accounts.sign_up(ctx, business, email, PASSWORD)
    token = accounts.sign_in(ctx, email, PASSWORD)
    scope = {"type": "http", "headers": [(b"authorization", f"Bearer {token}".encode())]}
    return gr.Request(request=Request(scope)), accounts.account_for(ctx, token).business_id


def test_the_last_brief_s_brand_is_the_kit_the_next_brief_starts_from(
    ctx, business_ids, photo, logo, font, tmp_path
):
    business = business_ids[0]
    assert brand_kits.brand_kit(ctx, business) == BrandKit()  # nothing made yet: the defaults
    first = spots.create_spot(ctx, business, branded(photo, logo, font))
    kit = brand_kits.brand_kit(ctx, business)
    assert kit == BrandKit(
        ("#203040", "#E05A2A"), **KIT_COPY, files={"logo": logo.name, "heading_font": font.name}
    )
    assert str(tmp_path) not in json.dumps(kit.as_json())  # names, never paths
    assert brand_kits.saved_files_note(kit) == (
        "Using your saved logo and font; upload one to replace it."
    )

    # The next brief uploads neither: the saved logo and font are its own, on its end card too.
    again = spots.create_spot(ctx, business, branded(photo, campaign_name="Summer"))
    with ctx.tenant(business) as tenant:
        made, reused = (tenant.campaigns.spot(v.id).copy["brand_assets"] for v in (first, again))
        assert reused == made and set(made) == {"logo", "heading_font"}
        brief = spots.resolved_brief(tenant, tenant.campaigns.spot(again.id).copy, reused)
        assert brief.brand.logo == tenant.assets.path(made["logo"])
    assert not any(note.startswith("No logo yet") for note in again.notes)

    # An uploaded logo replaces the saved one; the font stays.
    other = tmp_path / "new-logo.png"
    Image.new("RGBA", (90, 90), (20, 120, 60, 255)).save(other)
    spots.create_spot(ctx, business, branded(photo, other, campaign_name="Autumn"))
    assert brand_kits.brand_kit(ctx, business).files == {
        "logo": other.name,
        "heading_font": font.name,
    }


def test_a_refused_brief_leaves_the_kit_as_it_was(ctx, business_ids, photo, logo, font):
    business = business_ids[0]
    spots.create_spot(ctx, business, branded(photo, logo))
    before = brand_kits.brand_kit(ctx, business)
    with pytest.raises(UserError, match=r"Your logo .* must be a PNG"):  # a font is no logo
        spots.create_spot(ctx, business, branded(photo, font, colors=["#000000", "#FFFFFF"]))
    assert brand_kits.brand_kit(ctx, business) == before


def test_another_business_gets_the_defaults_not_the_first_one_s_kit(ctx, photo, logo, engine):
    studio = Studio(ctx, engine)
    harbor, harbor_id = signed_in(ctx, "Harbor Coffee", "owner@harbor.test")
    rival, rival_id = signed_in(ctx, "Rival Roasters", "owner@rival.test")
    sent = branded(photo, logo, template_id="storefront", objective="Bring commuters in")
    spot = spots.create_spot(ctx, harbor_id, sent).id

    # The owner comes back: the brief is prefilled, the studio opens on the last spot.
    assert studio.prefill(harbor) == (
        "#203040", "#E05A2A", *KIT_COPY.values(),
        "Using your saved logo; upload one to replace it.",
    )  # fmt: skip
    resumed = studio.resume(harbor)
    view = spots.spot_view(ctx, harbor_id, spot)
    named = view.campaign_name
    assert resumed[0] == spot and resumed[3] == f"Working on {named}."
    assert resumed[8] == named and resumed[10] == view.brief.headline != ""  # the brief's words
    # Its objective, length and template too; and the templates of that length keep it chosen.
    assert resumed[16:22] == ("Bring commuters in", *KIT_COPY.values(), 30, "storefront")
    assert studio.templates(30, "storefront", harbor)[1].value == "storefront"
    assert studio.templates(15, "storefront", harbor)[1].value == "product-hero"
    assert studio.brand_kit(harbor)["files"] == {"logo": logo.name}

    # Another business: the defaults everywhere, a blank studio, and its spot has no logo.
    assert studio.brand_kit(rival) == BrandKit().as_json()
    for blank in (studio.prefill(rival), studio.resume(rival)):  # the page's defaults stay
        assert all(update == gr.update() for update in blank)
    made = spots.create_spot(ctx, rival_id, form(photo))
    with ctx.tenant(harbor_id) as tenant:
        harbor_logo = tenant.brand_kit.files()["logo"]
    with ctx.tenant(rival_id) as tenant:
        assert tenant.campaigns.spot(made.id).copy["brand_assets"] == {}
        assert tenant.brand_kit.files() == {}
        with pytest.raises(NotFound):  # nor can it make Harbor's logo its own
            tenant.brand_kit.save(colors=["#000000"], files={"logo": harbor_logo})
