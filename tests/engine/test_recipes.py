"""Acceleration recipes on real pipelines: selectable per request, recorded, within their error
budgets against `exact`, and with no cache state carried from one request to the next."""

from __future__ import annotations

import pytest

from engine import InvalidRequest
from engine.acceleration import RECIPES
from engine.bench import psnr
from engine.requests import ImageToImage, Inpaint, TextToImage
from engine.training.scenes import SceneParams, draw
from tests.engine.conftest import centre_mask


def mini(prompt: str, recipe: str = "exact", seed: int = 3, **extra) -> TextToImage:
    return TextToImage(preset="mini-sd", prompt=prompt, seed=seed, recipe=recipe, **extra)


@pytest.mark.parametrize("recipe", ["balanced", "fast"])
def test_back_to_back_prompts_each_match_their_own_exact_output(engine, recipe):
    budget = RECIPES[recipe].min_psnr_db
    for prompt in ("snowy peaks at night", "beach and ocean during the day"):
        exact = engine.generate(mini(prompt))
        cached = engine.generate(mini(prompt, recipe))
        assert cached.params["recipe"] == recipe
        assert cached.skipped_blocks > 0.3
        assert psnr(cached.images, exact.images) >= budget, (prompt, recipe)
    assert exact.skipped_blocks == 0.0


def test_image_to_image_and_inpaint_are_cached_too(engine):
    scene = draw(SceneParams("lake", "day", "clear", seed=4))
    for make in (
        lambda r: ImageToImage(preset="mini-sd", prompt="lake at night", image=scene, recipe=r),
        lambda r: Inpaint(
            preset="mini-sd", prompt="desert", image=scene, mask=centre_mask(128, 128), recipe=r
        ),
    ):
        exact, balanced = engine.generate(make("exact")), engine.generate(make("balanced"))
        assert balanced.skipped_blocks > 0
        assert psnr(balanced.images, exact.images) >= RECIPES["balanced"].min_psnr_db


def test_a_batch_of_two_prompts_matches_each_alone(engine):
    handles = [engine.submit(mini(p, "balanced", seed=9)) for p in ("desert dunes", "city skyline")]
    together = [h.result() for h in handles]
    for prompt, result in zip(("desert dunes", "city skyline"), together, strict=True):
        alone = engine.generate(mini(prompt, "balanced", seed=9))
        assert psnr(result.images, alone.images) > 45


def test_transformer_recipes_run_on_flux(engine):
    exact = engine.generate(TextToImage(preset="tiny-flux", prompt="a shop", steps=8))
    fast = engine.generate(TextToImage(preset="tiny-flux", prompt="a shop", steps=8, recipe="fast"))
    assert fast.skipped_blocks > 0.3
    assert fast.images[0].size == exact.images[0].size


def test_an_unknown_recipe_is_refused_at_submit(engine):
    with pytest.raises(InvalidRequest, match="unknown recipe 'turbo'; available: exact, balanced"):
        engine.submit(mini("lake", "turbo"))


def test_shared_prompts_are_encoded_once(engine):
    for seed in range(3):
        engine.generate(mini("green mountains at golden hour", seed=seed))
    cache = engine.pool.get("mini-sd").encoder_caches["text_encoder"]
    before = cache.misses
    engine.generate(mini("green mountains at golden hour", seed=11))
    assert cache.misses == before  # prompt and empty negative prompt both reused
