"""What the model makes of a spot's setting ("Where it is set") before anything is drawn: the
words it leaves out, said as they are typed (or the built-in place the setting is drawn as,
`place_reading`), and the built-in places and looks it knows, offered as suggestions. A model
that reads any text leaves nothing out; one not on this machine is said to be missing where it
is asked to draw, not here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.services import library
from app.services.place_reading import drawn_place, draws_places
from engine import ModelUnavailable

if TYPE_CHECKING:
    from engine import Engine

LOOKS = ("", " at golden hour", " at night")  # what a suggestion's light may add


def left_out(engine: Engine, preset: str, setting: str) -> list[str]:
    """The words of `setting` the model does not know: the picture is drawn without them."""
    return _read(engine, preset, setting)[1]


def left_out_note(engine: Engine, preset: str, setting: str) -> str:
    """One sentence for the page and the API: the built-in place the setting is drawn as, or
    the words the model leaves out ("" when every word is known)."""
    place = drawn_place(preset, setting)
    if place is not None:
        landmarks = {g["name"]: g["landmarks"] for g in library.catalog()[0]}[place.geography]
        look = library.TIMES_OF_DAY[place.light] + (", cloudy" if place.weather == "cloudy" else "")
        named = "" if place.named_by == place.geography else f", for '{place.named_by}'"
        return (
            f"Drawn as the built-in place {place.geography} ({landmarks}) {look}{named}: the "
            f"picture model ({model_name(preset)}) draws the place, not the other words."
        )
    kept, lost = _read(engine, preset, setting)
    if not lost:
        return ""
    words = ", ".join(f"'{w}'" for w in lost)
    model = f"The picture model ({model_name(preset)})"
    if not kept:
        return f"{model} knows none of these words ({words}); try one of the suggestions."
    them = "it" if len(lost) == 1 else "them"
    return f"{model} does not know {words}; it draws the picture without {them}."


def suggestions(engine: Engine, preset: str) -> list[str]:
    """Settings the model draws whole: each built-in place by its name, the lights in turn,
    where the model draws places from their layouts; else each place's landscape and
    landmarks in words the model knows, plain and in each light."""
    geographies, _ = library.catalog()
    if draws_places(preset):
        return [g["name"] + LOOKS[i % len(LOOKS)] for i, g in enumerate(geographies)]
    phrases = dict.fromkeys(
        phrase.strip().lower()
        for g in geographies
        for phrase in (g["landscape"], g["landmarks"])
        if phrase.strip()
    )
    made = [p + look for p in phrases for look in LOOKS]
    return [s for s in made if not left_out(engine, preset, s)]


def model_name(preset: str) -> str:
    """The model as a person names it (a saved pipeline's folder by its last part)."""
    return preset.rstrip("/").rsplit("/", 1)[-1]


def _read(engine: Engine, preset: str, text: str) -> tuple[list[str], list[str]]:
    try:
        return engine.read_words(preset, text or "")
    except ModelUnavailable:
        return [], []
