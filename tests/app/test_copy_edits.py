"""The owner's words as they air: a run airs them unless the owner chose other lines for an
audience, and a variant's words edited are its child in the lineage, made like any variant; the
page's handlers (and API endpoints) do the same."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from app.services import accounts, bulk, library, variants
from app.services.audience_copy import decide
from app.services.copy_edits import edit_copy
from app.services.demo import BRIEF
from app.services.errors import UserError
from app.services.jobs import Tallies, work_batch
from app.services.matrix import plan_matrix
from app.ui.studio import Studio, proposals_air
from engine import Engine
from storage import NotFound, VariantStatus
from templates.errors import BriefError
from tests.app.test_bulk import cup, ids, spot_with_photo


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


def start(ctx, engine, business, spot, places, people) -> str:
    plan = plan_matrix(
        ctx, engine, business, [spot], ids(library.geographies(ctx, business), *places),
        ids(library.audiences(ctx, business), *people), preset="mini-sd",
    )  # fmt: skip
    return bulk.start(ctx, engine, business, plan)


def aired(ctx, business, run) -> dict[str, dict]:
    """The copy each of the run's variants stored, by audience name."""
    names = {a.id: a.name for a in library.audiences(ctx, business)}
    with ctx.tenant(business) as tenant:
        return {names[v.audience_id]: v.extra_params["copy"] for v in tenant.variants.of_run(run)}


def make_frames(ctx, engine) -> None:
    """Work the queue's frame jobs until none is left."""
    handlers = {bulk.KIND: bulk.FrameHandler("test")}
    while work_batch(ctx, engine, handlers, owner="test", tallies=Tallies(), batch=2):
        pass


def test_a_run_airs_the_owner_s_words_unless_they_chose_others_for_an_audience(
    ctx, business_ids, engine
):
    business = business_ids[0]
    spot = spot_with_photo(ctx, business, cup())
    people = ("Young runners", "Retirees")
    first = start(ctx, engine, business, spot, ["Miami"], people)
    for copy in aired(ctx, business, first).values():  # verbatim, punctuation included
        assert {field: copy[field] for field in BRIEF} == BRIEF

    runners, retirees = ids(library.audiences(ctx, business), *people)
    decide(ctx, business, spot, {runners: {"headline": "Fresh espresso, fast!"},
                                 retirees: {"offer": "Coffee on us, Tuesdays"}})  # fmt: skip
    chosen = start(ctx, engine, business, spot, ["Miami"], people)
    assert chosen != first  # other words are another run: none of its variants keeps the old
    copy = aired(ctx, business, chosen)
    assert (copy["Young runners"]["headline"], copy["Young runners"]["offer"]) == (
        "Fresh espresso, fast!", BRIEF["offer"],
    )  # fmt: skip
    assert (copy["Retirees"]["headline"], copy["Retirees"]["offer"]) == (
        BRIEF["headline"], "Coffee on us, Tuesdays",
    )  # fmt: skip
    assert {c["cta_text"] for c in copy.values()} == {"Order online"}
    assert start(ctx, engine, business, spot, ["Miami"], people) == chosen  # unchanged: the same
    assert len(aired(ctx, business, chosen)) == 2  # and nothing added

    decide(ctx, business, spot, {runners: {"headline": ""}, retirees: {"offer": ""}})
    assert start(ctx, engine, business, spot, ["Miami"], people) == first  # their words again


def test_a_variant_s_words_edited_are_its_child_made_like_any_variant(ctx, business_ids, engine):
    business, other = business_ids
    spot = spot_with_photo(ctx, business, cup())
    run = start(ctx, engine, business, spot, ["Denver"], ["Retirees"])
    make_frames(ctx, engine)
    with ctx.tenant(business) as tenant:
        [variant] = tenant.variants.of_run(run)
        campaign = tenant.campaigns.spot(spot).campaign_id
    before = dict(variant.extra_params["copy"])

    # The call to action and the contact are the owner's own: they may change them here.
    changes = {"cta_text": "Call us today!", "phone": "555-0142"}
    child = edit_copy(ctx, business, variant.id, changes)
    assert edit_copy(ctx, business, variant.id, changes) == child  # asked again: one child
    make_frames(ctx, engine)
    with ctx.tenant(business) as tenant:
        edited = tenant.variants.get(child)
        assert edited.status is VariantStatus.READY and tenant.variants.frames([child])
        lineage = [a.id for a in tenant.variants.ancestors(child)]
        assert lineage == [variant.id, variant.parent_id]  # the variant, then the spot's base
        assert (edited.role, edited.run, edited.geography_id, edited.audience_id) == (
            "edit", None, variant.geography_id, variant.audience_id,
        )  # fmt: skip
        assert (edited.prompt, edited.seed) == (variant.prompt, variant.seed)  # same background
        assert edited.extra_params["copy"] == {**before, **changes}
        assert tenant.variants.get(variant.id).extra_params["copy"] == before  # parent as it was
    _, rows = variants.lineage(ctx, business, campaign)
    texts = [(r.depth, r.text) for r in rows]
    [at] = [i for i, (_, text) in enumerate(texts) if text.startswith("Denver · Retirees (")]
    assert texts[at + 1] == (texts[at][0] + 1, "Denver · Retirees, your edit (ready)")  # under it

    refused = [
        ({"headline": "x" * 43}, BriefError, "headline"),  # past the scene's 42
        ({"cta_url": "harbor\u202ecoffee.com"}, UserError, "do not show on screen"),
        ({"business_name": "Someone else"}, UserError, "Choose which words to change"),
        ({}, UserError, "Choose which words to change"),
        ({"tagline": before["tagline"]}, UserError, "words already"),
    ]
    for change, error, sentence in refused:
        with pytest.raises(error, match=sentence):
            edit_copy(ctx, business, variant.id, change)
    with pytest.raises(NotFound):
        edit_copy(ctx, other, variant.id, {"headline": "Ours now"})


def test_the_page_shows_each_audience_s_words_and_airs_what_the_owner_chose(
    ctx, business_ids, engine
):
    accounts.sign_up(ctx, "Harbor Coffee", "owner@example.com", "a long password")
    token = accounts.sign_in(ctx, "owner@example.com", "a long password")
    request = SimpleNamespace(headers={"authorization": f"Bearer {token}"}, cookies={})
    business = accounts.account_for(ctx, token).business_id
    spot = spot_with_photo(ctx, business, cup())
    studio = Studio(ctx, engine)

    rows = studio.copy_proposals(spot, ["Young runners"], request)
    assert rows == [
        ["Young runners", "headline", "Fresh espresso, fast", "Fresh espresso, fast!",
         "Fresh espresso, fast"],
        ["Young runners", "offer", "20 % off this week",  # the shorter lead: the longer is too long
         "Go faster: 20 % off this week", "20 % off this week"],
    ]  # fmt: skip
    # An API client that does not send the table airs what was chosen (nothing: their words).
    *_, run, _ = studio.make_variants(spot, ["Miami"], ["Young runners"], None, request)
    assert aired(ctx, business, run)["Young runners"]["headline"] == "Fresh espresso, fast"

    # "Use the proposals", then Make variants: the table is saved, and airs.
    *_, run, _ = studio.make_variants(spot, ["Miami"], ["Young runners"], proposals_air(rows),
                                      request)  # fmt: skip
    chosen = aired(ctx, business, run)["Young runners"]
    assert (chosen["headline"], chosen["offer"]) == (
        "Fresh espresso, fast!", "Go faster: 20 % off this week",
    )  # fmt: skip
    assert studio.copy_proposals(spot, ["Young runners"], request)[0][4] == "Fresh espresso, fast!"

    mine = [["Young runners", "headline", "", "", "<b>Espresso</b> for runners"]]
    assert studio.decide_copy(spot, mine, request)[0][4] == "<b>Espresso</b> for runners"  # text
    with pytest.raises(gr.Error, match="no audience called"):
        studio.decide_copy(spot, [["Nobody", "headline", "", "", "Hi"]], request)

    with ctx.tenant(business) as tenant:
        [variant] = tenant.variants.of_run(run)
    said = studio.edit_variant_copy(variant.id, "cta_text", "Order ahead", request)
    assert said.startswith("Saved as a new variant") and ", your edit" in said
