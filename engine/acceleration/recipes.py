"""Named acceleration recipes: what a request selects and a variant records.

- exact: only what keeps results within float tolerance of plain diffusers.
- balanced: step caching and guidance on most steps (engine.acceleration.guidance), with a
  small error budget (PSNR >= 30 dB against exact).
- fast: long-interval caching, guidance on the first steps only (PSNR >= 24 dB against exact).

UNets take DeepCache (ours: diffusers has no UNet cache); transformers take diffusers' own
first-block cache (balanced) and TaylorSeer in its lite form, which skips whole steps and
extrapolates the output (fast). A recipe is attached for one pipeline call and removed after
it, so no cache state outlives a request.

Our Triton kernels are not in these recipes: swapped into SD 1.5 and Flux-width models on an
H200 they measured level or slower at interactive batch sizes (docs/benchmarks.md), so
`engine.acceleration.kernel_swaps` is there to measure them, not yet to serve.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from diffusers.hooks import FirstBlockCacheConfig, TaylorSeerCacheConfig

from engine.acceleration.deep_cache import (
    CacheStats,
    DeepCacheConfig,
    apply_deep_cache,
    remove_deep_cache,
)
from engine.acceleration.guidance import GuidanceInterval


@dataclass(frozen=True)
class Recipe:
    name: str
    summary: str
    min_psnr_db: float | None  # error budget against `exact`; None: float tolerance only
    unet: DeepCacheConfig | None = None
    transformer: Callable[[], object] | None = None  # a diffusers cache config, made per call
    guidance: GuidanceInterval | None = None  # classifier-free guidance on early steps only


@dataclass
class RecipeRun:
    """A recipe attached for one call: its block counts, and the part of it that acts from the
    pipeline's step-end callback (which must be given `tensor_inputs`)."""

    stats: CacheStats
    guidance: GuidanceInterval | None = None
    tensor_inputs: list[str] = field(default_factory=list)

    def step_end(self, pipe, step: int, callback_kwargs: dict[str, Any]) -> dict[str, Any]:
        if self.guidance is not None and self.tensor_inputs:
            return self.guidance.step_end(pipe, step, callback_kwargs)
        return callback_kwargs


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in [
        Recipe("exact", "plain diffusers numerics, batched", None),
        Recipe(
            "balanced",
            "DeepCache every 6th step, guidance on the first 70 % of steps / first-block cache",
            30.0,
            # Tuned on mini-sd on prompts and seeds the bench holds out (docs/benchmarks.md):
            # a cached step runs the last up layer alone, and a third warm-up step gave 2 dB
            # for the same count of full steps.
            unet=DeepCacheConfig(interval=6, warmup_steps=3, final_steps=1, fresh="layer"),
            guidance=GuidanceInterval(0.7),
            transformer=lambda: FirstBlockCacheConfig(threshold=0.08),
        ),
        Recipe(
            "fast",
            "DeepCache every 10th step, guidance on the first 15 % of steps / TaylorSeer",
            24.0,
            # Measured on mini-sd (docs/benchmarks.md): extrapolating the deep features or whole
            # UNet outputs lost more fidelity than a longer plain interval, so neither is used.
            unet=DeepCacheConfig(interval=10, warmup_steps=2, final_steps=1, fresh="layer"),
            guidance=GuidanceInterval(0.15),
            transformer=lambda: TaylorSeerCacheConfig(
                cache_interval=3,
                disable_cache_before_step=2,
                max_order=1,
                taylor_factors_dtype=torch.float32,
                use_lite_mode=True,  # skip whole blocks; predict only the final projection
            ),
        ),
    ]
}


def get_recipe(name: str) -> Recipe:
    try:
        return RECIPES[name]
    except KeyError:
        raise ValueError(f"unknown recipe {name!r}; available: {', '.join(RECIPES)}") from None


@contextmanager
def applied(pipe, recipe: Recipe) -> Iterator[RecipeRun]:
    """The recipe attached to `pipe` for the duration of one call."""
    stats = CacheStats()
    run = RecipeRun(stats, recipe.guidance)
    if recipe.guidance is not None:
        run.tensor_inputs = recipe.guidance.tensor_inputs(pipe)
    unet, transformer = getattr(pipe, "unet", None), getattr(pipe, "transformer", None)
    with ExitStack() as stack:
        if recipe.unet is not None and unet is not None:
            apply_deep_cache(unet, pipe.scheduler, recipe.unet, stats)
            stack.callback(remove_deep_cache, unet)
        elif recipe.transformer is not None and transformer is not None:
            transformer.enable_cache(recipe.transformer())
            stack.callback(transformer.disable_cache)
            for handle in _count_block_runs(transformer, stats):
                stack.callback(handle.remove)
        yield run


# Lists of transformer blocks in the diffusers models we run (Flux, Wan, LTX).
BLOCK_LISTS = ("transformer_blocks", "single_transformer_blocks", "blocks")


def _count_block_runs(transformer, stats: CacheStats) -> list:
    """Count block evaluations that really ran, and those a cache hook answered instead.

    Cache hooks replace a block's forward, so hooks on the block itself fire either way; the
    block's first normalisation layer runs only when the block really computes."""
    handles = []
    for name in BLOCK_LISTS:
        for block in getattr(transformer, name, None) or []:
            inner = next(m for n, m in block.named_children() if n.startswith("norm"))

            handles += [
                block.register_forward_pre_hook(lambda m, a: _tally(stats, skipped=1)),
                inner.register_forward_pre_hook(lambda m, a: _tally(stats, skipped=-1, computed=1)),
            ]
    return handles


def _tally(stats: CacheStats, skipped: int = 0, computed: int = 0) -> None:
    stats.skipped += skipped
    stats.computed += computed
