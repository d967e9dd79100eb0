"""CUDA graphs of the denoiser: which calls replay a graph, which run eagerly, and when graphs
are dropped. Capture itself needs a GPU, so these tests give the hook a stand-in graph (which
runs the forward and counts) and key CPU tensors as if they were on one; `python -m
engine.gpu_suite --parts graphs` captures and replays for real and measures it against plain
diffusers (docs/benchmarks.md)."""

from __future__ import annotations

from typing import ClassVar

import pytest
import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from engine import Engine
from engine.acceleration import cuda_graphs
from engine.acceleration.cuda_graphs import HOOK, drop_graphs, use_cuda_graphs
from engine.acceleration.deep_cache import (
    CacheStats,
    DeepCacheConfig,
    apply_deep_cache,
    remove_deep_cache,
)
from engine.requests import TextToImage


class StandIn:
    """A captured graph's bookkeeping without CUDA: it runs the forward it was made for."""

    made: ClassVar[list[tuple]] = []
    fail_with: ClassVar[Exception | None] = None

    def __init__(self, forward, module, leaves, spec, pool):
        if StandIn.fail_with is not None:
            raise StandIn.fail_with
        self.forward, self.spec, self.replays = forward, spec, 0
        self.graph = type("G", (), {"pool": lambda _self: "shared pool"})()
        StandIn.made.append((tuple(getattr(x, "shape", x) for x in leaves), pool))

    def __call__(self, leaves):
        self.replays += 1
        args, kwargs = tree_unflatten(leaves, self.spec)
        return self.forward(*args, **kwargs)


def _cpu_signature(leaves, spec):
    return (str(spec), *(tuple(x.shape) if isinstance(x, torch.Tensor) else x for x in leaves))


@pytest.fixture
def graphed(monkeypatch):
    monkeypatch.setattr(cuda_graphs, "_Graph", StandIn)
    monkeypatch.setattr(cuda_graphs, "_signature", _cpu_signature)
    StandIn.made, StandIn.fail_with = [], None
    model = torch.nn.Linear(4, 4)
    use_cuda_graphs(model)
    return model, model._diffusers_hook.get_hook(HOOK)


def _call(model, rows: int):
    with torch.inference_mode():
        return model(torch.ones(rows, 4))


def test_each_signature_is_captured_once_then_replayed(graphed):
    model, hook = graphed
    expected = torch.nn.functional.linear(torch.ones(2, 4), model.weight, model.bias)
    for _ in range(3):
        torch.testing.assert_close(_call(model, 2), expected)
    _call(model, 3)
    assert StandIn.made == [(((2, 4),), None), (((3, 4),), "shared pool")]  # one pool for all
    assert [g.replays for g in hook.graphs.values()] == [3, 1]


def test_past_the_limit_the_least_recently_used_graph_goes(graphed, monkeypatch):
    model, hook = graphed
    monkeypatch.setattr(cuda_graphs, "MAX_GRAPHS", 2)
    for rows in (1, 2, 1, 3):  # 1 was used after 2, so 2 goes
        _call(model, rows)
    assert [key[1] for key in hook.graphs] == [(1, 4), (3, 4)]


def test_a_capture_that_fails_runs_eagerly_and_is_not_tried_again(graphed):
    model, hook = graphed
    StandIn.fail_with = RuntimeError("operation not permitted when stream is capturing")
    _call(model, 2)
    StandIn.fail_with = None
    out = _call(model, 2)
    assert out.shape == (2, 4) and list(hook.graphs.values()) == [None] and StandIn.made == []


def test_running_out_of_memory_is_tried_again_on_a_later_call(graphed):
    model, hook = graphed
    StandIn.fail_with = torch.OutOfMemoryError("CUDA out of memory")
    _call(model, 2)
    assert not hook.graphs
    StandIn.fail_with = None
    _call(model, 2)
    assert len(StandIn.made) == 1


def test_calls_with_autograd_or_another_hook_run_eagerly(graphed):
    model, _ = graphed
    model(torch.ones(2, 4))  # grad mode: a replay would return outputs with no history
    handle = model.register_forward_hook(lambda *_: None)
    _call(model, 2)
    handle.remove()
    assert StandIn.made == []
    _call(model, 2)
    assert len(StandIn.made) == 1


def test_graphs_are_dropped_when_the_weights_move(graphed):
    model, hook = graphed
    _call(model, 2)
    drop_graphs(model)
    assert not hook.graphs and hook.pool is None
    _call(model, 2)
    model.weight.data = model.weight.data.clone()  # moved behind the hook's back
    _call(model, 2)
    assert len(StandIn.made) == 3


def test_deep_cache_on_the_unet_sends_its_calls_around_the_graphs(tmp_path):
    with Engine(model_dir=tmp_path, device="cpu", cuda_graphs=True) as engine:
        engine.generate(TextToImage(preset="mini-sd", prompt="lake", seed=1, steps=2))
        pipe = engine.pool.get("mini-sd").pipeline(TextToImage.task)
    unet = pipe.unet
    assert unet._diffusers_hook.get_hook(HOOK) is not None
    assert not cuda_graphs._other_hooks(unet)
    apply_deep_cache(unet, pipe.scheduler, DeepCacheConfig(interval=3), CacheStats())
    try:
        assert cuda_graphs._other_hooks(unet)
    finally:
        remove_deep_cache(unet)


def test_keys_need_gpu_tensors_and_plain_arguments():
    def key(*args, **kwargs):
        return cuda_graphs._signature(*tree_flatten((args, kwargs)))

    assert key(torch.zeros(1)) is None  # off the GPU: the call runs eagerly
    assert key(return_dict=False, scale=object()) is None  # nothing to key an object on
    assert key(return_dict=False, t=3) == key(return_dict=False, t=3)
    assert key(return_dict=False, t=3) != key(return_dict=False, t=4)
    assert key(None, x=None) != key(x=None)  # the structure of the call counts too
    outside = key(t=3)
    with torch.inference_mode():
        assert key(t=3) != outside  # inference tensors cannot be written outside the mode


def test_on_a_cpu_the_setting_changes_nothing(tmp_path):
    request = TextToImage(preset="mini-dit", prompt="green mountains", seed=3, steps=4)
    pictures = []
    for graphs in (True, False):
        with Engine(model_dir=tmp_path, device="cpu", cuda_graphs=graphs) as engine:
            pictures.append(engine.generate(request).images[0].tobytes())
    assert pictures[0] == pictures[1]
