"""A spot's setting read as a built-in place: "Mission Peak in Fremont at sunset" is the San
Francisco Bay Area at golden hour, "Seattle on a cloudy night" Seattle at night under cloud.

Why: a model that draws built-in places from their layouts (landmark-dit) draws Mission Peak
where it stands only from the Bay Area's layout; from the typed words it draws the bay's colours
and no peak, and leaves out the names it was not trained on ("fremont", "sunset"). A setting
that names a place is therefore drawn as that place is for the business's variants there.
Names are the catalog's (`known_as` in geographies.toml); the light and weather are read from
plain words, and a setting that says neither gets day and the place's usual weather.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.services import library
from engine import ModelUnavailable, preset_for

# Words that set the light or the weather, as people write them; the first found wins.
LIGHT_WORDS = {
    "golden": ("golden hour", "sunset", "sunrise", "dusk", "dawn", "twilight", "evening"),
    "night": ("night", "nights", "nighttime", "midnight", "after dark", "under the stars"),
    "day": ("day", "daytime", "morning", "noon", "afternoon", "daylight"),
}
WEATHER_WORDS = {
    "cloudy": ("cloudy", "clouds", "overcast", "grey sky", "gray sky", "fog", "foggy", "rain",
               "rainy", "storm", "stormy"),
    "clear": ("clear", "sunny", "blue sky", "cloudless"),
}  # fmt: skip


@dataclass(frozen=True)
class PlaceReading:
    geography: str  # a built-in geography's name
    light: str  # day, golden or night
    weather: str  # clear or cloudy, or "" for the place's usual weather
    named_by: str  # the name in the setting that named it, as the catalog spells it


def drawn_place(preset: str, setting: str) -> PlaceReading | None:
    """The built-in place `setting` is drawn as with `preset`: the one it names, where the
    preset's model draws places from their layouts; None where it is drawn from its words."""
    return read_place(setting) if draws_places(preset) else None


def draws_places(preset: str) -> bool:
    """Whether `preset`'s model draws built-in places from their layouts (a model not on this
    machine draws nothing: it is said missing where it is asked to draw)."""
    try:
        return preset_for(preset).layout_strength is not None
    except ModelUnavailable:
        return False


def read_place(setting: str) -> PlaceReading | None:
    """The built-in place `setting` names (the one named first), or None."""
    text = _normal(setting)
    found = [
        (text.index(_normal(name)), -len(name), geography, name)
        for geography, names in library.known_as().items()
        for name in names
        if _normal(name) in text
    ]
    if not found:
        return None
    _, _, geography, name = min(found)
    return PlaceReading(
        geography, stated_light(setting) or "day", _first(text, WEATHER_WORDS), name
    )


def stated_light(setting: str) -> str:
    """The light `setting` says in plain words ("at sunset": golden), or "" where it says none."""
    return _first(_normal(setting), LIGHT_WORDS)


def _first(text: str, words: dict[str, tuple[str, ...]]) -> str:
    """The key of the word in `text` that comes first ("" when none is there)."""
    at = [
        (text.index(f" {phrase} "), key)
        for key, phrases in words.items()
        for phrase in phrases
        if f" {phrase} " in text
    ]
    return min(at)[1] if at else ""


def _normal(text: str) -> str:
    """Lower-case words separated by single spaces, padded with one each side, so a phrase
    matches whole words only ("D.C." and "DC" alike; "la" not inside "plaza")."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace(".", ""))
    return f" {' '.join(words)} "
