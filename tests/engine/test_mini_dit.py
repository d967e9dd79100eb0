"""mini-dit, our own trained diffusion transformer: the committed weights load as a plain SD3
pipeline, draw the scene a caption names, and our transformer recipes fire on it within their
budgets, on the schedule they name."""

from __future__ import annotations

import pytest
import torch
from diffusers import DiffusionPipeline

from engine.acceleration import RECIPES
from engine.bench import psnr
from engine.errors import ModelUnavailable
from engine.judging import scene_judge
from engine.loading import BUNDLED_DIR
from engine.presets import get_preset
from engine.requests import ImageToImage, Task, TextToImage
from engine.training.card import archetype_accuracy
from engine.training.scenes import ARCHETYPES, SceneParams, draw


def dit(prompt: str, recipe: str = "exact", seed: int = 3, **extra) -> TextToImage:
    return TextToImage(preset="mini-dit", prompt=prompt, seed=seed, recipe=recipe, **extra)


def test_committed_weights_load_with_plain_diffusers_and_draw_their_captions():
    # SD3 without T5, the documented way: the saved index stores both as absent.
    pipe = DiffusionPipeline.from_pretrained(
        BUNDLED_DIR / "mini-dit", text_encoder_3=None, tokenizer_3=None, torch_dtype=torch.float32
    )
    assert type(pipe).__name__ == "StableDiffusion3Pipeline"
    assert type(pipe.transformer).__name__ == "SD3Transformer2DModel"
    accuracy = archetype_accuracy(pipe, 20, 4.0, seeds=8, max_sequence_length=0)
    assert set(accuracy) == set(ARCHETYPES)
    assert sum(accuracy.values()) / len(accuracy) >= 0.8, accuracy


def test_the_engine_runs_it_and_its_judge_knows_its_pictures(engine):
    result = engine.generate(dit("city skyline at night, clear"))
    assert result.images[0].size == (128, 128)
    assert result.params["model_id"] == "mini-dit"
    seen = scene_judge("mini-dit").judge(result.images)[0]
    assert (seen.landscape, seen.light) == ("city skyline", "night")
    scene = draw(SceneParams("lake", "day", "clear", seed=4))
    moved = engine.generate(ImageToImage(preset="mini-dit", prompt="lake at night", image=scene))
    assert moved.images[0].size == (128, 128)


@pytest.mark.parametrize("recipe", ["balanced", "fast"])
def test_transformer_recipes_fire_within_their_budgets(engine, recipe):
    for prompt in ("snowy peaks at night", "beach and ocean during the day"):
        exact = engine.generate(dit(prompt))
        cached = engine.generate(dit(prompt, recipe))
        assert cached.skipped_blocks > 0.3
        assert psnr(cached.images, exact.images) >= RECIPES[recipe].min_psnr_db, prompt
    assert exact.skipped_blocks == 0.0


def test_a_cached_step_runs_no_block(engine):
    """Between full steps the transformer is not run: every block computes on the full steps
    only, which crowd the start of the schedule."""
    transformer = engine.pool.get("mini-dit").base.transformer
    config = RECIPES["balanced"].transformer.cache
    full = config.full_steps(20)
    assert len(full) == 7 and {0, 1} <= full and max(sorted(full)[:4]) < 10
    blocks = transformer.transformer_blocks
    runs = [0] * len(blocks)
    # The cache answers in place of the transformer's forward: a block's first norm runs only
    # when the model really computes.
    hooks = [
        block.norm1.register_forward_pre_hook(lambda m, a, i=i: runs.__setitem__(i, runs[i] + 1))
        for i, block in enumerate(blocks)
    ]
    try:
        result = engine.generate(dit("desert dunes at night", "balanced", steps=20))
    finally:
        for hook in hooks:
            hook.remove()
    assert runs == [len(full)] * len(blocks)
    assert result.skipped_blocks == pytest.approx(1 - len(full) / 20)


def test_inpainting_is_refused_in_words():
    with pytest.raises(ModelUnavailable, match="preset mini-dit cannot do inpaint; it does: "):
        get_preset("mini-dit").pipeline_class(Task.INPAINT)
