"""The denoiser replayed from CUDA graphs, with our fused norms inside them.

At one picture a step of a UNet or small DiT is hundreds of short kernels, and the GPU waits on
Python to launch each: on an H200 a captured SD 1.5 UNet forward at 512 px runs 1.77x faster
than eager, and 1.88x with our fused GroupNorm+SiLU and LayerNorm+modulation in the graph, where
they no longer pay a launch each (docs/benchmarks.md, "The GPU suite on an H200"). Outside a
graph the fused norms lose, so they are swapped in only while a graph is captured: eager calls
run diffusers' own modules.

A diffusers hook on the denoiser captures one graph per input signature (the shapes, dtypes and
non-tensor arguments of a call) and replays it with the call's tensors copied into the graph's
static inputs. Calls it cannot serve run eagerly: inputs off the GPU, arguments it cannot key
on, a signature past the first `MAX_GRAPHS`, a forward that cannot be captured (a host sync),
and every call while DeepCache is attached (it changes which blocks run from step to step, which
one graph cannot). The step cache for transformers sits outside this hook, so its cached steps
skip the replay as they skip the forward. Graphs hold the parameters' addresses, so all are
dropped when the model moves (the pool offloads models under memory pressure).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from diffusers.hooks import HookRegistry, ModelHook
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from engine.acceleration import deep_cache
from engine.acceleration.kernel_swaps import KernelSet, kernels_applied

HOOK = "spotforge_cuda_graphs"
MAX_GRAPHS = 4  # each holds its activations' memory for as long as the model is loaded
FUSED_NORMS = KernelSet(attention=False)  # attention loses to SDPA, graph or not


class _Graph:
    """One captured forward: static inputs, the graph, and its outputs."""

    def __init__(self, forward: Callable, module: torch.nn.Module, leaves: list, spec) -> None:
        self.inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in leaves]
        args, kwargs = tree_unflatten(self.inputs, spec)
        with kernels_applied(module, FUSED_NORMS):
            stream = torch.cuda.Stream()  # warm-up (Triton's compiles) off the capture
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(2):
                    forward(*args, **kwargs)
            torch.cuda.current_stream().wait_stream(stream)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.outputs = forward(*args, **kwargs)

    def __call__(self, leaves: list) -> Any:
        for static, x in zip(self.inputs, leaves, strict=True):
            if isinstance(static, torch.Tensor):
                static.copy_(x)
        self.graph.replay()
        # A copy: the next replay overwrites the graph's outputs, and callers keep them (the
        # step cache reuses a full step's output on the steps after it).
        return tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, self.outputs)


class _GraphHook(ModelHook):
    def __init__(self) -> None:
        super().__init__()
        self.graphs: dict[tuple, _Graph | None] = {}  # None: tried, cannot be captured
        self.weights_at: int | None = None

    def new_forward(self, module: torch.nn.Module, *args, **kwargs):
        forward = self.fn_ref.original_forward
        leaves, spec = tree_flatten((args, kwargs))
        key = _signature(leaves, spec)
        if key is None or _deep_cached(module):
            return forward(*args, **kwargs)
        weights_at = next(module.parameters()).data_ptr()
        if weights_at != self.weights_at:  # moved (or first call): old graphs point elsewhere
            self.graphs.clear()
            self.weights_at = weights_at
        if key not in self.graphs:
            if len(self.graphs) >= MAX_GRAPHS:
                return forward(*args, **kwargs)
            self.graphs[key] = _capture(forward, module, leaves, spec)
        graph = self.graphs[key]
        return forward(*args, **kwargs) if graph is None else graph(leaves)


def _capture(forward: Callable, module: torch.nn.Module, leaves: list, spec) -> _Graph | None:
    try:
        return _Graph(forward, module, leaves, spec)
    except RuntimeError:  # e.g. a host sync inside the forward: it stays eager
        torch.cuda.synchronize()
        return None


def _signature(leaves: list, spec) -> tuple | None:
    """What a graph is captured for; None when the call cannot run from one (a tensor off the
    GPU, or an argument that is not a tensor or a plain hashable value)."""
    parts: list[Any] = [str(spec)]
    for x in leaves:
        if isinstance(x, torch.Tensor):
            if not x.is_cuda:
                return None
            parts.append((tuple(x.shape), x.dtype, x.device))
        elif x is None or isinstance(x, bool | int | float | str):
            parts.append(x)
        else:
            return None
    return tuple(parts)


def _deep_cached(module: torch.nn.Module) -> bool:
    registry = getattr(module, "_diffusers_hook", None)
    return registry is not None and registry.get_hook(deep_cache.HOOK) is not None


def use_cuda_graphs(denoiser: torch.nn.Module) -> None:
    """Serve `denoiser`'s forward from CUDA graphs from now on (calls on a CPU run as before)."""
    HookRegistry.check_if_exists_or_initialize(denoiser).register_hook(_GraphHook(), HOOK)
