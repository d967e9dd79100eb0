"""Copy and palette per audience: the audience's voice, the brief's facts, and copy that still
fits the template."""

from __future__ import annotations

from app.services import library
from app.services.audience_copy import adapt
from templates.spec import load_template, template_ids
from templates.storyboard import Brief, build_storyboard

BRIEF = Brief(
    business_name="Harbor Coffee",
    product_name="Espresso",
    headline="Fresh espresso, fast",
    body="Roasted on the harbor every morning.",
    offer="20 % off this week",
    cta_text="Order online",
    cta_url="harborcoffee.com",
    phone="555-0142",
)


def audiences(ctx, business):
    return {a.name: a for a in library.audiences(ctx, business)}


def test_each_audience_hears_its_own_voice_with_the_brief_s_facts(ctx, business_ids):
    built_in = audiences(ctx, business_ids[0])
    runners = adapt(BRIEF, built_in["Young runners"])
    assert runners.headline == "Fresh espresso, fast!"
    assert runners.offer == "Built for your best run: 20 % off this week"
    assert runners.cta_text == "Run with us"
    assert runners.brand.colors == [BRIEF.brand.colors[0], "#FF5A1F"]
    retirees = adapt(BRIEF, built_in["Retirees"])
    assert retirees.headline == "Fresh espresso, fast."
    assert retirees.offer.startswith("Comfort first: ")
    for adapted in (runners, retirees):  # facts never change
        assert (adapted.cta_url, adapted.phone, adapted.product_name, adapted.body) == (
            BRIEF.cta_url, BRIEF.phone, BRIEF.product_name, BRIEF.body,
        )  # fmt: skip


def test_a_business_s_own_audience_uses_its_own_words(ctx, business_ids):
    mine = library.save_audience(
        ctx, business_ids[1], "Dock workers", tone="bold", offer_emphasis="durability",
        call_to_action="Fuel up", palette_hints=["#0B6E4F"],
    )  # fmt: skip
    adapted = adapt(BRIEF, mine)
    assert (adapted.headline, adapted.cta_text) == ("Fresh espresso, fast!", "Fuel up")
    assert adapted.offer == "Built to last: 20 % off this week"


def test_every_adapted_brief_fits_every_template_falling_back_to_the_brief_s_words(
    ctx, business_ids
):
    for audience in audiences(ctx, business_ids[0]).values():
        for template_id in template_ids():
            template = load_template(template_id)
            build_storyboard(template, adapt(BRIEF, audience, template))  # no CopyError
    families = audiences(ctx, business_ids[0])["Families"]
    # "Best value: 20 % off this week" is 30 characters; seasonal-sale's offer holds 28.
    assert adapt(BRIEF, families).offer == "Best value: 20 % off this week"
    fitted = adapt(BRIEF, families, load_template("seasonal-sale"))
    assert (fitted.offer, fitted.cta_text) == (BRIEF.offer, "Bring the family")
