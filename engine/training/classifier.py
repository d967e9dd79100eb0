"""A simple scene classifier over colour and layout statistics: does an image show the archetype
(or the time of day) its caption named?

It is trained on the procedural scenes themselves, so it judges mini-sd's output against the
data mini-sd learned from. The features are coarse on purpose (a 16x16 thumbnail and per-band
colour and edge statistics at 32x32), so a soft but correct picture is still recognised.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

from engine.training import landmarks
from engine.training.scenes import ARCHETYPES, TIMES, WEATHER, SceneParams, draw

LABELS = tuple(ARCHETYPES)
# What a classifier can be fitted to name: the landscape (archetype), the light (time of day),
# or the place (geography, on the landmark scenes).
TARGETS = {"archetype": LABELS, "time": tuple(TIMES), "geography": tuple(landmarks.SIGNATURES)}
BANDS = 8


def features(image: Image.Image) -> np.ndarray:
    rgb = image.convert("RGB")
    thumb = np.asarray(rgb.resize((16, 16), Image.Resampling.BOX), np.float32) / 255
    small = np.asarray(rgb.resize((32, 32), Image.Resampling.BOX), np.float32) / 255
    grey = small.mean(axis=2)
    # Vertical edges (buildings, trees, windows) and horizontal ones (shores, ridges) per band.
    dx = np.abs(np.diff(grey, axis=1))[:, :31]
    dy = np.abs(np.diff(grey, axis=0))[:31, :]
    bands = []
    for rows in np.array_split(np.arange(31), BANDS):
        band = small[rows]
        bands += [
            *band.mean(axis=(0, 1)),
            *band.std(axis=(0, 1)),
            dx[rows].mean(),
            dy[rows].mean(),
        ]
    brightness = grey.mean() + 1e-3
    # Night divides every colour by a lot: relative colour keeps the layout visible.
    relative = thumb / brightness
    return np.concatenate([thumb.ravel(), relative.ravel() * 0.1, np.asarray(bands) * 4])


@dataclass
class SceneClassifier:
    mean: np.ndarray
    std: np.ndarray
    weights: torch.Tensor
    bias: torch.Tensor
    labels: tuple[str, ...] = LABELS

    @classmethod
    def fit(
        cls,
        per_combination: int = 40,
        seed_base: int = 10_000_000,
        target: str = "archetype",
        landmarks: bool | None = None,
    ) -> SceneClassifier:
        """Softmax regression on procedural scenes of every archetype x time x weather, drawn
        from seeds far from the training data's (seed_base and up), naming `target` (a key of
        TARGETS). With `landmarks` (always for the geography target) it is fitted on the
        landmark scenes of every geography x time x weather instead."""
        labels = TARGETS[target]
        if landmarks is None:
            landmarks = target == "geography"
        if target == "archetype" and landmarks:
            raise ValueError("landmark scenes have no archetype")
        if landmarks:
            params, x = _landmark_set(per_combination, seed_base)
        else:
            params, x = _training_set(per_combination, seed_base)
        y = torch.tensor([labels.index(getattr(p, target)) for p in params])
        mean, std = x.mean(axis=0), x.std(axis=0) + 1e-6
        inputs = torch.from_numpy((x - mean) / std)
        weights = torch.zeros(x.shape[1], len(labels), requires_grad=True)
        bias = torch.zeros(len(labels), requires_grad=True)
        optimizer = torch.optim.LBFGS([weights, bias], max_iter=200, line_search_fn="strong_wolfe")

        def closure():
            optimizer.zero_grad()
            logits = inputs @ weights + bias
            loss = torch.nn.functional.cross_entropy(logits, y) + 1e-3 * weights.pow(2).sum()
            loss.backward()
            return loss

        optimizer.step(closure)
        return cls(mean, std, weights.detach(), bias.detach(), labels)

    def predict(self, images: Iterable[Image.Image]) -> list[str]:
        return [self.labels[i] for i in self.probabilities(images).argmax(axis=1).tolist()]

    def probabilities(self, images: Iterable[Image.Image]) -> np.ndarray:
        """Per image, the probability of each of `labels` (rows sum to 1)."""
        x = np.stack([features(im) for im in images])
        logits = torch.from_numpy((x - self.mean) / self.std) @ self.weights + self.bias
        return torch.softmax(logits, dim=1).numpy()

    def accuracy(self, images: Sequence[Image.Image], archetype: str) -> float:
        predicted = self.predict(images)
        return sum(p == archetype for p in predicted) / len(predicted)


@functools.cache  # drawing the scenes is the cost: each target is fitted on the same ones
def _training_set(per_combination: int, seed_base: int) -> tuple[list[SceneParams], np.ndarray]:
    params = _balanced(per_combination, seed_base)
    return params, np.stack([features(draw(p)) for p in params])


def _balanced(per_combination: int, seed_base: int) -> list[SceneParams]:
    combos = [(a, t, w) for a in ARCHETYPES for t in TIMES for w in WEATHER]
    return [
        SceneParams(*combo, seed=seed_base + i * len(combos) + k)
        for i in range(per_combination)
        for k, combo in enumerate(combos)
    ]


@functools.cache
def _landmark_set(per_combination: int, seed_base: int) -> tuple[list, np.ndarray]:
    params = landmarks.held_out(per_combination, seed_base)
    return params, np.stack([features(landmarks.draw(p)) for p in params])
