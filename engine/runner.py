"""Running one batch of compatible requests through a diffusers pipeline.

Stage timings come from timing the pipeline's own modules (text and image encoders, the VAE's
encode and decode) while the unmodified `__call__` runs; denoising is the rest. The result
therefore equals what a plain pipeline call returns for the same seeds.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from PIL import Image

from engine.acceleration import RECIPES, applied
from engine.errors import Cancelled, InvalidRequest, ModelUnavailable
from engine.layout_detail import with_layout_detail
from engine.layouts import Layout, from_layouts
from engine.loading import LoadedModel, with_defaults
from engine.patch_shift import shifted_patches
from engine.presets import Preset
from engine.requests import ReferenceToVideo, Request
from engine.upscaling import FOLDER as UPSCALER_FOLDER
from engine.upscaling import upscale
from engine.version import ENGINE_VERSION

ENCODERS = ("text_encoder", "text_encoder_2", "text_encoder_3", "image_encoder")


@dataclass(frozen=True)
class Resolved:
    """A request with the preset's defaults filled in: the exact values a run uses."""

    request: Request
    steps: int
    guidance: float
    width: int
    height: int
    num_frames: int | None
    fps: int | None
    images: dict[str, Image.Image]  # conditioning images, already at the output size
    # The size the pipeline draws: width x height, or the preset's own size where its learned
    # upscaler takes the picture on to width x height (`Preset.upscale_to`).
    drawn_at: tuple[int, int]
    warnings: tuple[str, ...] = ()  # what the caller should know, e.g. words a model ignored
    batch_key: tuple = ()  # requests with equal keys can run in one pipeline call

    def __post_init__(self) -> None:
        object.__setattr__(self, "batch_key", self._batch_key())

    @property
    def upscaled(self) -> bool:
        return self.drawn_at != (self.width, self.height)

    def _batch_key(self) -> tuple:
        scalars = self.request.scalars()
        shared = {
            k: v
            for k, v in scalars.items()
            if k not in ("prompt", "negative_prompt", "seed", "priority", "layout")
        }
        key = (
            type(self.request).__name__,
            tuple(sorted(shared.items())),
            self.steps,
            self.guidance,
            self.width,
            self.height,
            self.num_frames,
            bool(scalars.get("layout")),  # each its own layout, all on one schedule
        )
        if self.request.task.is_video:
            # Video pipelines take one conditioning image per call: batch only identical ones.
            key += tuple(image_sha256(img) for img in self.images.values())
        return key


@dataclass
class Result:
    """Images (a still's, or a clip's frames), stage timings, and the exact parameters used."""

    images: list[Image.Image]
    params: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    fps: int | None = None
    warnings: tuple[str, ...] = ()
    skipped_blocks: float = 0.0  # share of denoiser block evaluations the recipe's cache saved

    @property
    def is_video(self) -> bool:
        return self.fps is not None


def resolve(request: Request, preset: Preset, compose: Callable | None = None) -> Resolved:
    """Fill in the preset's defaults and check what can be checked before the model loads."""
    preset.pipeline_class(request.task)  # unsupported task: a clear error now
    if request.recipe not in RECIPES:
        raise InvalidRequest(f"unknown recipe {request.recipe!r}; available: {', '.join(RECIPES)}")
    request = with_defaults(request, preset)
    if getattr(request, "layout", ""):
        Layout.parse(request.layout)  # type: ignore[attr-defined]  # unknown: a sentence now
        if preset.layout_strength is None:
            raise InvalidRequest(
                f"{preset.id} draws no layouts: only a model trained on the built-in places does"
            )
    width, height = request.width, request.height
    # A text-to-image request for the size the preset's upscaler draws is drawn at the preset's
    # own size, then upscaled; every other request is drawn as asked.
    upscales = (width, height) == preset.upscale_to and not request.inputs()
    drawn_at = (preset.width, preset.height) if upscales else (width, height)
    multiple = 16
    if drawn_at[0] % multiple or drawn_at[1] % multiple:
        raise InvalidRequest(
            f"width and height must be multiples of {multiple}; got {width}x{height}"
        )
    num_frames = fps = None
    if request.task.is_video:
        num_frames, fps = request.num_frames, request.fps
        if (num_frames - 1) % 4:
            raise InvalidRequest(f"num_frames must be 4k+1 (e.g. 9, 17, 81), not {num_frames}")
    images = {
        name: _fit(img, width, height, name == "mask") for name, img in request.inputs().items()
    }
    if isinstance(request, ReferenceToVideo):
        if compose is None:
            raise InvalidRequest("reference-to-video needs a segmenter to cut out the subject")
        images = {"image": compose(request, width, height)}
    return Resolved(
        request,
        request.steps,
        request.guidance,
        width,
        height,
        num_frames,
        fps,
        images,
        drawn_at,
    )


def run_batch(
    model: LoadedModel,
    batch: list[Resolved],
    on_step: Callable[[int, int], None] = lambda i, n: None,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[Result]:
    first = batch[0]
    task = first.request.task
    pipe = model.pipeline(task)
    accepts = set(inspect.signature(pipe.__call__).parameters)
    kwargs: dict[str, Any] = {
        "prompt": [r.request.prompt for r in batch],
        "num_inference_steps": first.steps,
        "guidance_scale": first.guidance,
        "height": first.drawn_at[1],
        "width": first.drawn_at[0],
        "generator": [torch.Generator("cpu").manual_seed(r.request.seed) for r in batch],
        "output_type": "np" if task.is_video else "pil",
        **dict(model.preset.call_options),
    }
    if any(r.request.negative_prompt for r in batch):
        kwargs["negative_prompt"] = [r.request.negative_prompt for r in batch]
    if first.num_frames is not None:
        kwargs["num_frames"] = first.num_frames
    for name, image in first.images.items():
        per_item = [r.images[name] for r in batch]
        kwargs["mask_image" if name == "mask" else "image"] = image if task.is_video else per_item
    if "strength" in first.request.scalars():
        kwargs["strength"] = first.request.strength  # type: ignore[attr-defined]

    def step_end(pipeline, i, t, callback_kwargs):
        if cancelled():
            raise Cancelled("cancelled")
        on_step(i + 1, getattr(pipeline, "_num_timesteps", None) or first.steps)
        return recipe.step_end(pipeline, i, callback_kwargs)

    kwargs["callback_on_step_end"] = step_end
    kwargs = {k: v for k, v in kwargs.items() if k in accepts}
    start = time.perf_counter()
    with (
        _stage_clock(pipe, model.device) as stages,
        shifted_patches(pipe) if model.shifted_patches else nullcontext(),  # before the cache
        applied(pipe, RECIPES[first.request.recipe]) as recipe,
        torch.inference_mode(),
    ):
        if recipe.tensor_inputs:
            kwargs["callback_on_step_end_tensor_inputs"] = ["latents", *recipe.tensor_inputs]
        if getattr(first.request, "layout", ""):
            layouts = [
                Layout.parse(r.request.layout).draw(r.request.seed, r.drawn_at)  # type: ignore[attr-defined]
                for r in batch
            ]
            strength = model.preset.layout_strength
            kwargs |= from_layouts(pipe, layouts, kwargs["generator"], first.steps, strength)
        output = pipe(**kwargs)
    drawn = time.perf_counter() - start
    outputs = _frames(output.frames) if task.is_video else [[im] for im in output.images]
    if first.upscaled:  # each picture by its own request: its size is the batch's, not its layout
        outputs = [
            [_upscaled(model, im, r) for im in images]
            for r, images in zip(batch, outputs, strict=True)
        ]
    total = time.perf_counter() - start
    timings = {
        "text_encoding": stages["encode"],
        "image_encoding": stages["vae_encode"],
        "decoding": stages["vae_decode"],
        "denoising": drawn - stages["encode"] - stages["vae_encode"] - stages["vae_decode"],
        "upscaling": total - drawn,
        "total": total,
    }
    per_item = {k: v / len(batch) for k, v in timings.items()}
    return [
        Result(
            images,
            _params(model, r),
            dict(per_item, batch_size=len(batch)),
            r.fps,
            r.warnings,
            recipe.stats.skipped_fraction,
        )
        for r, images in zip(batch, outputs, strict=True)
    ]


def _upscaled(model: LoadedModel, image: Image.Image, r: Resolved) -> Image.Image:
    if model.upscaler is None:
        raise ModelUnavailable(
            f"{model.preset.id} draws {r.width}x{r.height} through its upscaler, which is not "
            f"installed (engine/weights/{model.preset.id}/{UPSCALER_FOLDER}); ask for "
            f"{r.drawn_at[0]}x{r.drawn_at[1]} or reinstall Spotforge"
        )
    final = upscale(model.upscaler, image, (r.width, r.height))
    if layout := getattr(r.request, "layout", ""):
        drawn_from = Layout.parse(layout)
        scene = drawn_from.draw_scene(r.request.seed, final.size)
        given = drawn_from.draw(r.request.seed, r.drawn_at)
        return with_layout_detail(final, scene.image, given, scene.sun)
    return final


def _params(model: LoadedModel, r: Resolved) -> dict[str, Any]:
    params = {
        **{k: v for k, v in r.request.scalars().items() if k != "preset"},
        "task": r.request.task.value,
        "model_id": model.preset.id,
        "model_revision": model.revision,
        "steps": r.steps,
        "guidance": r.guidance,
        "width": r.width,
        "height": r.height,
        "engine_version": ENGINE_VERSION,
        "device": model.device.type,
        "dtype": str(model.dtype).removeprefix("torch."),
        "priority": int(r.request.priority),
        "inputs_sha256": {n: image_sha256(img) for n, img in r.request.inputs().items()},
    }
    if r.num_frames is not None:
        params.update(num_frames=r.num_frames, fps=r.fps)
    return params


def image_sha256(image: Image.Image) -> str:
    """Hash of the pixels and their layout, independent of any file encoding."""
    digest = hashlib.sha256(f"{image.mode}:{image.size}".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


def _fit(image: Image.Image, width: int, height: int, is_mask: bool) -> Image.Image:
    image = image.convert("L" if is_mask else "RGB")
    if image.size == (width, height):
        return image
    resample = Image.Resampling.NEAREST if is_mask else Image.Resampling.LANCZOS
    return image.resize((width, height), resample)


def _frames(frames: np.ndarray) -> list[list[Image.Image]]:
    clips = np.asarray(frames)
    as_bytes = (np.clip(clips, 0, 1) * 255).round().astype(np.uint8)
    return [[Image.fromarray(frame) for frame in clip] for clip in as_bytes]


@contextmanager
def _stage_clock(pipe, device: torch.device) -> Iterator[dict[str, float]]:
    """Accumulate time spent in the encoders and in the VAE while the pipeline runs."""
    stages = {"encode": 0.0, "vae_encode": 0.0, "vae_decode": 0.0}
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    started: dict[int, float] = {}

    def before(module, args):
        sync()  # on CUDA, work queued earlier must not be counted here
        started[id(module)] = time.perf_counter()

    def after(module, args, output):
        sync()
        stages["encode"] += time.perf_counter() - started.pop(id(module))

    def timed(stage, method):
        def call(*args, **kwargs):
            sync()
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                sync()
                stages[stage] += time.perf_counter() - t0

        return call

    encoders = {
        id(m): m for name in ENCODERS if isinstance(m := getattr(pipe, name, None), torch.nn.Module)
    }
    vae = pipe.vae
    saved = {name: vars(vae)[name] for name in ("encode", "decode") if name in vars(vae)}
    handles = []
    try:
        for module in encoders.values():
            handles += [
                module.register_forward_pre_hook(before),
                module.register_forward_hook(after),
            ]
        vae.encode = timed("vae_encode", vae.encode)
        vae.decode = timed("vae_decode", vae.decode)
        yield stages
    finally:
        for handle in handles:
            handle.remove()
        for name in ("encode", "decode"):
            vars(vae).pop(name, None)  # the class's own method shows through again...
        vars(vae).update(saved)  # ...unless something had set its own before us
