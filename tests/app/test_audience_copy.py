"""The owner's words per audience: proposals for the headline and the offer alone, fitted to
the template; nothing proposed airs unless the owner chooses it, and what they choose is checked
as the brief was and is theirs alone."""

from __future__ import annotations

import pytest

from app.services import library
from app.services.audience_copy import SLOTS, aired, decide, lines, proposals
from app.services.errors import UserError
from storage import NotFound
from templates.spec import load_template, template_ids
from templates.storyboard import Brief, build_storyboard
from tests.app.test_bulk import cup, spot_with_photo

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


OWNERS = ("business_name", "product_name", "body", "cta_text", "cta_url", "phone", "tagline")


def audiences(ctx, business):
    return {a.name: a for a in library.audiences(ctx, business)}


def test_proposals_offer_a_voice_for_the_headline_and_offer_and_never_touch_the_rest(
    ctx, business_ids
):
    built_in = audiences(ctx, business_ids[0])
    runners = {p.slot: p for p in proposals(BRIEF, built_in["Young runners"])}
    assert (runners["headline"].yours, runners["headline"].proposed) == (
        "Fresh espresso, fast", "Fresh espresso, fast!",
    )  # fmt: skip
    assert runners["offer"].proposed == "Made to perform: 20 % off this week"
    retirees = {p.slot: p.proposed for p in proposals(BRIEF, built_in["Retirees"])}
    assert retirees["headline"] == "Fresh espresso, fast."
    assert retirees["offer"].startswith("Comfort first: ")
    for audience in built_in.values():
        assert {p.slot for p in proposals(BRIEF, audience)} == set(SLOTS)
        # What airs until the owner chooses: their words, verbatim; only the accent is the
        # audience's. A coffee shop keeps "Order online", never "Run with us".
        airs = aired(BRIEF, audience, {})
        assert airs.model_dump(exclude={"brand"}) == BRIEF.model_dump(exclude={"brand"})
        assert airs.brand.colors == [BRIEF.brand.colors[0], audience.palette_hints[0]]


def test_a_business_s_own_audience_gets_proposals_but_not_its_call_to_action(ctx, business_ids):
    mine = library.save_audience(
        ctx, business_ids[1], "Dock workers", tone="bold", offer_emphasis="durability",
        call_to_action="Fuel up", palette_hints=["#0B6E4F"],
    )  # fmt: skip
    proposed = {p.slot: p.proposed for p in proposals(BRIEF, mine)}
    assert proposed == {
        "headline": "Fresh espresso, fast!", "offer": "Built to last: 20 % off this week",
    }  # fmt: skip
    chosen = aired(BRIEF, mine, proposed)
    assert (chosen.headline, chosen.cta_text) == ("Fresh espresso, fast!", "Order online")


def test_every_proposal_fits_every_template_else_the_owner_s_words_stand(ctx, business_ids):
    for audience in audiences(ctx, business_ids[0]).values():
        for template_id in template_ids():
            template = load_template(template_id)
            proposed = {p.slot: p.proposed for p in proposals(BRIEF, audience, template)}
            build_storyboard(template, aired(BRIEF, audience, proposed))  # no CopyError
    built_in = audiences(ctx, business_ids[0])
    # "Best value: 20 % off this week" is 30 characters; seasonal-sale's offer holds 28, so
    # the shorter lead is proposed there; where neither fits, the owner's words stand.
    assert proposals(BRIEF, built_in["Families"])[1].proposed == "Best value: 20 % off this week"
    seasonal = load_template("seasonal-sale")
    fitted = proposals(BRIEF, built_in["Families"], seasonal)[1]
    assert (fitted.slot, fitted.proposed) == ("offer", "Value: 20 % off this week")
    long_offer = BRIEF.model_copy(update={"offer": "20 % off all week long"})  # 22 of 28
    assert proposals(long_offer, built_in["Families"], seasonal)[1].proposed == long_offer.offer
    # Audiences that stress different things are offered different lines in every template.
    for template_id in template_ids():
        offers = {
            proposals(BRIEF, a, load_template(template_id))[1].proposed for a in built_in.values()
        }
        assert len(offers) == len({a.offer_emphasis for a in built_in.values()}), template_id


def test_the_owner_s_choices_are_checked_stored_per_audience_and_theirs_alone(ctx, business_ids):
    business, other = business_ids
    spot = spot_with_photo(ctx, business, cup())
    built_in = audiences(ctx, business)
    runners, retirees = built_in["Young runners"].id, built_in["Retirees"].id
    before = lines(ctx, business, spot, [runners, retirees])
    assert [(x.audience, x.slot) for x in before] == [
        ("Young runners", "headline"), ("Young runners", "offer"),
        ("Retirees", "headline"), ("Retirees", "offer"),
    ]  # fmt: skip
    assert all(x.airs == x.yours for x in before)  # by default, the owner's words

    decide(ctx, business, spot, {runners: {"headline": before[0].proposed},
                                 retirees: {"offer": "  Coffee on us, Tuesdays  "}})  # fmt: skip
    now = {(x.audience, x.slot): x.airs for x in lines(ctx, business, spot, [runners, retirees])}
    assert now == {
        ("Young runners", "headline"): "Fresh espresso, fast!",
        ("Young runners", "offer"): "20 % off this week",
        ("Retirees", "headline"): "Fresh espresso, fast",
        ("Retirees", "offer"): "Coffee on us, Tuesdays",  # cleaned as the brief is
    }

    refused = [
        ({runners: {"headline": "x" * 121}}, "For Young runners: The headline has 121 characters"),
        ({runners: {"offer": "20 %\u200b off"}}, "characters that do not show on screen"),
        ({runners: {"cta_text": "Run with us"}}, "Only the headline and the offer"),
        ({retirees: {"headline": "A" * 100}}, "For Retirees: .*headline"),  # past the scene's room
    ]
    for choice, sentence in refused:
        with pytest.raises(UserError, match=sentence):
            decide(ctx, business, spot, choice)
    with pytest.raises(NotFound):  # another business's spot, as if it were not there
        decide(ctx, other, spot, {runners: {"headline": "Ours now"}})
    theirs = library.save_audience(ctx, other, "Dock workers", tone="bold")
    with pytest.raises(NotFound):  # nor may it use another business's own audience
        decide(ctx, business, spot, {theirs.id: {"headline": "Ours now"}})
    after = {(x.audience, x.slot): x.airs for x in lines(ctx, business, spot, [runners, retirees])}
    assert after == now  # nothing refused was stored

    decide(ctx, business, spot, {runners: {"headline": ""}, retirees: {"offer": BRIEF.offer}})
    assert all(x.airs == x.yours for x in lines(ctx, business, spot, [runners, retirees]))
