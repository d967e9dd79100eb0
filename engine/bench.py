"""Side-by-side benchmark: plain diffusers against one of our recipes or a peer's method, on
the same model, prompts, seeds and steps.

Several prompts and seeds that no recipe was tuned on, each an adjacent pair of runs, so drift
in machine speed affects both alike; the speedup is the median and range over pairs, fidelity
the mean and worst PSNR and SSIM of the method's picture against the plain pipeline's.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from skimage import data
from skimage.metrics import structural_similarity

from engine import bench_peers
from engine.acceleration import RECIPES
from engine.engine import Engine
from engine.errors import ModelUnavailable
from engine.loading import load, preset_for, with_defaults
from engine.patch_shift import shifted_patches as shifted
from engine.reference import first_frame
from engine.requests import REQUEST_TYPES, Priority, Request, Task


def sample_inputs(task: Task, width: int, height: int) -> dict[str, Image.Image]:
    """A real photograph (scikit-image's espresso cup) and a centred mask."""
    photo = Image.fromarray(data.coffee()).convert("RGB")
    if task is Task.REFERENCE_TO_VIDEO:
        return {"reference": photo}
    if task in (Task.TEXT_TO_IMAGE, Task.TEXT_TO_VIDEO):
        return {}
    inputs = {"image": photo.resize((width, height), Image.Resampling.LANCZOS)}
    if task is Task.INPAINT:
        mask = Image.new("L", (width, height), 0)
        mask.paste(255, (width // 4, height // 4, 3 * width // 4, 3 * height // 4))
        inputs["mask"] = mask
    return inputs


# Held out from tuning: the recipes were tuned on "a mountain trail at golden hour, photo" at
# seed 0. Words mini-sd knows, so its pictures are real scenes; other models read any text.
HELD_OUT_PROMPTS = (
    "pine forest at night, cloudy",
    "desert dunes during the day, clear",
    "city skyline at golden hour, clear",
    "beach and ocean at night, clear",
)
HELD_OUT_SEEDS = (101, 202, 303)


def bench(
    preset: str,
    task: Task,
    *,
    method: str = "exact",
    steps: int | None = None,
    size: tuple[int, int] | None = None,
    prompts: Sequence[str] = HELD_OUT_PROMPTS,
    seeds: Sequence[int] = HELD_OUT_SEEDS,
    model_dir: Path = Path("var/models"),
    device: str | None = None,
    cuda_graphs: bool = False,
    shifted_patches: bool = False,
) -> dict[str, Any]:
    """Plain diffusers against `method` (one of our recipes, run by the engine, or a peer,
    `engine.bench_peers`, applied to the plain pipeline object) on every prompt x seed.

    Each prompt and seed is one adjacent pair, timed in process CPU time on a CPU (all threads,
    unmoved by other load's share of the wall clock) and in synchronised wall time on a GPU;
    the speedup is reported as the median and range over pairs, fidelity as the mean and worst
    PSNR and SSIM against the plain pipeline's picture of the same pair.

    Every model is sampled as plain diffusers samples it, unless `shifted_patches`: then a
    preset drawn with shifted patches (`engine.patch_shift`) is, baseline and recipe alike, so
    the recipes (and our caches at any setting) are measured as the product runs them. Peers
    are measured on plain sampling only, as their users run them (their block caches would
    compare two patch grids)."""
    _check_sampling(method, shifted_patches, preset)
    peer = None if method in RECIPES else bench_peers.parse(method)
    engine_options = {"cuda_graphs": cuda_graphs, "shifted_patches": shifted_patches}
    with Engine(device=device, model_dir=model_dir, max_batch=1, **engine_options) as engine:
        baseline_model = load(preset, model_dir, engine.device, shifted_patches=shifted_patches)
        p = baseline_model.preset
        width, height = size or (p.width, p.height)
        inputs = sample_inputs(task, width, height)
        pipe = baseline_model.pipeline(task)
        clock = time.perf_counter if engine.device.type == "cuda" else time.process_time

        def request_for(prompt: str, seed: int, recipe: str) -> Request:
            return REQUEST_TYPES[task](
                preset=preset, prompt=prompt, seed=seed, steps=steps, width=width,
                height=height, recipe=recipe, priority=Priority.INTERACTIVE, **inputs,
            )  # fmt: skip

        def plain_kwargs(prompt: str, seed: int) -> dict[str, Any]:
            request = request_for(prompt, seed, "exact")
            return _plain_kwargs(request, p, engine, width, height, steps or p.steps)

        def sampling():
            """The preset's sampling for a plain call, entered before any peer is attached."""
            return shifted(pipe) if baseline_model.shifted_patches else contextlib.nullcontext()

        def plain(prompt: str, seed: int, call=pipe) -> list[Image.Image]:
            out = call(**plain_kwargs(prompt, seed),
                       generator=torch.Generator("cpu").manual_seed(seed))  # fmt: skip
            if task.is_video:
                frames = (np.clip(np.asarray(out.frames[0]), 0, 1) * 255).round()
                return [Image.fromarray(f.astype(np.uint8)) for f in frames]
            return out.images

        skipped: list[float] = []

        def ours(prompt: str, seed: int) -> list[Image.Image]:
            # Each run pays for its own text encoding, as a request with a new prompt would.
            engine.pool.get(preset).forget_encodings()
            result = engine.generate(request_for(prompt, seed, method))
            skipped.append(result.skipped_blocks)
            return result.images

        def timed(fn, *args) -> tuple[list[Image.Image], float]:
            start = clock()
            images = fn(*args)
            _sync(engine.device)
            return images, clock() - start

        def method_run(prompt: str, seed: int) -> tuple[list[Image.Image], float]:
            if peer is None:
                return timed(ours, prompt, seed)
            # A peer is attached (and, for MagCache, calibrated) outside the clock.
            with sampling(), peer.applied(pipe, plain_kwargs(read[prompt], seed)) as call:
                return timed(plain, read[prompt], seed, call)

        # The words each prompt keeps, as the engine's model reads them (ours drop unknown
        # words), so the plain pipeline is asked the same; these runs also warm both paths.
        read = {
            prompt: engine.generate(request_for(prompt, seeds[0], "exact")).params["prompt"]
            for prompt in prompts
        }
        with sampling():
            plain(read[prompts[0]], seeds[0])
        try:
            method_run(prompts[0], seeds[0])
        except Exception as exc:  # a peer's package may not support this model
            if peer is None:
                raise
            raise ModelUnavailable(f"{method} does not run on {preset}: {exc!r}") from exc
        pairs = []
        for prompt in prompts:
            for seed in seeds:
                mine, mine_s = method_run(prompt, seed)
                with sampling():
                    base, base_s = timed(plain, read[prompt], seed)
                pairs.append((base_s / mine_s, psnr(mine, base), ssim(mine, base)))
        speedups, psnrs, ssims = (np.array(column) for column in zip(*pairs, strict=True))
        return {
            "preset": preset,
            "task": task.value,
            "method": method,
            "steps": steps or p.steps,
            "size": f"{width}x{height}",
            "device": engine.device.type + (" with CUDA graphs" if cuda_graphs else ""),
            "sampler": "shifted patches" if baseline_model.shifted_patches else "plain",
            "clock": "wall, synchronised" if engine.device.type == "cuda" else "process CPU",
            "pairs": len(pairs),
            "load": round(os.getloadavg()[0], 2),
            "speedup": round(float(np.median(speedups)), 3),
            "speedup_range": [round(float(speedups.min()), 3), round(float(speedups.max()), 3)],
            "psnr_mean": round(float(psnrs.mean()), 2),
            "psnr_worst": round(float(psnrs.min()), 2),
            "ssim_mean": round(float(ssims.mean()), 4),
            "ssim_worst": round(float(ssims.min()), 4),
            "skipped_blocks": round(statistics.median(skipped), 3) if skipped else None,
        }


def _check_sampling(method: str, shifted_patches: bool, preset: str) -> None:
    shifted = shifted_patches and preset_for(preset).shifted_patches
    if shifted and method not in RECIPES and not bench_peers.is_ours(method):
        raise ValueError(f"{method} is measured on plain sampling: leave out shifted patches")


def _plain_kwargs(request: Request, preset, engine: Engine, width, height, steps) -> dict:
    """The call a diffusers user would write for this request."""
    filled = with_defaults(request, preset)
    kwargs: dict[str, Any] = dict(
        prompt=request.prompt,
        num_inference_steps=steps,
        guidance_scale=filled.guidance,
        height=height,
        width=width,
        output_type="np" if request.task.is_video else "pil",
        **dict(preset.call_options),
    )
    if request.task.is_video:
        kwargs["num_frames"] = filled.num_frames
    if request.task is Task.REFERENCE_TO_VIDEO:
        kwargs["image"] = first_frame(request, engine.segmenter, width, height)
    elif "image" in request.inputs():
        kwargs["image"] = request.image  # type: ignore[attr-defined]
    if request.task is Task.INPAINT:
        kwargs["mask_image"] = request.mask  # type: ignore[attr-defined]
    if request.task in (Task.IMAGE_TO_IMAGE, Task.INPAINT):
        kwargs["strength"] = request.strength  # type: ignore[attr-defined]
    return kwargs


# What `spotforge bench --suite` measures: every recipe on each (preset, task).
SUITES: dict[str, list[tuple[str, Task]]] = {
    "cpu": [
        ("mini-sd", Task.TEXT_TO_IMAGE),
        ("mini-sd", Task.IMAGE_TO_IMAGE),
        ("mini-sd", Task.INPAINT),
        ("mini-dit", Task.TEXT_TO_IMAGE),
        ("mini-dit", Task.IMAGE_TO_IMAGE),
        ("tiny-sd", Task.TEXT_TO_IMAGE),
        ("tiny-flux", Task.TEXT_TO_IMAGE),
        ("tiny-wan", Task.TEXT_TO_VIDEO),
    ],
    # Real models, pulled beforehand; meant for a GPU (bf16/fp16 per preset). mini-sd and
    # mini-dit first: they ship with Spotforge, so the suite measures something where nothing
    # was pulled.
    "gpu": [
        ("mini-sd", Task.TEXT_TO_IMAGE),
        ("mini-dit", Task.TEXT_TO_IMAGE),
        ("sdxl", Task.TEXT_TO_IMAGE),
        ("flux-schnell", Task.TEXT_TO_IMAGE),
        ("wan2.1-t2v-1.3b", Task.TEXT_TO_VIDEO),
    ],
}
COLUMNS = ("preset", "task", "method", "steps", "size", "device", "sampler", "pairs", "speedup",
           "speedup_range", "psnr_mean", "psnr_worst", "ssim_mean", "ssim_worst",
           "skipped_blocks")  # fmt: skip


def methods(preset: str, task: Task, names: Sequence[str], **options) -> Iterator[dict[str, Any]]:
    """Bench rows for each of `names` on one model, as each is measured; a method that cannot
    run on this model gives a row saying why, and the others still run. A misspelt name fails
    before anything runs."""
    for name in names:
        if name not in RECIPES:  # a missing package is said in that method's row instead
            with contextlib.suppress(ModelUnavailable):
                bench_peers.parse(name)
        _check_sampling(name, options.get("shifted_patches", False), preset)
    for name in names:
        try:
            yield bench(preset, task, method=name, **options)
        except ModelUnavailable as exc:
            yield {"preset": preset, "task": task.value, "method": name, "note": f"not run: {exc}"}


def suite(name: str, *, budget_s: float, **options) -> Iterator[dict[str, Any]]:
    """Bench rows for every (preset, task) of a suite and every recipe, within a time budget;
    a model that is not here or a budget spent gives a row saying so instead of numbers."""
    deadline = time.monotonic() + budget_s
    for preset, task in SUITES[name]:
        for recipe in RECIPES:
            row: dict[str, Any] = {"preset": preset, "task": task.value, "method": recipe}
            if time.monotonic() > deadline:
                yield {**row, "note": "not run: time budget spent"}
                continue
            try:
                yield bench(preset, task, method=recipe, **options)
            except ModelUnavailable as exc:
                yield {**row, "note": f"not run: {exc}"}


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " | note |", "|" + "---|" * (len(COLUMNS) + 1)]
    for row in rows:
        cells = [str(row.get(c, "")) for c in COLUMNS]
        lines.append("| " + " | ".join(cells) + f" | {row.get('note', '')} |")
    return "\n".join(lines)


def psnr(a: list[Image.Image], b: list[Image.Image]) -> float:
    """Peak signal-to-noise ratio over all frames, in dB; inf when identical."""
    x = np.stack([np.asarray(i, dtype=np.float64) for i in a])
    y = np.stack([np.asarray(i, dtype=np.float64) for i in b])
    mse = float(np.mean((x - y) ** 2))
    return float("inf") if mse == 0 else round(10 * np.log10(255.0**2 / mse), 2)


def ssim(a: list[Image.Image], b: list[Image.Image]) -> float:
    scores = [
        structural_similarity(np.asarray(x), np.asarray(y), channel_axis=2, data_range=255)
        for x, y in zip(a, b, strict=True)
    ]
    return float(np.mean(scores))


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
