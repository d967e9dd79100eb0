"""What a generated background shows: its landscape and its light, named by classifiers of the
scenes its model was trained on. Only a scene-trained preset (mini-sd) has a judge; for any
other model nothing here can tell, and `scene_judge` says so with None."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from engine.errors import ModelUnavailable
from engine.loading import preset_for
from engine.training.classifier import SceneClassifier
from engine.training.scenes import ARCHETYPES


@dataclass(frozen=True)
class Seen:
    landscape: str  # in the caption's words: "snowy peaks"
    light: str  # a time of day: "day", "golden" or "night"


class SceneJudge:
    """Two softmax regressions over the same features, fitted once on procedural scenes drawn
    from seeds the model never saw (a few seconds, once per process)."""

    def __init__(self) -> None:
        self._landscape = SceneClassifier.fit(target="archetype")
        self._light = SceneClassifier.fit(target="time")

    def judge(self, images: Sequence[Image.Image]) -> list[Seen]:
        kinds, lights = self._landscape.predict(images), self._light.predict(images)
        return [Seen(ARCHETYPES[k], t) for k, t in zip(kinds, lights, strict=True)]


def scene_judge(preset: str) -> SceneJudge | None:
    """The judge of `preset`'s pictures, or None when no classifier knows them (a hub model, a
    random-weight test model, an unknown id)."""
    try:
        trained = preset_for(preset).scene_trained
    except ModelUnavailable:
        return None
    return _judge() if trained else None


@functools.cache
def _judge() -> SceneJudge:
    return SceneJudge()
