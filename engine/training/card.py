"""What a trained model (mini-sd, mini-dit) is shown by: a grid of its scenes, how well a
classifier recognises what it draws, and a model card with the data, the plan, the loss curve
and the licence."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict
from pathlib import Path

import torch
from PIL import Image, ImageDraw, ImageFont

from engine.presets import Preset
from engine.training.classifier import SceneClassifier
from engine.training.model import vocabulary
from engine.training.scenes import ARCHETYPES, TIMES, SceneParams
from engine.training.train import RUN_ORDER, Plan, read_losses

EVAL_SEEDS = 32


def archetype_prompt(archetype: str) -> str:
    """The caption a user would write for a plain daytime view of the archetype."""
    return SceneParams(archetype, "day", "clear", 0).caption


# What each model's card says it is, and the training stages its loss table shows.
MODELS = {
    "mini-sd": (
        "Spotforge's own small latent diffusion model: the Stable Diffusion 1.x architecture in "
        "miniature (AutoencoderKL, CLIP text encoder, conditional UNet, epsilon prediction on "
        "the scaled-linear schedule), so it runs through the standard diffusers "
        "text-to-image, image-to-image and inpaint pipelines. Output 128x128.",
        RUN_ORDER,
        ("vae", "text_encoder", "unet"),
    ),
    "mini-dit": (
        "Spotforge's own small diffusion transformer: the Stable Diffusion 3 architecture in "
        "miniature (an MMDiT with joint caption-image attention, two CLIP text encoders, no "
        "T5, rectified-flow training, the flow-matching Euler sampler), on mini-sd's "
        "autoencoder, so it runs through the standard diffusers SD3 pipelines "
        "(`text_encoder_3=None`). Output 128x128.",
        ("dit",),
        ("vae", "text_encoder", "text_encoder_2", "transformer"),
    ),
}


def generate(
    pipe, prompt: str, seeds: range, steps: int, guidance: float, **options
) -> list[Image.Image]:
    """One image per seed, the engine's way: a CPU generator seeded per image. `options` are
    the preset's `call_options`."""
    with torch.inference_mode():
        return pipe(
            [prompt] * len(seeds),
            num_inference_steps=steps,
            guidance_scale=guidance,
            generator=[torch.Generator().manual_seed(s) for s in seeds],
            **options,
        ).images


def archetype_accuracy(
    pipe, steps: int, guidance: float, seeds: int = EVAL_SEEDS, **options
) -> dict[str, float]:
    """Per archetype: the share of `seeds` images from its caption the classifier recognises."""
    classifier = SceneClassifier.fit()
    return {
        archetype: classifier.accuracy(
            generate(pipe, archetype_prompt(archetype), range(seeds), steps, guidance, **options),
            archetype,
        )
        for archetype in ARCHETYPES
    }


def grid(pipe, steps: int, guidance: float, seed: int = 0, **options) -> Image.Image:
    """Archetype (rows) x time of day (columns), clear weather, one seed, labelled."""
    size, label = 128, 150
    font = ImageFont.load_default(size=14)
    sheet = Image.new("RGB", (label + size * len(TIMES), 24 + size * len(ARCHETYPES)), "white")
    draw = ImageDraw.Draw(sheet)
    for col, time in enumerate(TIMES):
        draw.text((label + col * size + 6, 4), time, fill="black", font=font)
    for row, archetype in enumerate(ARCHETYPES):
        draw.text((6, 24 + row * size + 56), ARCHETYPES[archetype], fill="black", font=font)
        prompts = [SceneParams(archetype, t, "clear", 0).caption for t in TIMES]
        with torch.inference_mode():
            images = pipe(
                prompts,
                num_inference_steps=steps,
                guidance_scale=guidance,
                generator=[torch.Generator().manual_seed(seed) for _ in prompts],
                **options,
            ).images
        for col, image in enumerate(images):
            sheet.paste(image, (label + col * size, 24 + row * size))
    return sheet


def write_card(
    plan: Plan, work: Path, out: Path, grid_path: Path, preset: Preset, command: str
) -> dict[str, float]:
    """Grid and accuracy of the pipeline in `out`, and its model card `out/README.md`."""
    from engine.loading import load

    pipe = load(str(out), Path("var/models"), torch.device("cpu")).base
    options = dict(preset.call_options)
    steps, guidance = preset.steps, preset.guidance
    grid_path.parent.mkdir(parents=True, exist_ok=True)
    grid(pipe, steps, guidance, **options).save(grid_path)
    accuracy = archetype_accuracy(pipe, steps, guidance, **options)
    parts = MODELS[preset.id][2]
    params = {name: sum(p.numel() for p in getattr(pipe, name).parameters()) for name in parts}
    (out / "README.md").write_text(_card(preset, plan, work, params, accuracy, command, grid_path))
    return accuracy


def _card(preset: Preset, plan, work, params, accuracy, command, grid_path) -> str:
    summary, stages, _ = MODELS[preset.id]
    steps, guidance = preset.steps, preset.guidance
    lines = [
        f"# {preset.id}",
        "",
        summary,
        "",
        licence("scenes.py"),
        "",
        "## Data",
        "",
        f"{plan.images} scenes, 128x128, balanced over 8 archetypes x 3 times of day x 2 "
        "weathers, each captioned from its parameters (e.g. `city skyline at night, cloudy`). "
        "Captions are randomly shortened (no weather, no time, place only) or dropped (10 %, "
        "for classifier-free guidance) during training.",
        "",
        "Vocabulary (anything else is dropped with a warning): "
        + ", ".join(f"`{w}`" for w in vocabulary()),
        "",
        *model_section(params),
        f"Weights stored in float16 safetensors. Defaults: {steps} steps, guidance {guidance:g}.",
        "",
        *training_section(command, plan, work, stages),
        "## Evaluation",
        "",
        f"A softmax classifier over colour and layout statistics, trained on fresh procedural "
        f"scenes, labels {EVAL_SEEDS} generated images per archetype (seeds 0-{EVAL_SEEDS - 1}, "
        "prompt `<archetype> during the day, clear`):",
        "",
        "| archetype | recognised |",
        "|---|---|",
        *(f"| {ARCHETYPES[a]} | {v:.0%} |" for a, v in accuracy.items()),
        "",
        _gaps(accuracy),
        "",
        f"Grid (archetype x time of day, seed 0): `{grid_path.as_posix()}`.",
        "",
    ]
    return "\n".join(lines)


def licence(drawn_by: str) -> str:
    """A card's licence line: the weights are ours, from the scenes `drawn_by` draws."""
    return (
        "**Licence:** Apache-2.0. Trained from scratch by Spotforge only on procedural scenes "
        f"drawn by `engine/training/{drawn_by}`; no third-party images or weights."
    )


def model_section(params: dict[str, int]) -> list[str]:
    """A card's "Model": the parameters of each part."""
    rows = [f"| {name} | {n / 1e6:.2f} M |" for name, n in params.items()]
    return ["## Model", "", "| part | parameters |", "|---|---|", *rows, ""]


def replace_evaluation(readme: Path, lines: list[str]) -> None:
    """A card re-measured: its "## Evaluation" section replaced by `lines`, the data and
    training sections it was written with kept (they need the training's work folder)."""
    kept = readme.read_text().split("## Evaluation")[0]
    readme.write_text(kept + "\n".join(lines))


def training_section(command: str, plan, work: Path, stages) -> list[str]:
    """A card's "Training": the command, how long its stages took, the plan, the loss curve."""
    seconds = sum(rows[-1][2] for s in stages if (rows := read_losses(work, s)))
    return [
        "## Training",
        "",
        f"Command: `{command}` (seeded, resumable; {seconds / 60:.0f} min of training on the "
        f"machine that made these weights, {torch.get_num_threads()} CPU threads).",
        "",
        "```json",
        json.dumps(asdict(plan), indent=1),
        "```",
        "",
        "Loss (mean over each tenth of a stage):",
        "",
        "| stage | " + " | ".join(f"{10 * (i + 1)} %" for i in range(10)) + " |",
        "|---|" + "---|" * 10,
        *(_loss_row(work, stage) for stage in stages),
        "",
    ]


def _loss_row(work: Path, stage: str) -> str:
    losses = [loss for _, loss, _ in read_losses(work, stage)]
    if not losses:
        return f"| {stage} |" + " - |" * 10
    tenth = max(1, len(losses) // 10)
    windows = [losses[i * tenth : (i + 1) * tenth] or losses[-1:] for i in range(10)]
    means = [statistics.fmean(window) for window in windows]
    return f"| {stage} | " + " | ".join(f"{m:.4f}" for m in means) + " |"


def _gaps(accuracy: dict[str, float], bar: float = 0.8) -> str:
    below = [f"{ARCHETYPES[a]} ({v:.0%})" for a, v in accuracy.items() if v < bar]
    if not below:
        return f"Every archetype is recognised in at least {bar:.0%} of seeds."
    return f"Below the {bar:.0%} bar: {', '.join(below)}. A longer run should close this."
