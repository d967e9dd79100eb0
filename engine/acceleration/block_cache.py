"""Block caching for diffusion transformers, applied with diffusers hooks; the model code is not
touched.

A transformer's blocks change their residual (output minus input) slowly from one step to the
next. On a uniform schedule of full steps (warm-up, every `interval`-th step, the last steps), a
cached step computes the first `front` and last `back` blocks and gives every other block its
input plus its residual from the last full step (`order=0`: reuse, as FORA and MagCache reuse a
residual), or a first-order Taylor step from the last two (`order=1`: TaylorSeer's forecast,
Liu et al. 2025, https://arxiv.org/abs/2503.06923, on residuals). With `front = back = 0` no
block runs and the stack's residual is reused whole, which is what MagCache (Ma et al. 2025)
and TeaCache do on the steps they skip; they choose those steps by a calibrated error estimate,
this by a fixed schedule, so it fires on every model and costs the same on every prompt.

Measured on mini-dit (docs/benchmarks.md), at the same count of full steps: the whole stack
reused beat computing the first and last blocks (which cost a quarter of a step for less
fidelity), and plain reuse beat the forecast except at the longest intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from diffusers.hooks import HookRegistry, ModelHook
from diffusers.hooks._helpers import TransformerBlockRegistry

from engine.acceleration.deep_cache import CacheStats, CountHook
from engine.acceleration.schedule import StepClock, extrapolate, last_rows

HOOK = "spotforge_block_cache"
# Lists of transformer blocks in the diffusers models we run (SD3, Flux, Wan, LTX), in the
# order the model calls them.
BLOCK_LISTS = ("transformer_blocks", "single_transformer_blocks", "blocks")


@dataclass(frozen=True)
class BlockCacheConfig:
    interval: int = 3  # one full step every `interval` steps (1 = no caching)
    warmup_steps: int = 2  # first steps always full: the layout forms there
    final_steps: int = 1  # last steps always full: fine detail settles there
    front: int = 0  # blocks a cached step computes at the start ...
    back: int = 0  # ... and at the end (0, 0: none, the whole stack's residual is reused)
    order: int = 1  # residual forecast: 0 reuse the last, 1 extrapolate from the last two

    def __post_init__(self) -> None:
        if self.order not in (0, 1):
            raise ValueError(f"order must be 0 or 1, not {self.order}")


@dataclass
class _State:
    config: BlockCacheConfig
    clock: StepClock
    stats: CacheStats
    rows: int = 0  # batch rows of this call: halves when guidance stops
    full: bool = True
    # Which call of this step: pipelines that run the guidance branches apart (Wan, Flux's
    # true CFG) call the transformer twice per step, and each branch keeps its own residuals.
    branch: int = 0


class _LeaderHook(ModelHook):
    """On the transformer: each call is one step's (or one guidance branch's) evaluation."""

    def __init__(self, state: _State):
        super().__init__()
        self.state = state
        self.last_step: int | None = None

    def pre_forward(self, module, *args, **kwargs):
        state, c = self.state, self.state.config
        step = state.clock.place(kwargs["timestep"])
        state.branch = state.branch + 1 if step == self.last_step else 0
        self.last_step = step
        state.full = state.clock.is_full(c.interval, c.warmup_steps, c.final_steps)
        state.rows = kwargs["hidden_states"].shape[0]
        return args, kwargs


@dataclass
class _Streams:
    """Where a block's hidden states (and a dual-stream block's caption states) go in and come
    out, from diffusers' registry of transformer block signatures."""

    meta: object  # diffusers' TransformerBlockMetadata

    @property
    def dual(self) -> bool:
        return self.meta.return_encoder_hidden_states_index is not None

    def inputs(self, args, kwargs) -> list[torch.Tensor | None]:
        get = self.meta._get_parameter_from_args_kwargs
        hidden = get(self.meta.hidden_states_argument_name, args, kwargs)
        caption = get(self.meta.encoder_hidden_states_argument_name, args, kwargs)
        return [hidden, caption if self.dual else None]

    def outputs(self, output) -> list[torch.Tensor | None]:
        if not self.dual:
            return [output, None]
        m = self.meta
        return [output[m.return_hidden_states_index], output[m.return_encoder_hidden_states_index]]

    def pack(self, template, values: list[torch.Tensor | None]):
        if not self.dual:
            return values[0]
        packed = list(template)
        packed[self.meta.return_hidden_states_index] = values[0]
        packed[self.meta.return_encoder_hidden_states_index] = values[1]
        return tuple(packed)


class _MiddleBlockHook(ModelHook):
    """On each middle block: compute and remember its residual, or forecast it."""

    def __init__(self, state: _State, streams: _Streams):
        super().__init__()
        self.state = state
        self.streams = streams
        # Per guidance branch: (step, residuals) at its last two full steps, and its last output.
        self.history: dict[int, list[tuple[int, list]]] = {}
        self.template: dict[int, object] = {}

    def new_forward(self, module, *args, **kwargs):
        state = self.state
        inputs = self.streams.inputs(args, kwargs)
        history = self.history.setdefault(state.branch, [])
        if state.full or not history:
            output = self.fn_ref.original_forward(*args, **kwargs)
            residuals = [
                None if x is None or y is None else y - x
                for x, y in zip(inputs, self.streams.outputs(output), strict=True)
            ]
            self.history[state.branch] = [*history[-1:], (state.clock.step, residuals)]
            self.template[state.branch] = output
            state.stats.computed += 1
            return output
        state.stats.skipped += 1
        values = []
        for i, x in enumerate(inputs):
            points = [(s, r[i]) for s, r in history]
            if x is None or points[-1][1] is None:
                values.append(None)
            elif state.config.order == 1 and len(points) == 2:
                values.append(x + extrapolate(points, state.clock.step, state.rows))
            else:
                values.append(x + last_rows(points[-1][1], state.rows))
        return self.streams.pack(self.template[state.branch], values)


def blocks_of(transformer) -> list[torch.nn.Module]:
    return [b for name in BLOCK_LISTS for b in getattr(transformer, name, None) or []]


def apply_block_cache(transformer, scheduler, config: BlockCacheConfig, stats: CacheStats) -> None:
    """Attach the block cache for one pipeline call; `remove_block_cache` afterwards."""
    blocks = blocks_of(transformer)  # a model too shallow to have a middle runs uncached
    state = _State(config, StepClock(scheduler), stats)
    middle = blocks[config.front : len(blocks) - config.back]
    streams = [_streams(block) for block in middle]  # an unknown block class fails here, first
    _register(transformer, _LeaderHook(state))
    for block, block_streams in zip(middle, streams, strict=True):
        _register(block, _MiddleBlockHook(state, block_streams))
    for block in [*blocks[: config.front], *blocks[len(blocks) - config.back :]]:
        _register(block, CountHook(stats))


def _streams(block) -> _Streams:
    return _Streams(TransformerBlockRegistry.get(type(block)))


def remove_block_cache(transformer) -> None:
    HookRegistry.check_if_exists_or_initialize(transformer).remove_hook(HOOK, recurse=True)


def _register(module: torch.nn.Module, hook: ModelHook) -> None:
    HookRegistry.check_if_exists_or_initialize(module).register_hook(hook, HOOK)
