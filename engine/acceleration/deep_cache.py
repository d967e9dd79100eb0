"""Deep-feature caching for UNets, applied with diffusers hooks; the model code is not touched.

A UNet's deep levels (everything below the full-resolution level) change slowly from one
denoising step to the next, while the full-resolution level carries the fine detail. DeepCache
computes the whole UNet every `interval` steps and, on the steps between, only the
full-resolution level (`fresh="level"`), or only its last up layer (`fresh="layer"`, the paper's
branch 0: the input convolution's features joined to the cached ones), feeding it the deep
path's last output. With `extrapolate`, that output is
predicted from the last two full steps (a first-order Taylor step) instead of copied, which keeps
longer intervals close to the uncached trajectory. With `predict_every`, some of the steps
between skip the UNet altogether: its output is extrapolated from the last two it computed,
as TaylorSeer does for whole transformers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from diffusers.hooks import HookRegistry, ModelHook
from diffusers.models.unets.unet_2d_condition import UNet2DConditionOutput

from engine.acceleration.schedule import StepClock, extrapolate, last_rows

HOOK = "spotforge_deep_cache"


@dataclass(frozen=True)
class DeepCacheConfig:
    """DeepCache (Ma, Fang and Wang, CVPR 2024, https://arxiv.org/abs/2312.00858), uniform
    schedule, caching below the outermost UNet level.

    interval: one full UNet evaluation every `interval` steps (1 = no caching).
    warmup_steps: first steps always computed in full (the layout forms there).
    final_steps: last steps always computed in full (fine detail settles there).
    extrapolate: predict the cached features linearly from the last two full steps.
    predict_every: of the steps between full ones, every `predict_every`-th runs no UNet at
        all; its output is extrapolated linearly from the last two UNet outputs (0: never).
    fresh: what a cached step computes: "level", the whole outermost level, or "layer", only
        the last layer of its up block (a quarter of the cost on mini-sd, a little less
        faithful).
    """

    interval: int = 3
    warmup_steps: int = 2
    final_steps: int = 1
    extrapolate: bool = False
    predict_every: int = 0
    fresh: str = "level"

    def __post_init__(self) -> None:
        if self.fresh not in ("level", "layer"):
            raise ValueError(f"fresh must be 'level' or 'layer', not {self.fresh!r}")


@dataclass
class CacheStats:
    """Denoiser block evaluations: how many ran and how many were reused or predicted."""

    computed: int = 0
    skipped: int = 0

    @property
    def skipped_fraction(self) -> float:
        total = self.computed + self.skipped
        return self.skipped / total if total else 0.0

    def add(self, other: CacheStats) -> None:
        self.computed += other.computed
        self.skipped += other.skipped


@dataclass
class _State:
    config: DeepCacheConfig
    clock: StepClock
    stats: CacheStats
    rows: int = 0  # batch rows of this call: halves when guidance stops (acceleration.guidance)
    full: bool = True
    predicted: bool = False  # this step runs no UNet
    # (step, output of the cached module the fresh part reads) at the last two full steps
    history: list[tuple[int, torch.Tensor]] = field(default_factory=list)
    # (step, UNet output) at the last two steps that ran the UNet
    outputs: list[tuple[int, torch.Tensor]] = field(default_factory=list)

    @property
    def step(self) -> int:
        return self.clock.step

    def begin_step(self, timestep) -> None:
        """Place this UNet call on the schedule and decide whether it runs in full."""
        self.clock.place(timestep)
        c = self.config
        self.full = self.clock.is_full(c.interval, c.warmup_steps, c.final_steps)
        self.predicted = (
            not self.full
            and c.predict_every > 0
            and self.clock.since_full(c.interval, c.warmup_steps) % c.predict_every == 0
            and len(self.outputs) == 2
        )


class _LeaderHook(ModelHook):
    """On the UNet itself: every call is one denoising step."""

    def __init__(self, state: _State, blocks: int):
        super().__init__()
        self.state = state
        self.blocks = blocks

    def new_forward(self, module, *args, **kwargs):
        state = self.state
        state.begin_step(kwargs["timestep"] if "timestep" in kwargs else args[1])
        state.rows = (kwargs["sample"] if "sample" in kwargs else args[0]).shape[0]
        if state.predicted:
            state.stats.skipped += self.blocks
            sample = extrapolate(state.outputs, state.step, state.rows)
            return UNet2DConditionOutput(sample) if kwargs.get("return_dict", True) else (sample,)
        output = self.fn_ref.original_forward(*args, **kwargs)
        sample = output[0] if isinstance(output, tuple) else output.sample
        state.outputs = [*state.outputs[-1:], (state.step, sample)]
        return output


class _DeepBlockHook(ModelHook):
    """On each cached block or layer: run and remember, or hand back the memory.

    Only one cached output reaches the fresh part; the others' stale outputs are passed along
    to modules that are skipped too, so they cost nothing."""

    def __init__(self, state: _State, feeds_fresh: bool):
        super().__init__()
        self.state = state
        self.feeds_fresh = feeds_fresh
        self.last = None

    def new_forward(self, module, *args, **kwargs):
        state = self.state
        if state.full or self.last is None:
            self.last = self.fn_ref.original_forward(*args, **kwargs)
            state.stats.computed += 1
            if self.feeds_fresh:
                state.history = [*state.history[-1:], (state.step, self.last)]
            return self.last
        state.stats.skipped += 1
        if self.feeds_fresh and state.config.extrapolate and len(state.history) == 2:
            return extrapolate(state.history, state.step, state.rows)
        return last_rows(self.last, state.rows)


class CountHook(ModelHook):
    """On the modules that always run: counted for the skipped fraction."""

    def __init__(self, stats: CacheStats):
        super().__init__()
        self.stats = stats

    def pre_forward(self, module, *args, **kwargs):
        self.stats.computed += 1
        return args, kwargs


def apply_deep_cache(unet, scheduler, config: DeepCacheConfig, stats: CacheStats) -> None:
    """Attach DeepCache to a `UNet2DConditionModel` for one pipeline call; `remove_deep_cache`
    afterwards. `scheduler` is the pipeline's: its timesteps place each call on the schedule."""
    state = _State(config, StepClock(scheduler), stats)
    cached, fresh = _split(unet, config.fresh)
    _register(unet, _LeaderHook(state, blocks=len(cached) + len(fresh)))
    for module in cached:
        _register(module, _DeepBlockHook(state, feeds_fresh=module is cached[-1]))
    for module in fresh:
        _register(module, CountHook(stats))


def _split(unet, fresh: str) -> tuple[list[torch.nn.Module], list[torch.nn.Module]]:
    """The modules a cached step reuses, in forward order (the last one feeds the fresh
    part), and the modules it computes."""
    deep = [*unet.down_blocks[1:], unet.mid_block, *unet.up_blocks[:-1]]
    if fresh == "level":
        return deep, [unet.down_blocks[0], unet.up_blocks[-1]]
    # An up block runs resnet i then attention i; its last resnet reads the input convolution's
    # features (the first skip connection), so the whole down path can be reused.
    outer = unet.up_blocks[-1]
    if getattr(outer, "attentions", None):
        layers = [m for pair in zip(outer.resnets, outer.attentions, strict=True) for m in pair]
        last = 2
    else:
        layers, last = list(outer.resnets), 1
    return [unet.down_blocks[0], *deep, *layers[:-last]], layers[-last:]


def remove_deep_cache(unet) -> None:
    HookRegistry.check_if_exists_or_initialize(unet).remove_hook(HOOK, recurse=True)


def _register(module: torch.nn.Module, hook: ModelHook) -> None:
    HookRegistry.check_if_exists_or_initialize(module).register_hook(hook, HOOK)
