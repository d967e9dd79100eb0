"""The geography and audience library: built-ins for every business, per-business edits that
shadow them, and background prompts that the offline model turns into the right landscape."""

from __future__ import annotations

import pytest

from app.services import UserError, library
from engine import Engine, TextToImage
from engine.training.classifier import SceneClassifier
from engine.training.scenes import ARCHETYPES
from engine.training.shape_judge import ShapeJudge
from storage.errors import InvalidValue
from storage.repos.library import install_shared


def test_every_business_starts_with_the_builtin_library(ctx, business_ids):
    geographies = {g.name: g for g in library.geographies(ctx, business_ids[0])}
    audiences = {a.name: a for a in library.audiences(ctx, business_ids[1])}
    assert len(geographies) >= 25 and len(audiences) >= 8
    bay = geographies["San Francisco Bay Area"]
    assert bay.builtin and "Mission Peak" in bay.landmarks
    assert "Manhattan" in geographies["Manhattan"].landmarks
    assert {"Young runners", "Families", "Retirees", "Students"} <= set(audiences)
    # Every landscape is a scene the offline model draws.
    assert {g.landscape for g in geographies.values()} <= set(ARCHETYPES.values())


def test_installing_again_adds_nothing_and_catalog_edits_reach_the_database(ctx, business_ids):
    before = library.geographies(ctx, business_ids[0])
    library.install_builtins(ctx.db)
    assert library.geographies(ctx, business_ids[0]) == before
    geographies, audiences = library.catalog()
    edited = [{**geographies[0], "weather": "foggy"}, *geographies[1:]]
    with ctx.db.session() as session:
        install_shared(session, edited, audiences)
    after = {g.name: g for g in library.geographies(ctx, business_ids[0])}
    assert len(after) == len(before) and after[geographies[0]["name"]].weather == "foggy"


def test_a_business_edits_its_own_copy_and_others_keep_the_builtin(ctx, business_ids):
    a, b = business_ids
    mine = library.save_geography(ctx, a, "San Francisco Bay Area", landmarks="Mount Diablo")
    assert not mine.builtin and mine.landscape == "green mountains"  # copied from the built-in
    library.save_geography(ctx, a, "San Francisco Bay Area", weather="cloudy")
    ours = {g.name: g for g in library.geographies(ctx, a)}["San Francisco Bay Area"]
    assert (ours.landmarks, ours.weather, ours.builtin) == ("Mount Diablo", "cloudy", False)
    theirs = {g.name: g for g in library.geographies(ctx, b)}["San Francisco Bay Area"]
    assert theirs.builtin and "Mission Peak" in theirs.landmarks

    added = library.save_audience(ctx, b, "Dog walkers", tone="cheerful", time_of_day="golden")
    assert added.name in {x.name for x in library.audiences(ctx, b)}
    assert added.name not in {x.name for x in library.audiences(ctx, a)}


def test_bad_library_edits_are_refused(ctx, business_ids):
    with pytest.raises(UserError, match="time_of_day must be one of day, golden, night"):
        library.save_audience(ctx, business_ids[0], "Shift workers", time_of_day="dawn")
    with pytest.raises(UserError, match="unknown field\\(s\\) colour"):
        library.save_geography(ctx, business_ids[0], "Moon base", colour="grey")
    with pytest.raises(InvalidValue, match="a name is required"):
        library.save_geography(ctx, business_ids[0], "  ", landscape="desert dunes")


def test_background_prompts_draw_each_geography_s_landscape(ctx, business_ids, tmp_path):
    geographies = library.geographies(ctx, business_ids[0])
    runners = {a.name: a for a in library.audiences(ctx, business_ids[0])}["Young runners"]
    bay = next(g for g in geographies if g.name == "San Francisco Bay Area")
    prompt = library.background_prompt(bay, runners.time_of_day)
    assert prompt.startswith("green mountains during the day, clear, Mission Peak")

    archetype_of = {caption: key for key, caption in ARCHETYPES.items()}
    classifier = SceneClassifier.fit()
    with Engine(model_dir=tmp_path, device="cpu") as engine:
        results = [
            engine.generate(
                TextToImage(
                    preset="mini-sd",
                    prompt=library.background_prompt(g, runners.time_of_day),
                    seed=1,
                )
            )
            for g in geographies
        ]
    # mini-sd leaves out the words it does not know, and says which.
    bay_result = results[geographies.index(bay)]
    assert any("'mission'" in warning for warning in bay_result.warnings)
    seen = classifier.predict([r.images[0] for r in results])
    pairs = list(zip(geographies, seen, strict=True))
    right = sum(archetype == archetype_of[g.landscape] for g, archetype in pairs)
    assert right >= 0.9 * len(geographies), [(g.name, archetype) for g, archetype in pairs]


def test_each_builtin_place_names_the_landmark_its_model_was_trained_on():
    """landmark-dit learned each place from its signature's words after its landscape and
    light: a built-in's background prompt, less the words the model does not know, is that
    caption."""
    import re

    from engine.training import landmark_dit
    from engine.training.landmarks import LANDSCAPES, SIGNATURES, LandmarkParams

    places, people = library.builtin_views()
    known = set(landmark_dit.vocabulary())
    assert {p.name for p in places} == set(SIGNATURES) == set(LANDSCAPES)
    for place in places:
        for audience in people:
            prompt = library.background_prompt(place, audience.time_of_day)
            kept = " ".join(w for w in re.findall("[a-z]+", prompt.lower()) if w in known)
            asked = LandmarkParams(place.name, audience.time_of_day, place.weather, 0)
            caption = landmark_dit.caption(asked, "landscape-first")
            assert kept == " ".join(re.findall("[a-z]+", caption)), place.name


def test_landmark_dit_draws_each_builtin_place_recognisably_from_its_background_prompt(
    ctx, business_ids, tmp_path
):
    """Model v2's first stage, asked as a variant asks (the background prompt of each built-in
    place in one audience's light, the engine dropping the words it does not know), draws a
    picture the project's judges name as that place."""
    geographies = library.geographies(ctx, business_ids[0])
    runners = {a.name: a for a in library.audiences(ctx, business_ids[0])}["Young runners"]
    classifier = SceneClassifier.fit(target="geography")
    with Engine(model_dir=tmp_path, device="cpu") as engine:
        requests = [
            TextToImage(
                preset="landmark-dit",
                prompt=library.background_prompt(g, runners.time_of_day),
                seed=1,
            )
            for g in geographies
        ]
        results = [handle.result() for handle in engine.submit_all(requests)]
    assert {r.images[0].size for r in results} == {(256, 144)}
    seen = classifier.predict([r.images[0] for r in results])
    wrong = [(g.name, s) for g, s in zip(geographies, seen, strict=True) if g.name != s]
    # The committed weights, drawn with shifted patches as the engine draws them, name 25 of
    # 27 places 90 % of the time (the card; Philadelphia 83 %, Nashville 75 %) and miss at
    # most one here; more means they, or the prompts the app asks them with, got worse.
    assert len(wrong) <= 1, wrong
    # By shapes (the shape judge, which the review uses for places), the card names 14 of 27
    # places 90 % of the time; here it misses four, drawn without their landmarks
    # (2026-12-05). A miss anywhere else is a regression.
    shaped = ShapeJudge.load().predict([r.images[0] for r in results])
    unshaped = {g.name for g, s in zip(geographies, shaped, strict=True) if g.name != s}
    assert unshaped <= {"Salt Lake City", "San Francisco Bay Area", "Seattle", "Washington, D.C."}
