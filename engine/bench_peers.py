"""The methods a user would pick instead of our recipes, for `spotforge bench --method`: each
applied to the plain diffusers pipeline object for one call and removed after it. The packages
are bench extras (`pip install -e '.[bench]'`), never runtime dependencies.

UNets:
- `deepcache:N`: the DeepCache package (Ma et al., 2023; PyPI `DeepCache`), the deep features
  reused for N steps out of N.
- `tomesd:R`: token merging (Bolya and Hoffman, 2023; PyPI `tomesd`), a share R of the tokens in
  every attention block, at every UNet level (our small UNets attend only below full
  resolution, where tomesd's default leaves them alone).
- `tgate:G`: T-GATE (Liu et al., 2024; PyPI `tgate`), guidance and cross-attention for the first
  G steps, then the cross-attention output cached; the paper's self-attention intervals.

Transformers, diffusers' own hooks (`transformer.enable_cache`):
- `fbc:T`: first-block cache (ParaAttention's FBCache), residual-change threshold T;
- `pab:N`: pyramid attention broadcast (Zhao et al., 2024), attention reused for N blocks of
  steps over the middle of the schedule;
- `taylorseer:N`: TaylorSeer (Liu et al., 2025), every block's output forecast for N steps;
- `magcache:T`: MagCache (Ma et al., 2025), error budget T; its magnitude ratios calibrated for
  the model by MagCache's own calibration mode, on the recipes' tuning prompt (never a scored one).

Transformers, cache-dit (PyPI `cache-dit`):
- `cachedit:T`: DBCache computing one front and one back block (F1B1), threshold T;
- `cachedit-ts:T`: the same with its TaylorSeer calibrator (order 1), cache-dit's recommended pair.

And ours at any setting, so that their curves can be set beside a peer's at the peer's speed
(with guidance on every step, which no peer cuts):
- `layercache:N`: our DeepCache (`engine.acceleration.deep_cache`), the recipes' kind: a full
  step every N after 3, the last up layer alone between (UNets);
- `stepcache:S`: our step cache (`engine.acceleration.step_cache`) with a share S of the steps
  in full, the recipes' schedule shape (transformers).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from diffusers.hooks import HookRegistry
from diffusers.hooks.hooks import CacheContext, _set_cache_context

from engine.acceleration.deep_cache import (
    CacheStats,
    DeepCacheConfig,
    apply_deep_cache,
    remove_deep_cache,
)
from engine.acceleration.step_cache import StepCacheConfig, apply_step_cache, remove_step_cache
from engine.errors import ModelUnavailable

# cache-dit logs each step of its set-up to stdout, where the bench writes its JSON lines.
os.environ.setdefault("CACHE_DIT_LOG_LEVEL", "error")

# The one call MagCache calibrates on: the recipes' tuning prompt, never a scored one.
CALIBRATION_PROMPT = "a mountain trail at golden hour, photo"

# apply(pipe, value, call_kwargs) -> (the callable to run instead of `pipe`, its removal)
Apply = Callable[[object, float, dict], tuple[Callable, Callable[[], None]]]


@dataclass(frozen=True)
class Peer:
    name: str
    value: float
    _apply: Apply

    @contextmanager
    def applied(self, pipe, call_kwargs: dict) -> Iterator[Callable]:
        """The method on `pipe` for calls like `call_kwargs`; yields what to call. A method
        that fails to attach may leave the pipeline half-patched: the bench stops there."""
        call, remove = self._apply(pipe, self.value, call_kwargs)
        try:
            yield call
        finally:
            remove()


def _deepcache(pipe, interval: float, _kwargs):
    from DeepCache import DeepCacheSDHelper

    helper = DeepCacheSDHelper(pipe=pipe)
    helper.set_params(cache_interval=int(interval), cache_branch_id=0)
    helper.enable()
    return pipe, helper.disable


def _tomesd(pipe, ratio: float, _kwargs):
    import tomesd

    tomesd.apply_patch(pipe, ratio=ratio, max_downsample=8)
    return pipe, lambda: tomesd.remove_patch(pipe)


def _tgate(pipe, gate_step: float, _kwargs):
    import tgate

    loaders = {
        "StableDiffusionPipeline": tgate.TgateSDLoader,
        "StableDiffusionXLPipeline": tgate.TgateSDXLLoader,
    }
    if type(pipe).__name__ not in loaders:  # its text-to-image code would ignore the image
        raise ModelUnavailable(f"T-GATE runs SD and SDXL text-to-image, not {type(pipe).__name__}")
    loaders[type(pipe).__name__](pipe)

    def call(**kwargs):
        return pipe.tgate(**kwargs, gate_step=int(gate_step), sp_interval=5, fi_interval=1,
                          warm_up=2)  # fmt: skip

    def remove() -> None:
        # T-GATE replaces each attention module's forward and keeps its cache on the module.
        for module in pipe.unet.modules():
            for attr in ("forward", "cache"):
                module.__dict__.pop(attr, None)
        del pipe.tgate

    return call, remove


MakeConfig = Callable[[object, float, dict, list], object]


def _hook(make_config: MakeConfig) -> Apply:
    """A diffusers cache hook on the pipeline's transformer. Through `enable_cache` where the
    model class has it; SD3's does not (diffusers 0.42), so there diffusers' own appliers are
    called and every hook they registered is removed after."""

    def apply(pipe, value: float, kwargs: dict):
        model = pipe.transformer
        handles: list = []  # forward hooks the config needs, removed with it
        config = make_config(pipe, value, kwargs, handles)
        if hasattr(model, "enable_cache"):
            model.enable_cache(config)
            removers = [model.disable_cache]
        else:
            before = _hook_names(model)
            _appliers()[type(config).__name__](model, config)
            registry = HookRegistry.check_if_exists_or_initialize(model)
            registry.invalidate_child_registries_cache()  # as enable_cache does
            # What `cache_context` would do: one context for the pipeline call.
            _set_cache_context(model, CacheContext("inference"))
            removers = [
                functools.partial(module._diffusers_hook.remove_hook, name, recurse=False)
                for module, name in _hook_names(model) - before
            ] + [
                registry.invalidate_child_registries_cache,
                functools.partial(_set_cache_context, model, None),
            ]
        removers += [handle.remove for handle in handles]
        return pipe, lambda: [remove() for remove in removers]

    return apply


def _hook_names(model) -> set[tuple[torch.nn.Module, str]]:
    return {
        (module, name)
        for module in model.modules()
        if (registry := getattr(module, "_diffusers_hook", None)) is not None
        for name in registry.hooks
    }


def _appliers() -> dict[str, Callable]:
    from diffusers import hooks

    return {
        "FirstBlockCacheConfig": hooks.apply_first_block_cache,
        "PyramidAttentionBroadcastConfig": hooks.apply_pyramid_attention_broadcast,
        "TaylorSeerCacheConfig": hooks.apply_taylorseer_cache,
        "MagCacheConfig": hooks.apply_mag_cache,
    }


def _fbc(pipe, threshold: float, _kwargs, _handles):
    from diffusers.hooks import FirstBlockCacheConfig

    return FirstBlockCacheConfig(threshold=threshold)


def _pab(pipe, skip: float, _kwargs, handles: list):
    from diffusers import PyramidAttentionBroadcastConfig

    # PAB schedules by timestep (0-1000), which the SD3 pipeline does not publish: watch the
    # calls. Flux passes it divided by 1000.
    seen = {"t": 1000.0}

    def watch(module, args, kwargs):
        t = float(kwargs["timestep"].flatten()[0])
        seen["t"] = t * 1000 if t <= 1 else t

    handles.append(pipe.transformer.register_forward_pre_hook(watch, with_kwargs=True))
    return PyramidAttentionBroadcastConfig(
        spatial_attention_block_skip_range=int(skip),
        spatial_attention_timestep_skip_range=(100, 800),
        current_timestep_callback=lambda: seen["t"],
    )


def _taylorseer(pipe, interval: float, _kwargs, _handles):
    from diffusers.hooks import TaylorSeerCacheConfig

    return TaylorSeerCacheConfig(
        cache_interval=int(interval), disable_cache_before_step=3, max_order=1,
        taylor_factors_dtype=torch.float32,
    )  # fmt: skip


def _magcache(pipe, threshold: float, kwargs: dict, _handles):
    from diffusers.hooks import MagCacheConfig

    if "image" in kwargs:  # an image task runs fewer steps than it is asked for
        raise ModelUnavailable("MagCache is measured on text-to-image only")
    steps = kwargs["num_inference_steps"]
    calibrating = _hook(lambda *_: MagCacheConfig(calibrate=True, num_inference_steps=steps))
    call, remove = calibrating(pipe, 0.0, kwargs)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            call(**{**kwargs, "prompt": CALIBRATION_PROMPT},
                 generator=torch.Generator("cpu").manual_seed(0))  # fmt: skip
    finally:
        remove()
    lines = printed.getvalue().strip().splitlines()
    if not lines:
        raise ModelUnavailable("MagCache's calibration printed no ratios")
    ratios = ast.literal_eval(lines[-1])
    return MagCacheConfig(threshold=threshold, num_inference_steps=steps, mag_ratios=ratios)


def _cachedit(taylorseer: bool) -> Apply:
    def apply(pipe, threshold: float, kwargs: dict):
        import cache_dit

        calibrator = (
            cache_dit.TaylorSeerCalibratorConfig(taylorseer_order=1) if taylorseer else None
        )
        cache_dit.enable_cache(
            pipe,
            cache_config=cache_dit.DBCacheConfig(
                Fn_compute_blocks=1,
                Bn_compute_blocks=1,
                residual_diff_threshold=threshold,
                max_warmup_steps=3,
            ),
            calibrator_config=calibrator,
        )
        return pipe, lambda: cache_dit.disable_cache(pipe)

    return apply


def _layercache(pipe, interval: float, _kwargs):
    config = DeepCacheConfig(interval=int(interval), warmup_steps=3, final_steps=1, fresh="layer")
    apply_deep_cache(pipe.unet, pipe.scheduler, config, CacheStats())
    return pipe, lambda: remove_deep_cache(pipe.unet)


def _stepcache(pipe, share: float, _kwargs):
    apply_step_cache(pipe.transformer, pipe.scheduler, StepCacheConfig(share), CacheStats())
    return pipe, lambda: remove_step_cache(pipe.transformer)


# name -> (apply, the package it needs)
PEERS: dict[str, tuple[Apply, str]] = {
    "deepcache": (_deepcache, "DeepCache"),
    "tomesd": (_tomesd, "tomesd"),
    "tgate": (_tgate, "tgate"),
    "fbc": (_hook(_fbc), "diffusers"),
    "pab": (_hook(_pab), "diffusers"),
    "taylorseer": (_hook(_taylorseer), "diffusers"),
    "magcache": (_hook(_magcache), "diffusers"),
    "cachedit": (_cachedit(taylorseer=False), "cache_dit"),
    "cachedit-ts": (_cachedit(taylorseer=True), "cache_dit"),
    "layercache": (_layercache, "engine"),
    "stepcache": (_stepcache, "engine"),
}


def is_ours(spec: str) -> bool:
    """Whether a method spec is one of our own caches at a setting (layercache, stepcache)."""
    return PEERS.get(spec.partition(":")[0], (None, None))[1] == "engine"


def parse(spec: str) -> Peer:
    """`name:value`, e.g. `deepcache:3` or `fbc:0.1`."""
    name, _, value = spec.partition(":")
    if name not in PEERS or not value:
        known = ", ".join(f"{n}:VALUE" for n in PEERS)
        raise ValueError(f"unknown method {spec!r}: a recipe, or a peer ({known})")
    apply, package = PEERS[name]
    try:
        __import__(package)
    except ImportError:
        raise ModelUnavailable(
            f"{spec} needs the {package} package: pip install -e '.[bench]'"
        ) from None
    return Peer(name, float(value), apply)
