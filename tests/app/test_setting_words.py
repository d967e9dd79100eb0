"""'Where it is set': the words the model leaves out are said as they are typed, and the
suggestions are settings the model draws whole."""

from __future__ import annotations

import pytest

from app.services import library, setting_words
from engine import Engine, TextToImage

ISSUE = "Mission Peak in Fremont at sunset"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as made:
        yield made


def test_the_words_left_out_are_those_the_engine_drops(engine):
    note = setting_words.left_out_note(engine, "mini-sd", ISSUE)
    assert note == (
        "The picture model (mini-sd) does not know 'mission', 'peak', 'in', 'fremont', 'sunset'; "
        "it draws the picture without them."
    )
    made = engine.generate(TextToImage(preset="mini-sd", prompt=ISSUE, seed=1, steps=1))
    assert made.warnings == ("mini-sd does not know 'mission', 'peak', 'in', 'fremont', "
                             "'sunset'; left out of the prompt",)  # fmt: skip
    assert setting_words.left_out_note(engine, "mini-sd", "Snowy peaks at NIGHT") == ""
    assert "knows none of these words ('fremont')" in setting_words.left_out_note(
        engine, "mini-sd", "Fremont!"
    )
    # A model that reads any text leaves nothing out; one not here is said missing elsewhere
    # (where it is asked to draw), and the page still opens.
    assert setting_words.left_out_note(engine, "tiny-sd", ISSUE) == ""
    assert setting_words.left_out_note(engine, "sd-turbo", ISSUE) == ""
    assert setting_words.suggestions(engine, "sd-turbo")


def test_every_suggestion_is_drawn_whole_and_every_landscape_is_offered(engine):
    offered = setting_words.suggestions(engine, "mini-sd")
    landscapes = {g["landscape"] for g in library.catalog()[0]}
    assert landscapes <= set(offered) and f"{sorted(landscapes)[0]} at night" in offered
    assert all(not setting_words.left_out(engine, "mini-sd", s) for s in offered)
    made = engine.generate(TextToImage(preset="mini-sd", prompt=offered[-1], seed=1, steps=1))
    assert made.warnings == ()
    # Landmark words join the suggestions once the model knows them; mini-sd does not yet.
    assert not any("mission" in s for s in offered)
    assert any("mission peak" in s for s in setting_words.suggestions(engine, "tiny-sd"))
