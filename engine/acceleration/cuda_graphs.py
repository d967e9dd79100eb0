"""The denoiser replayed from CUDA graphs, with our fused norms inside them.

At one picture a step of a UNet or small DiT is hundreds of short kernels, and the GPU waits on
Python to launch each: on an H200 a captured SD 1.5 UNet forward at 512 px runs 1.77x faster
than eager, and 1.88x with our fused GroupNorm+SiLU and LayerNorm+modulation in the graph, where
they no longer pay a launch each (docs/benchmarks.md, "The GPU suite on an H200"). Outside a
graph the fused norms lose, so they are swapped in only while a graph is captured: eager calls
run diffusers' own modules.

A diffusers hook on the denoiser captures one graph per input signature (the shapes, dtypes and
non-tensor arguments of a call) and replays it with the call's tensors copied into the graph's
static inputs. The graphs share one memory pool (a call's outputs are copied out at once, so no
replay needs another's memory) and the least recently used is dropped past `MAX_GRAPHS`. Calls
run eagerly when their inputs are off the GPU or not keyable, with autograd on, when capture
fails (a host sync in the forward, say), and while any hook but the step cache is on the
denoiser: DeepCache's (it changes which blocks run from step to step) is registered there. The
step cache sits outside this hook, so its cached steps skip the replay as they skip the
forward. Graphs hold the weights' addresses, so `drop_graphs` clears them when the model moves
(the pool offloads models under memory pressure), and a moved first weight clears them too.

Replayed and eager calls differ in the last bits (the fused norms round once, in fp32), so a
request repeats exactly only while its signature replays; the pool of graphs is sized so that an
engine's few shapes (batch sizes, resolutions) all keep theirs.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from diffusers.hooks import HookRegistry, ModelHook
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from engine.acceleration.kernel_swaps import KernelSet, kernels_applied
from engine.acceleration.step_cache import HOOK as STEP_CACHE
from engine.patch_shift import HOOK as PATCH_SHIFT

HOOK = "spotforge_cuda_graphs"
MAX_GRAPHS = 8  # signatures kept per model; they share one pool of activation memory
FUSED_NORMS = KernelSet(attention=False)  # attention loses to SDPA, graph or not
log = logging.getLogger(__name__)


class _Graph:
    """One captured forward: static inputs, the graph, and its outputs."""

    def __init__(self, forward: Callable, module: torch.nn.Module, leaves: list, spec, pool):
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
            with torch.cuda.graph(self.graph, pool=pool):
                self.outputs = forward(*args, **kwargs)

    def __call__(self, leaves: list) -> Any:
        for static, x in zip(self.inputs, leaves, strict=True):
            if isinstance(static, torch.Tensor):
                static.copy_(x)
        self.graph.replay()
        # A copy: the next replay (of this graph or another in the pool) overwrites the outputs,
        # and callers keep them (the step cache reuses a full step's output after it).
        return tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, self.outputs)


class _GraphHook(ModelHook):
    def __init__(self) -> None:
        super().__init__()
        self.graphs: OrderedDict[tuple, _Graph | None] = OrderedDict()  # None: cannot capture
        self.pool = None
        self.weights_at: int | None = None

    def drop(self) -> None:
        self.graphs.clear()
        self.pool = None

    def new_forward(self, module: torch.nn.Module, *args, **kwargs):
        forward = self.fn_ref.original_forward
        leaves, spec = tree_flatten((args, kwargs))
        key = _signature(leaves, spec)
        if key is None or torch.is_grad_enabled() or _other_hooks(module):
            return forward(*args, **kwargs)
        weights_at = next(module.parameters()).data_ptr()
        if weights_at != self.weights_at:  # moved without `drop_graphs`: they point elsewhere
            self.drop()
            self.weights_at = weights_at
        if key not in self.graphs:
            if len(self.graphs) >= MAX_GRAPHS:
                self.graphs.popitem(last=False)
            try:
                self.graphs[key] = _Graph(forward, module, leaves, spec, self.pool)
            except torch.OutOfMemoryError:  # may pass: try again on a later call
                return forward(*args, **kwargs)
            except Exception:
                log.warning("denoiser call not captured in a CUDA graph; eager", exc_info=True)
                self.graphs[key] = None
            else:
                self.pool = self.pool or self.graphs[key].graph.pool()
        self.graphs.move_to_end(key)
        graph = self.graphs[key]
        return forward(*args, **kwargs) if graph is None else graph(leaves)


def _signature(leaves: list, spec) -> tuple | None:
    """What a graph is captured for; None when the call cannot run from one (a tensor off the
    GPU, or an argument that is not a tensor or a plain hashable value). Inference mode is part
    of it: tensors made in it cannot be written outside it."""
    parts: list[Any] = [str(spec), torch.is_inference_mode_enabled()]
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


def _other_hooks(module: torch.nn.Module) -> bool:
    """A hook on the denoiser besides this one, the step cache (which only skips whole calls)
    and shifted patches (which only change the input's shape on alternate calls: a signature,
    and a graph, of its own): it may change what the forward does from call to call."""
    registry = getattr(module, "_diffusers_hook", None)
    ours = (HOOK, STEP_CACHE, PATCH_SHIFT)
    others = registry is not None and any(h not in ours for h in registry.hooks)
    return others or bool(module._forward_hooks or module._forward_pre_hooks)


def use_cuda_graphs(denoiser: torch.nn.Module) -> None:
    """Serve `denoiser`'s forward from CUDA graphs from now on (calls on a CPU run as before)."""
    HookRegistry.check_if_exists_or_initialize(denoiser).register_hook(_GraphHook(), HOOK)


def drop_graphs(denoiser: torch.nn.Module) -> None:
    """Forget `denoiser`'s graphs (before its weights move); a no-op without `use_cuda_graphs`."""
    registry = getattr(denoiser, "_diffusers_hook", None)
    if registry is not None and (hook := registry.get_hook(HOOK)) is not None:
        hook.drop()
