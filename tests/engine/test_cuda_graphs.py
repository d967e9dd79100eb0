"""CUDA graphs of the denoiser: what decides whether a call replays a graph, checked where no GPU
is. Capture and replay themselves run in `python -m engine.gpu_suite --parts graphs`, which
measures them against plain diffusers on a GPU (docs/benchmarks.md)."""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten

from engine import Engine
from engine.acceleration.cuda_graphs import HOOK, _deep_cached, _signature
from engine.acceleration.deep_cache import (
    CacheStats,
    DeepCacheConfig,
    apply_deep_cache,
    remove_deep_cache,
)
from engine.requests import TextToImage


def _key(*args, **kwargs):
    return _signature(*tree_flatten((args, kwargs)))


def test_a_call_is_keyed_by_its_shapes_and_plain_arguments():
    assert _key(torch.zeros(1)) is None  # a tensor off the GPU: the call runs eagerly
    assert _key(return_dict=False, scale=object()) is None  # nothing to key an object on
    assert _key(return_dict=False, t=3) == _key(return_dict=False, t=3)
    assert _key(return_dict=False, t=3) != _key(return_dict=False, t=4)
    assert _key(return_dict=False) != _key(return_dict=True)
    assert _key(None, x=None) != _key(x=None)  # the structure of the call counts too


def test_deep_cache_sends_calls_around_the_graphs(tmp_path):
    with Engine(model_dir=tmp_path, device="cpu", cuda_graphs=True) as engine:
        engine.generate(TextToImage(preset="mini-sd", prompt="lake", seed=1, steps=2))
        pipe = engine.pool.get("mini-sd").pipeline(TextToImage.task)
    unet = pipe.unet
    assert unet._diffusers_hook.get_hook(HOOK) is not None
    assert not _deep_cached(unet)
    apply_deep_cache(unet, pipe.scheduler, DeepCacheConfig(interval=3), CacheStats())
    try:
        assert _deep_cached(unet)
    finally:
        remove_deep_cache(unet)


def test_on_a_cpu_the_setting_changes_nothing(tmp_path):
    request = TextToImage(preset="mini-dit", prompt="green mountains", seed=3, steps=4)
    pictures = []
    for graphs in (True, False):
        with Engine(model_dir=tmp_path, device="cpu", cuda_graphs=graphs) as engine:
            pictures.append(engine.generate(request).images[0].tobytes())
    assert pictures[0] == pictures[1]
