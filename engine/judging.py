"""What a generated background shows, named by classifiers of the scenes its model was trained
on: the landscape and light (mini-sd, mini-dit: the archetype scenes) or the place and light
(landmark-dit: each built-in geography's landmarks). A place is named by the shape judge
(`engine.training.shape_judge`), which reads outlines and layout, not palettes, since a
viewer does not name a place by its colours; the light by colour. Only a
scene-trained preset has a judge; for any other model nothing here can tell, and
`scene_judge` says so with None."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from engine.errors import ModelUnavailable
from engine.loading import preset_for
from engine.training.classifier import SceneClassifier
from engine.training.scenes import ARCHETYPES
from engine.training.shape_judge import ShapeJudge


@dataclass(frozen=True)
class Seen:
    landscape: str | None  # in the caption's words: "snowy peaks" (None from a judge of places)
    light: str  # a time of day: "day", "golden" or "night"
    place: str | None = None  # a built-in geography's name, from a judge of places


class SceneJudge:
    """Softmax regressions over colour and layout, fitted once on procedural scenes drawn from
    seeds the model never saw (a few seconds to a minute, once per process), and for places
    the committed shape judge."""

    def __init__(self, trained_on: str) -> None:
        self.places = trained_on == "landmarks"
        self._what = ShapeJudge.load() if self.places else SceneClassifier.fit(target="archetype")
        self._light = SceneClassifier.fit(target="time", landmarks=self.places)

    def judge(self, images: Sequence[Image.Image]) -> list[Seen]:
        whats, lights = self._what.predict(images), self._light.predict(images)
        if self.places:
            return [Seen(None, t, place=w) for w, t in zip(whats, lights, strict=True)]
        return [Seen(ARCHETYPES[k], t) for k, t in zip(whats, lights, strict=True)]


def scene_judge(preset: str) -> SceneJudge | None:
    """The judge of `preset`'s pictures, or None when no classifier knows them (a hub model, a
    random-weight test model, an unknown id)."""
    try:
        trained_on = preset_for(preset).trained_on
    except ModelUnavailable:
        return None
    return None if trained_on is None else _judge(trained_on)


@functools.cache
def _judge(trained_on: str) -> SceneJudge:
    return SceneJudge(trained_on)
