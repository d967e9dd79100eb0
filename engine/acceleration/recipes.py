"""Named acceleration recipes: what a request selects and a variant records.

- exact: only what keeps results within float tolerance of plain diffusers.
- balanced: step caching with a small error budget (PSNR >= 30 dB against exact).
- fast: aggressive caching with predicted features (PSNR >= 24 dB against exact).

UNets take DeepCache (ours: diffusers has no UNet cache); transformers take diffusers' own
first-block cache (balanced) and TaylorSeer in its lite form, which skips whole steps and
extrapolates the output (fast). A recipe is attached for one pipeline call and
removed after it, so no cache state outlives a request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from diffusers.hooks import FirstBlockCacheConfig, TaylorSeerCacheConfig

from engine.acceleration.deep_cache import (
    CacheStats,
    DeepCacheConfig,
    apply_deep_cache,
    remove_deep_cache,
)


@dataclass(frozen=True)
class Recipe:
    name: str
    summary: str
    min_psnr_db: float | None  # error budget against `exact`; None: float tolerance only
    unet: DeepCacheConfig | None = None
    transformer: Callable[[], object] | None = None  # a diffusers cache config, made per call


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in [
        Recipe("exact", "plain diffusers numerics, batched", None),
        Recipe(
            "balanced",
            "DeepCache every 3rd step / first-block cache",
            30.0,
            unet=DeepCacheConfig(interval=3, warmup_steps=2, final_steps=1),
            transformer=lambda: FirstBlockCacheConfig(threshold=0.08),
        ),
        Recipe(
            "fast",
            "DeepCache every 5th step, extrapolated / TaylorSeer",
            24.0,
            unet=DeepCacheConfig(interval=5, warmup_steps=2, final_steps=1, extrapolate=True),
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
def applied(pipe, recipe: Recipe) -> Iterator[CacheStats]:
    """The recipe attached to `pipe` for the duration of one call; yields its block counts."""
    stats = CacheStats()
    unet, transformer = getattr(pipe, "unet", None), getattr(pipe, "transformer", None)
    if recipe.unet is not None and unet is not None:
        apply_deep_cache(unet, pipe.scheduler, recipe.unet, stats)
        try:
            yield stats
        finally:
            remove_deep_cache(unet)
    elif recipe.transformer is not None and transformer is not None:
        transformer.enable_cache(recipe.transformer())
        counted = _count_block_runs(transformer, stats)
        try:
            yield stats
        finally:
            transformer.disable_cache()
            for handle in counted:
                handle.remove()
    else:
        yield stats


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
