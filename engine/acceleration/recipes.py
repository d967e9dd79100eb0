"""Named acceleration recipes: what a request selects and a variant records.

- exact: only what keeps results within float tolerance of plain diffusers.
- balanced: step caching (and, on UNets, guidance on most steps: engine.acceleration.guidance),
  with a small error budget (PSNR >= 30 dB against exact).
- fast: long-interval caching (and, on UNets, guidance on the first steps only), PSNR >= 24 dB
  against exact.

UNets take DeepCache (ours: diffusers has no UNet cache; Ma et al. 2024, branch 0). Transformers
take our step cache (engine.acceleration.step_cache): between full steps, crowded at the start
of the schedule, the last full step's model output is reused whole, or late in the schedule
forecast from the last two. A recipe is attached for
one pipeline call and removed after it, so no cache state outlives a request.

Our Triton kernels are not in these recipes: inside SD 1.5 and Flux-width models on an H200
the fused norms pay only in a CUDA graph (+3-6 %); eager they lose and under torch.compile
Inductor fuses the same (docs/benchmarks.md). So they serve inside the engine's CUDA graphs
(`engine.acceleration.cuda_graphs`, a setting of the engine, not of a recipe).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from engine.acceleration.deep_cache import (
    CacheStats,
    DeepCacheConfig,
    apply_deep_cache,
    remove_deep_cache,
)
from engine.acceleration.guidance import GuidanceInterval
from engine.acceleration.step_cache import StepCacheConfig, apply_step_cache, remove_step_cache


@dataclass(frozen=True)
class Denoising:
    """What a recipe does to one kind of denoiser: its step cache, and classifier-free
    guidance on the early steps only."""

    cache: DeepCacheConfig | StepCacheConfig
    guidance: GuidanceInterval | None = None


@dataclass(frozen=True)
class Recipe:
    name: str
    summary: str
    min_psnr_db: float | None  # error budget against `exact`; None: float tolerance only
    unet: Denoising | None = None
    transformer: Denoising | None = None

    def for_pipe(self, pipe) -> Denoising | None:
        if getattr(pipe, "unet", None) is not None:
            return self.unet
        return self.transformer if getattr(pipe, "transformer", None) is not None else None


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
            "DeepCache every 6th step, guidance on the first 70 % of steps / a third of the "
            "transformer steps in full, crowded at the start",
            30.0,
            # Tuned on mini-sd on prompts and seeds apart from the bench's held-out ones
            # (docs/benchmarks.md): a cached step runs the last up layer alone, and a third
            # warm-up step gave 2 dB for the same count of full steps.
            unet=Denoising(
                DeepCacheConfig(interval=6, warmup_steps=3, final_steps=1, fresh="layer"),
                GuidanceInterval(0.7),
            ),
            # Tuned on mini-dit on prompts and seeds apart from the bench's held-out ones
            # (docs/benchmarks.md): 7 of 20 steps; guidance on fewer steps lost 2-4 dB for
            # under a tenth of the time.
            transformer=Denoising(StepCacheConfig(share=0.35)),
        ),
        Recipe(
            "fast",
            "DeepCache every 10th step, guidance on the first 15 % of steps / a quarter of the "
            "transformer steps in full, crowded at the start",
            24.0,
            # Measured on mini-sd (docs/benchmarks.md): extrapolating the deep features or whole
            # UNet outputs lost more fidelity than a longer plain interval, so neither is used.
            unet=Denoising(
                DeepCacheConfig(interval=10, warmup_steps=2, final_steps=1, fresh="layer"),
                GuidanceInterval(0.15),
            ),
            transformer=Denoising(StepCacheConfig(share=0.25)),
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
    plan = recipe.for_pipe(pipe)
    if plan is None:
        yield RecipeRun(stats)
        return
    run = RecipeRun(stats, plan.guidance)
    if plan.guidance is not None:
        run.tensor_inputs = plan.guidance.tensor_inputs(pipe)
    with ExitStack() as stack:
        # Removal is registered first: an attach that fails part-way leaves no hook behind.
        if isinstance(plan.cache, DeepCacheConfig):
            stack.callback(remove_deep_cache, pipe.unet)
            apply_deep_cache(pipe.unet, pipe.scheduler, plan.cache, stats)
        else:
            stack.callback(remove_step_cache, pipe.transformer)
            apply_step_cache(pipe.transformer, pipe.scheduler, plan.cache, stats)
        yield run
