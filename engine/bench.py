"""Side-by-side benchmark: plain diffusers against the engine, same model, seed and steps.

The two run alternately, `runs` times each after one warm-up of each, so drift in machine
speed affects both alike; medians are reported with the engine's fidelity to the baseline
(PSNR and SSIM of its output against the plain pipeline's).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from skimage import data
from skimage.metrics import structural_similarity

from engine.acceleration import RECIPES
from engine.engine import Engine
from engine.errors import ModelUnavailable
from engine.loading import load, with_defaults
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


def bench(
    preset: str,
    task: Task,
    *,
    recipe: str = "exact",
    steps: int | None = None,
    size: tuple[int, int] | None = None,
    runs: int = 3,
    seed: int = 0,
    prompt: str = "a mountain trail at golden hour, photo",
    model_dir: Path = Path("var/models"),
    device: str | None = None,
) -> dict[str, Any]:
    with Engine(device=device, model_dir=model_dir, max_batch=1) as engine:
        baseline_model = load(preset, model_dir, engine.device)
        p = baseline_model.preset
        width, height = size or (p.width, p.height)
        inputs = sample_inputs(task, width, height)
        request = REQUEST_TYPES[task](
            preset=preset,
            prompt=prompt,
            seed=seed,
            steps=steps,
            width=width,
            height=height,
            recipe=recipe,
            priority=Priority.INTERACTIVE,
            **inputs,
        )
        pipe = baseline_model.pipeline(task)
        kwargs = _plain_kwargs(request, p, engine, width, height, steps or p.steps)

        def baseline() -> list[Image.Image]:
            out = pipe(**kwargs, generator=torch.Generator("cpu").manual_seed(seed))
            if task.is_video:
                frames = (np.clip(np.asarray(out.frames[0]), 0, 1) * 255).round()
                return [Image.fromarray(f.astype(np.uint8)) for f in frames]
            return out.images

        def engine_run() -> list[Image.Image]:
            # Each run pays for its own text encoding, as a request with a new prompt would.
            engine.pool.get(preset).forget_encodings()
            result = engine.generate(request)
            skipped.append(result.skipped_blocks)
            last_prompt[:] = [result.params["prompt"]]
            return result.images

        skipped: list[float] = []
        last_prompt: list[str] = []

        times: dict[str, list[float]] = {"baseline": [], "engine": []}
        outputs: dict[str, list[Image.Image]] = {}
        outputs["engine"] = engine_run()  # warm-up; also the outputs compared
        # The baseline reads the prompt as the engine's model did (mini-sd drops unknown words).
        kwargs["prompt"] = last_prompt[0]
        outputs["baseline"] = baseline()
        for _ in range(runs):
            for name, fn in (("baseline", baseline), ("engine", engine_run)):
                start = time.perf_counter()
                fn()
                _sync(engine.device)
                times[name].append(time.perf_counter() - start)
        baseline_s = statistics.median(times["baseline"])
        engine_s = statistics.median(times["engine"])
        return {
            "preset": preset,
            "task": task.value,
            "recipe": recipe,
            "steps": steps or p.steps,
            "size": f"{width}x{height}",
            "device": engine.device.type,
            "runs": runs,
            "baseline_s": round(baseline_s, 4),
            "engine_s": round(engine_s, 4),
            "speedup": round(baseline_s / engine_s, 3),
            "skipped_blocks": round(statistics.median(skipped), 3),
            "psnr_db": psnr(outputs["engine"], outputs["baseline"]),
            "max_abs_err": max_abs_error(outputs["engine"], outputs["baseline"]),
            "ssim": round(ssim(outputs["engine"], outputs["baseline"]), 5),
        }


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
        ("tiny-sd", Task.TEXT_TO_IMAGE),
        ("tiny-flux", Task.TEXT_TO_IMAGE),
        ("tiny-wan", Task.TEXT_TO_VIDEO),
    ],
    # Real models, pulled beforehand; meant for a GPU (bf16/fp16 per preset). mini-sd first: it
    # ships with Spotforge, so the suite measures something even where nothing was pulled.
    "gpu": [
        ("mini-sd", Task.TEXT_TO_IMAGE),
        ("sdxl", Task.TEXT_TO_IMAGE),
        ("flux-schnell", Task.TEXT_TO_IMAGE),
        ("wan2.1-t2v-1.3b", Task.TEXT_TO_VIDEO),
    ],
}
COLUMNS = ("preset", "task", "recipe", "steps", "size", "device", "baseline_s", "engine_s",
           "speedup", "skipped_blocks", "psnr_db", "ssim", "max_abs_err")  # fmt: skip


def suite(name: str, *, runs: int, budget_s: float, **options) -> Iterator[dict[str, Any]]:
    """Bench rows for every (preset, task) of a suite and every recipe, within a time budget;
    a model that is not here or a budget spent gives a row saying so instead of numbers."""
    deadline = time.monotonic() + budget_s
    for preset, task in SUITES[name]:
        for recipe in RECIPES:
            row: dict[str, Any] = {"preset": preset, "task": task.value, "recipe": recipe}
            if time.monotonic() > deadline:
                yield {**row, "note": "not run: time budget spent"}
                continue
            try:
                yield bench(preset, task, recipe=recipe, runs=runs, **options)
            except ModelUnavailable as exc:
                yield {**row, "note": f"not run: {exc}"}


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " | note |", "|" + "---|" * (len(COLUMNS) + 1)]
    for row in rows:
        cells = [str(row.get(c, "")) for c in COLUMNS]
        lines.append("| " + " | ".join(cells) + f" | {row.get('note', '')} |")
    return "\n".join(lines)


def max_abs_error(a: list[Image.Image], b: list[Image.Image]) -> float:
    """Largest difference of any channel of any pixel, on a 0-1 scale (one 8-bit level: 0.004)."""
    x = np.stack([np.asarray(i, dtype=np.float64) for i in a])
    y = np.stack([np.asarray(i, dtype=np.float64) for i in b])
    return round(float(np.abs(x - y).max()) / 255, 5)


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
