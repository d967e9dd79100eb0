"""Shifted patches: a sampling setting for diffusion transformers whose pictures show their patch
grid, attached with a diffusers hook for one pipeline call; neither the model nor diffusers'
sampler is changed.

A transformer reads the latents in patches (2x2 in SD3: 16 pixels at landmark-dit's x8
autoencoder) and predicts each patch from its own token, so a small model's errors break at the
patch borders, and over the steps they add up to a picture of tiles (saguaros as green squares,
towers as 16-pixel blocks). Every other time the transformer runs, the latents are padded by
half a patch on each side (edge values) before it and its output is cut back: that step's
patches straddle the borders of the step before, so its prediction, smooth within a patch as
the training pictures are, evens out the seams the unshifted steps leave. Tiled panorama
samplers hide their tile seams the same way, moving the tile grid from step to step
(SpotDiffusion, Frolov et al. 2024); here the tiles are the transformer's own patches.

The shift alternates over the steps the transformer computes, not over the schedule, so a step
cache that skips steps still alternates grids on the ones it computes (landmark-dit's
`balanced` on its tuning captions: 36.5 dB against the shifted exact picture, where alternating
by the schedule's step gave 31.6 and brought the grid back; docs/benchmarks.md). The first
step is unshifted, both guidance branches of a step see the same grid, and the count starts
with each call, so a render repeats bit for bit. Padded steps cost their extra tokens (at
256x144, 170 against 144), need one patch more of SD3's position table a side (landmark-dit:
496 pixels at most, not 512; a larger picture is refused), and read positions half a patch
off, since SD3 crops the table from its centre; the pictures show no harm from that. Block
caches that compare a block's input from step to step (first-block cache, MagCache, cache-dit)
would compare two grids, so the bench measures them on plain sampling only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from diffusers.hooks import HookRegistry, ModelHook

from engine.errors import InvalidRequest

HOOK = "spotforge_patch_shift"
_NOT_YET = object()


class _PatchShiftHook(ModelHook):
    def __init__(self, scheduler, half_patch: int, max_patches: int | None, pixels: int):
        super().__init__()
        self.scheduler, self.half, self.max_patches = scheduler, half_patch, max_patches
        self.pixels = pixels  # a latent pixel's side in the picture
        self.computed = 0  # distinct steps the transformer has run in this call
        self.last_step: object = _NOT_YET  # the scheduler's index is None at the first step

    def new_forward(self, module, *args, **kwargs):
        latents = kwargs["hidden_states"]
        self._check_fits(latents)
        if not self._shifted_step():
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

    def _check_fits(self, latents: torch.Tensor) -> None:
        """Padding adds a patch to each side's count, which must stay within the position
        table: said before the first step rather than drawn with a grid under a name that says
        it has none."""
        if latents.dim() != 4:
            raise InvalidRequest("shifted patches draw still images only")
        patch = 2 * self.half
        if self.max_patches is not None and max(latents.shape[-2:]) // patch >= self.max_patches:
            height, width = (n * self.pixels for n in latents.shape[-2:])
            raise InvalidRequest(
                f"this model draws at most {(self.max_patches - 1) * patch * self.pixels} pixels "
                f"a side (with shifted patches); asked for {width}x{height}"
            )


@contextmanager
def shifted_patches(pipe) -> Iterator[None]:
    """Draw this pipeline call with shifted patches. Enter it before a step cache is attached,
    so that the cache sees, and keeps, outputs in the picture's own coordinates."""
    transformer, config = pipe.transformer, pipe.transformer.config
    if config.patch_size % 2:  # half a patch must be a whole latent pixel
        raise ValueError(f"shifted patches need an even patch size, not {config.patch_size}")
    hook = _PatchShiftHook(
        pipe.scheduler,
        config.patch_size // 2,
        getattr(config, "pos_embed_max_size", None),
        pipe.vae_scale_factor,
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
