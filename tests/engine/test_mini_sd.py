"""mini-sd, our own trained model: the committed weights load through the normal loading path,
draw the scene a caption names, and take prompts with unknown words without failing."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from engine import InvalidRequest, Task
from engine.loading import load
from engine.requests import ImageToImage, Inpaint, TextToImage
from engine.training.card import archetype_accuracy
from engine.training.scenes import ARCHETYPES, SceneParams, draw
from tests.engine.conftest import centre_mask


@pytest.fixture(scope="module")
def mini_sd(tmp_path_factory):
    return load("mini-sd", tmp_path_factory.mktemp("models"), torch.device("cpu"))


def test_committed_weights_load_as_an_sd_pipeline(mini_sd):
    assert type(mini_sd.base).__name__ == "StableDiffusionPipeline"
    assert mini_sd.revision.startswith("bundled:") and len(mini_sd.revision) == 24
    assert mini_sd.dtype == torch.float32  # stored in float16, run in the CPU's dtype
    assert 1e6 < mini_sd.nbytes < 60e6


BAR = 0.8  # of 32 seeds, for every archetype


def test_each_archetype_is_recognised_from_its_caption(mini_sd):
    preset = mini_sd.preset
    pipe = mini_sd.pipeline(Task.TEXT_TO_IMAGE)
    accuracy = archetype_accuracy(pipe, preset.steps, preset.guidance, seeds=32)
    assert set(accuracy) == set(ARCHETYPES)
    assert all(accuracy[a] >= BAR for a in ARCHETYPES), accuracy


def test_image_tasks_and_unknown_words(engine):
    scene = draw(SceneParams("beach", "day", "clear", seed=3))
    handle = engine.submit(
        TextToImage(preset="mini-sd", prompt="Sunny BEACH and ocean, with a dog!", seed=5)
    )
    events = list(handle.events())
    result = handle.result()
    assert result.warnings == ("mini-sd does not know 'sunny', 'a', 'dog'; left out of the prompt",)
    assert [e.message for e in events if e.kind == "warning"] == list(result.warnings)
    assert result.params["prompt"] == "beach and ocean with"
    # The words dropped change nothing: the same picture as the prompt without them.
    clean = engine.generate(TextToImage(preset="mini-sd", prompt="beach and ocean with", seed=5))
    assert clean.warnings == ()
    assert clean.images[0].tobytes() == result.images[0].tobytes()
    assert result.images[0].size == (128, 128)

    moved = engine.generate(
        ImageToImage(preset="mini-sd", prompt="beach and ocean", image=scene, strength=0.6)
    )
    before, after = thumbnail(scene), thumbnail(moved.images[0])
    assert np.abs(after - before).mean() > 1  # redrawn...
    assert np.corrcoef(before.ravel(), after.ravel())[0, 1] > 0.9  # ...keeping the layout

    mask = centre_mask(128, 128)
    filled = engine.generate(
        Inpaint(preset="mini-sd", prompt="snowy peaks at night", image=scene, mask=mask)
    )
    out, src = np.asarray(filled.images[0], np.float64), np.asarray(scene, np.float64)
    keep = np.asarray(mask) == 0
    changed = np.abs(out - src).mean(axis=2)
    assert changed[~keep].mean() > 3 * changed[keep].mean()


def thumbnail(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L").resize((16, 16), Image.Resampling.BOX), np.float64)


def test_a_prompt_with_no_known_word_is_refused(engine):
    handle = engine.submit(TextToImage(preset="mini-sd", prompt="a red sports car"))
    with pytest.raises(InvalidRequest, match="knows none of the words in the prompt"):
        handle.result()


def test_negative_prompt_words_are_filtered_too(engine):
    result = engine.generate(
        TextToImage(preset="mini-sd", prompt="pine forest", negative_prompt="blurry night")
    )
    assert result.params["negative_prompt"] == "night"
    assert result.warnings == ("mini-sd does not know 'blurry'; left out of the negative prompt",)
    assert isinstance(result.images[0], Image.Image)
