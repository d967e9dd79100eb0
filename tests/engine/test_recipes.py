"""Acceleration recipes on real pipelines: selectable per request, recorded, within their error
budgets against `exact`, and with no cache state carried from one request to the next."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from diffusers import FlowMatchHeunDiscreteScheduler

from engine import InvalidRequest
from engine.acceleration import RECIPES, CacheStats
from engine.acceleration.step_cache import StepCacheConfig, apply_step_cache, remove_step_cache
from engine.bench import psnr
from engine.requests import ImageToImage, Inpaint, Task, TextToImage
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


@pytest.mark.parametrize("recipe", ["balanced", "fast"])
def test_image_to_image_and_inpaint_are_cached_too(engine, recipe):
    scene = draw(SceneParams("lake", "day", "clear", seed=4))
    for make in (
        lambda r: ImageToImage(preset="mini-sd", prompt="lake at night", image=scene, recipe=r),
        lambda r: Inpaint(
            preset="mini-sd", prompt="desert", image=scene, mask=centre_mask(128, 128), recipe=r
        ),
    ):
        exact, cached = engine.generate(make("exact")), engine.generate(make(recipe))
        assert cached.skipped_blocks > 0
        assert psnr(cached.images, exact.images) >= RECIPES[recipe].min_psnr_db


@pytest.mark.parametrize("recipe", ["balanced", "fast"])
def test_a_batch_of_two_prompts_matches_each_alone(engine, recipe):
    handles = [engine.submit(mini(p, recipe, seed=9)) for p in ("desert dunes", "city skyline")]
    together = [h.result() for h in handles]
    for prompt, result in zip(("desert dunes", "city skyline"), together, strict=True):
        alone = engine.generate(mini(prompt, recipe, seed=9))
        assert psnr(result.images, alone.images) > 45


def unet_batch_rows(engine, request) -> tuple[list[int], object]:
    unet = engine.pool.get("mini-sd").base.unet
    rows: list[int] = []
    hook = unet.register_forward_pre_hook(lambda m, args: rows.append(args[0].shape[0]))
    try:
        return rows, engine.generate(request)
    finally:
        hook.remove()


def test_fast_guides_only_the_first_steps(engine):
    rows, fast = unet_batch_rows(engine, mini("mountain lake at night", "fast", steps=20))
    assert rows == [2] * 3 + [1] * 17  # [uncond, cond] rows, then the conditional row alone
    exact = engine.generate(mini("mountain lake at night", steps=20))
    assert psnr(fast.images, exact.images) >= RECIPES["fast"].min_psnr_db
    # The cut lives in one call, not in the shared pipeline: the next call guides throughout.
    rows, _ = unet_batch_rows(engine, mini("desert dunes", "balanced", steps=10))
    assert rows == [2] * 7 + [1] * 3


def test_guidance_is_cut_only_where_pipelines_double_their_tensors(engine):
    interval = RECIPES["fast"].unet.guidance
    mini_sd = engine.pool.get("mini-sd")
    for task in (Task.TEXT_TO_IMAGE, Task.IMAGE_TO_IMAGE, Task.INPAINT):
        assert "prompt_embeds" in interval.tensor_inputs(mini_sd.pipeline(task))
    assert "mask" in interval.tensor_inputs(mini_sd.pipeline(Task.INPAINT))
    # Wan runs its two branches as separate calls: nothing to halve, so no cut.
    assert interval.tensor_inputs(engine.pool.get("tiny-wan").pipeline(Task.TEXT_TO_VIDEO)) == []


def test_transformer_recipes_run_on_flux(engine):
    """Flux (double- and single-stream blocks): the cached steps run none of them."""
    exact, fast = (
        engine.generate(TextToImage(preset="tiny-flux", prompt="a shop", steps=10, recipe=r))
        for r in ("exact", "fast")
    )
    full = RECIPES["fast"].transformer.cache.full_steps(10)
    assert 0 in full and len(full) < 10
    assert fast.skipped_blocks == pytest.approx((10 - len(full)) / 10)
    assert fast.images[0].size == exact.images[0].size
    assert psnr(fast.images, exact.images) < math.inf
    # At a few-step model's own 4 steps (FLUX.1 [schnell]'s) every step is computed.
    exact, fast = (
        engine.generate(TextToImage(preset="tiny-flux", prompt="a shop", steps=4, recipe=r))
        for r in ("exact", "fast")
    )
    assert fast.skipped_blocks == 0 and psnr(fast.images, exact.images) == math.inf


def test_a_scheduler_that_repeats_its_timesteps_still_caches(engine):
    """Heun's second-order schedule gives each timestep twice, so two full steps can share one:
    with no slope to forecast by, the last full output stands in (it divided by zero once)."""
    base = engine.pool.get("mini-dit").pipeline(Task.TEXT_TO_IMAGE)
    heun = FlowMatchHeunDiscreteScheduler.from_config(base.scheduler.config)
    pipe = type(base)(**{**base.components, "scheduler": heun})
    pipe.set_progress_bar_config(disable=True)
    stats = CacheStats()
    apply_step_cache(pipe.transformer, heun, StepCacheConfig(share=0.8), stats)
    try:
        image = pipe("snowy peaks", num_inference_steps=14, height=64, width=64,
                     max_sequence_length=0, output_type="np",
                     generator=torch.Generator().manual_seed(2)).images  # fmt: skip
    finally:
        remove_step_cache(pipe.transformer)
    timesteps = heun.timesteps.tolist()
    assert len(set(timesteps)) < len(timesteps)  # the repeats the test is about
    assert stats.skipped > 0 and np.isfinite(image).all() and image.std() > 0.01


def test_step_cache_schedules_crowd_the_start_and_reject_nonsense():
    balanced, fast = (RECIPES[r].transformer.cache for r in ("balanced", "fast"))
    # 0.35 x 20 is 7, not 8; the last full step is share ** 0.25 of the way.
    assert sorted(balanced.full_steps(20)) == [0, 1, 2, 4, 7, 10, 15]
    assert sorted(fast.full_steps(20)) == [0, 1, 3, 7, 13]
    assert max(StepCacheConfig(share=1.0).full_steps(20)) == 19
    assert balanced.full_steps(8) == fast.full_steps(8) == set(range(8))
    for bad in (dict(share=0), dict(share=0.3, power=0), dict(share=1.5)):
        with pytest.raises(ValueError, match="step cache needs"):
            StepCacheConfig(**bad)


def test_a_model_called_twice_a_step_keeps_each_guidance_branch_apart(engine):
    """Wan runs its conditional and unconditional branches as two calls at the same step: on a
    cached step each call gets its own branch's output, reused or forecast (mixed, guidance
    would vanish)."""
    pipe = engine.pool.get("tiny-wan").pipeline(Task.TEXT_TO_VIDEO)
    config = StepCacheConfig(share=0.5, power=1.0, min_steps=6)
    assert config.full_steps(6) == {0, 2, 4}
    kwargs = dict(prompt="a shop", num_inference_steps=6, num_frames=5, height=64, width=64,
                  output_type="np")  # fmt: skip
    exact = pipe(**kwargs, generator=torch.Generator().manual_seed(1)).frames
    stats = CacheStats()
    outputs: list[torch.Tensor] = []
    hook = pipe.transformer.register_forward_hook(lambda m, a, out: outputs.append(out[0]))
    apply_step_cache(pipe.transformer, pipe.scheduler, config, stats)
    try:
        cached = pipe(**kwargs, generator=torch.Generator().manual_seed(1)).frames
    finally:
        remove_step_cache(pipe.transformer)
        hook.remove()
    # 6 steps x 2 branches: steps 1, 3 and 5 cached, 2 blocks each call.
    blocks = len(pipe.transformer.blocks)
    assert (stats.skipped, stats.computed) == (6 * blocks, 6 * blocks)
    by_step = [outputs[2 * s : 2 * s + 2] for s in range(6)]
    times = [float(t) for t in pipe.scheduler.timesteps]
    for branch in (0, 1):
        assert by_step[1][branch] is by_step[0][branch]  # one full step yet: reused
        # From the second half on, forecast from this branch's own last two full steps.
        for step, (s0, s1) in ((3, (0, 2)), (5, (2, 4))):
            before, last = by_step[s0][branch], by_step[s1][branch]
            reach = 0.5 * min((times[step] - times[s1]) / (times[s1] - times[s0]), 1.0)
            torch.testing.assert_close(by_step[step][branch], last + (last - before) * reach)
    assert not torch.equal(by_step[1][0], by_step[1][1])
    assert cached.shape == exact.shape and not np.array_equal(cached, exact)
    assert np.abs(cached - exact).max() < 0.5


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


def test_a_cached_step_runs_only_the_last_up_layer(engine):
    """`fresh="layer"`: between full steps the whole down path and every up layer but the
    last are reused; the last one reads the input convolution's features joined to them."""
    unet = engine.pool.get("mini-sd").base.unet
    config = RECIPES["balanced"].unet.cache
    assert config.fresh == "layer"
    runs = {"down": 0, "last up layer": 0}
    # A cache hook answers in place of a block's forward, so what runs inside it is watched.
    watched = {
        "down": unet.down_blocks[0].resnets[0].conv1,
        "last up layer": unet.up_blocks[-1].resnets[-1].conv1,
    }
    hooks = [
        module.register_forward_pre_hook(lambda m, a, name=name: _tick(runs, name))
        for name, module in watched.items()
    ]
    try:
        engine.generate(mini("desert dunes at night", "balanced", steps=20))
    finally:
        for hook in hooks:
            hook.remove()
    full = [s for s in range(20) if s < config.warmup_steps or s >= 20 - config.final_steps
            or (s - config.warmup_steps) % config.interval == 0]  # fmt: skip
    assert runs == {"down": len(full), "last up layer": 20}


def _tick(runs: dict[str, int], name: str) -> None:
    runs[name] += 1
