"""Shifted patches: a sampling setting for diffusion transformers whose pictures show their patch
grid, attached with a diffusers hook for one pipeline call; neither the model nor diffusers'
sampler is changed.

A transformer reads the latents in patches (2x2 in SD3: 16 pixels at landmark-dit's x8
autoencoder) and predicts each patch from its own token, so a small model's errors break at the
patch borders, and over the steps they add up to a picture of tiles (saguaros as green squares,
towers as 16-pixel blocks). Every other time the transformer runs, the latents are padded by
half a patch on each side (edge values) before it and its output is cut back: that step's
patches straddle the borders of the step before, so its prediction, smooth within a patch as
the training pictures are, evens out the seams the unshifted steps leave. Tiled samplers move
their tile grid between steps to hide tile seams the same way (DemoFusion's shifted crop
sampling, Du et al. 2024); here the tiles are the transformer's own patches.

The shift alternates over the steps the transformer computes, not over the schedule, so a step
cache that skips steps still alternates grids on the ones it computes (landmark-dit's
`balanced` on its tuning captions: 36.5 dB against the shifted exact picture, where alternating
by the schedule's step gave 31.6 and brought the grid back; docs/benchmarks.md). The first
step is unshifted, both guidance branches of a step see the same grid, and the count starts
with each call, so a render repeats bit for bit. Padded steps cost their extra tokens (at
256x144, 170 against 144). Block caches that compare a block's input from step to step
(first-block cache, MagCache, cache-dit) would compare two grids, so the bench measures them on
plain sampling only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from diffusers.hooks import HookRegistry, ModelHook

HOOK = "spotforge_patch_shift"
_NOT_YET = object()


class _PatchShiftHook(ModelHook):
    def __init__(self, scheduler, half_patch: int, max_patches: int | None):
        super().__init__()
        self.scheduler, self.half, self.max_patches = scheduler, half_patch, max_patches
        self.computed = 0  # distinct steps the transformer has run in this call
        self.last_step: object = _NOT_YET  # the scheduler's index is None at the first step

    def new_forward(self, module, *args, **kwargs):
        latents = kwargs["hidden_states"]
        if not self._shifted_step() or not self._fits(latents):
            return self.fn_ref.original_forward(*args, **kwargs)
        h = self.half
        kwargs["hidden_states"] = F.pad(latents, (h, h, h, h), mode="replicate")
        output = self.fn_ref.original_forward(*args, **kwargs)
        height, width = latents.shape[-2:]
        crop = (..., slice(h, h + height), slice(h, h + width))
        if isinstance(output, tuple):
            return (output[0][crop], *output[1:])
        output.sample = output.sample[crop]
        return output

    def _shifted_step(self) -> bool:
        # The scheduler's index is None until its first step; a second guidance branch run as
        # its own call (Wan, Flux's true CFG) comes at the same index and keeps the grid.
        step = self.scheduler.step_index
        if step != self.last_step:
            self.computed += 1
            self.last_step = step
        return self.computed % 2 == 0

    def _fits(self, latents: torch.Tensor) -> bool:
        """Padding adds a patch to each side's count: past the position table, stay unshifted."""
        if latents.dim() != 4:
            return False
        most = max(latents.shape[-2:]) // (2 * self.half) + 1
        return self.max_patches is None or most <= self.max_patches


@contextmanager
def shifted_patches(pipe) -> Iterator[None]:
    """Draw this pipeline call with shifted patches. Enter it before a step cache is attached,
    so that the cache sees, and keeps, outputs in the picture's own coordinates."""
    transformer, config = pipe.transformer, pipe.transformer.config
    hook = _PatchShiftHook(
        pipe.scheduler, config.patch_size // 2, getattr(config, "pos_embed_max_size", None)
    )
    registry = HookRegistry.check_if_exists_or_initialize(transformer)
    registry.register_hook(hook, HOOK)
    try:
        yield
    finally:
        registry.remove_hook(HOOK, recurse=False)


def is_shifted(transformer) -> bool:
    registry = getattr(transformer, "_diffusers_hook", None)
    return registry is not None and registry.get_hook(HOOK) is not None
