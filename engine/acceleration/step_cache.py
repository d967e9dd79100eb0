"""Step caching for diffusion transformers, applied with a diffusers hook; the model code is not
touched.

On a cached step the transformer does not run. Until the last full step is at or past the
schedule's middle, the pipeline gets that step's output again and the sampler moves on with it
(the noise prediction reused, as AdaptiveDiffusion does: Ye et al. 2024, "Training-Free
Adaptive Diffusion with Bounded Difference Approximation Strategy"; for a flow-matching model,
the velocity); from there on, where the output changes smoothly, it is forecast from the last
two full steps (TaylorSeer's first-order term: Liu et al. 2025, "From Reusing to Forecasting:
Accelerating Diffusion Models with TaylorSeers"), damped to half the way, so at most half of
their interval ahead. Full steps are dense where the picture forms and sparse where it
settles: the k-th of n sits (k / (n - 1)) ** power of the way to the last full step, the shape
of the per-step error curves MagCache calibrates (Ma et al. 2025, "MagCache: Fast Video
Generation with Magnitude-Aware Cache"), fixed in advance, so it needs no calibration on a new
model and costs the same on every prompt.

The last full step is not the schedule's last step but share ** 0.25 of the way (fast's 5 of 20
end at step 13, balanced's 7 at step 15). A reused (or gently forecast) output keeps the
sampler's estimate of the clean picture at or near where the last full step put it (a
first-order sampler moves the latents along the velocity or noise it is given, which leaves
the estimate unchanged when that is reused), so the steps after the last full one change the
picture little, and a full step spent there leaves a longer gap where the picture is still
forming. On mini-dit's tuning prompts, with reuse, this gave 1-4 dB more, in mean and worst
case, at every share from a quarter to four fifths (docs/benchmarks.md).

The forecast, on mini-dit's tuning prompts (docs/benchmarks.md): undamped, or from the start,
it lost up to 10 dB in mean (18 in worst case) where full steps are sparse early (a quarter of
the steps); damped and from the middle on it gained 0.3-3.9 dB in mean and 0.6-4.0 dB in worst
case at every share from a quarter to four fifths, and 0.6-3.7 dB in mean on the held-out bench.
Tried before at the same count of full steps: reusing the block stack's residual on the fresh
input (MagCache, FORA, TeaCache) gave the same fidelity or a little less, at a cost per cached
step; a Taylor forecast of that residual and uniform schedules lost 1-6 dB; choosing full steps
at run time from the input's change (EasyCache) and reusing the unconditional branch alone
(FasterCache) did no better.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from diffusers.hooks import HookRegistry, ModelHook

from engine.acceleration.deep_cache import CacheStats
from engine.acceleration.schedule import StepClock, extrapolate, last_rows
from engine.patch_shift import is_shifted

HOOK = "spotforge_step_cache"
# Lists of transformer blocks in the diffusers models we run (SD3, Flux, Wan, LTX), in the
# order the model calls them.
BLOCK_LISTS = ("transformer_blocks", "single_transformer_blocks", "blocks")
# Once the last full step is at or past the schedule's middle, a cached step's output is
# forecast from the last two full steps (TaylorSeer's first-order term, by timestep), half of
# the way and at most half of their interval ahead; before, where the picture is still
# forming, it is reused.
FORECAST_DAMPING = 0.5


@dataclass(frozen=True)
class StepCacheConfig:
    share: float  # of the steps, computed in full (the first among them)
    # > 1: full steps crowd the start of the schedule. 2 rather than mini-dit's 1.75 since
    # landmark-dit: +2.6 dB at a quarter of the steps there, +/- 0.4 dB elsewhere on both
    # models' tuning prompts (docs/benchmarks.md).
    power: float = 2.0
    # Shorter schedules run every step: a few-step (distilled) model such as FLUX.1 [schnell]
    # remakes the picture at each of its 4 steps, so no step's output stands in for another's.
    min_steps: int = 10

    def __post_init__(self):
        if not (0 < self.share <= 1 and self.power > 0 and self.min_steps >= 2):
            raise ValueError(f"step cache needs 0 < share <= 1, power > 0, min_steps >= 2: {self}")

    def full_steps(self, total: int) -> set[int]:
        if total < self.min_steps:
            return set(range(total))
        # Rounded first so that a share such as 0.35 of 20 is 7 steps, not 8 by float error.
        count = min(total, max(2, math.ceil(round(self.share * total, 9))))
        last = max(count - 1, round((total - 1) * self.share**0.25))
        steps = [0]
        for k in range(1, count):  # where rounding would place two on one step, the next
            at = round(last * (k / (count - 1)) ** self.power)
            steps.append(min(max(at, steps[-1] + 1), last - (count - 1 - k)))
        return set(steps)


class _StepCacheHook(ModelHook):
    """On the transformer: each call is one step's (or one guidance branch's) evaluation."""

    def __init__(
        self, config: StepCacheConfig, clock: StepClock, stats: CacheStats, blocks: int,
        grid_period: int,
    ):  # fmt: skip
        super().__init__()
        self.config, self.clock, self.stats, self.blocks = config, clock, stats, blocks
        self.grid_period = grid_period  # computed steps from one patch grid to the same again
        self.full: set[int] | None = None
        self.last_step: int | None = None
        self.branch = 0
        # Per guidance branch: (step, output) of its last computed steps (full ones, or a
        # cached one computed for want of an output), back to the last two on one grid.
        # Pipelines that run the two branches as separate calls (Wan, Flux's true CFG) call
        # twice per step.
        self.outputs: dict[int, list[tuple[int, object]]] = {}

    def new_forward(self, module, *args, **kwargs):
        step = self.clock.place(kwargs["timestep"])
        self.branch = self.branch + 1 if step == self.last_step else 0
        self.last_step = step
        if self.full is None:
            self.full = self.config.full_steps(self.clock.total)
        done = self.outputs.setdefault(self.branch, [])
        if step in self.full or not done:
            output = self.fn_ref.original_forward(*args, **kwargs)
            done[:] = [*done[-self.grid_period :], (step, output)]
            self.stats.computed += self.blocks
            return output
        self.stats.skipped += self.blocks
        rows = kwargs["hidden_states"].shape[0]
        if len(done) <= self.grid_period or done[-1][0] < (self.clock.total - 1) // 2:
            return _fields(lambda last: last_rows(last, rows), done[-1][1])
        (s0, before), (s1, last) = done[-1 - self.grid_period], done[-1]
        times = self.clock.times
        return _fields(
            lambda a, b: extrapolate(
                [(times[s0], a), (times[s1], b)], times[step], rows,
                damping=FORECAST_DAMPING, most=1.0,
            ),
            before,
            last,
        )  # fmt: skip


def _fields(fn, *outputs):
    """`fn` over the tensors of one or more denoiser outputs alike (tuples or output classes)."""
    first = outputs[0]
    if isinstance(first, tuple):
        return tuple(fn(*values) for values in zip(*outputs, strict=True))
    return type(first)(**{name: fn(*(o[name] for o in outputs)) for name in first})


def blocks_of(transformer) -> list[torch.nn.Module]:
    return [b for name in BLOCK_LISTS for b in getattr(transformer, name, None) or []]


def apply_step_cache(transformer, scheduler, config: StepCacheConfig, stats: CacheStats) -> None:
    """Attach the step cache for one pipeline call; `remove_step_cache` afterwards. Under
    shifted patches (`engine.patch_shift`) consecutive full steps are drawn on alternate patch
    grids, so their difference is largely the grid's, not the picture's: the forecast takes
    the last two full steps on the same grid (landmark-dit's `balanced` on its tuning
    captions: 36.5 dB mean, against 36.0 reusing and 34.5 forecasting across grids;
    docs/benchmarks.md)."""
    grid_period = 2 if is_shifted(transformer) else 1
    hook = _StepCacheHook(
        config, StepClock(scheduler), stats, len(blocks_of(transformer)), grid_period
    )
    HookRegistry.check_if_exists_or_initialize(transformer).register_hook(hook, HOOK)


def remove_step_cache(transformer) -> None:
    HookRegistry.check_if_exists_or_initialize(transformer).remove_hook(HOOK, recurse=False)
