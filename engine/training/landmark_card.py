"""What landmark-dit is shown by: how often the project's scene classifier (fitted on the
procedural landmark scenes) names the geography a generated picture was asked for, a contact
sheet of every geography in every light at 1:1, and its model card."""

from __future__ import annotations

import statistics
from pathlib import Path

import torch
from diffusers import DiffusionPipeline
from PIL import Image, ImageDraw, ImageFont

from engine.training.card import licence, model_section, training_section
from engine.training.classifier import SceneClassifier
from engine.training.landmark_dit import (
    CAPTION_FORMS,
    LATENT_CHANNELS,
    LandmarkPlan,
    caption,
    vocabulary,
)
from engine.training.landmarks import SIGNATURES, TRAIN_SIZE, LandmarkParams
from engine.training.scenes import TIMES, WEATHER

STEPS, GUIDANCE = 20, 4.0  # the preset's defaults
SEEDS_PER_LIGHT = 4  # 12 pictures a geography: 4 seeds in each light, clear and cloudy in turn
CALL = {"max_sequence_length": 0}  # no T5 tokens (the preset's call options)


def load(out: Path):
    return DiffusionPipeline.from_pretrained(
        out, text_encoder_3=None, tokenizer_3=None, torch_dtype=torch.float32
    )


def recognition(pipe, seeds_per_light: int = SEEDS_PER_LIGHT) -> dict[str, float]:
    """Per geography: the share of its generated pictures (every light, seeds 0 and up, the
    full caption) that the classifier names as that geography."""
    classifier = SceneClassifier.fit(target="geography")
    scores = {}
    for geography in SIGNATURES:
        asked = [
            LandmarkParams(geography, light, WEATHER[seed % 2], seed)
            for light in TIMES
            for seed in range(seeds_per_light)
        ]
        images = draw(pipe, [p.caption for p in asked], [p.seed for p in asked])
        scores[geography] = classifier.accuracy(images, geography)
    return scores


def draw(pipe, prompts: list[str], seeds: list[int]) -> list[Image.Image]:
    """One 256x144 picture per prompt, the engine's way: a CPU generator seeded per image."""
    with torch.inference_mode():
        return pipe(
            prompts,
            num_inference_steps=STEPS,
            guidance_scale=GUIDANCE,
            width=TRAIN_SIZE[0],
            height=TRAIN_SIZE[1],
            generator=[torch.Generator().manual_seed(s) for s in seeds],
            **CALL,
        ).images


def contact_sheet(pipe, seed: int = 0) -> Image.Image:
    """Every geography (rows) in every light (columns), clear, one seed, each at 1:1."""
    width, height = TRAIN_SIZE
    label_w = 190
    sheet = Image.new("RGB", (label_w + 3 * (width + 4), len(SIGNATURES) * (height + 4)), "white")
    pen, font = ImageDraw.Draw(sheet), ImageFont.load_default(13)
    for row, geography in enumerate(SIGNATURES):
        y = row * (height + 4)
        pen.text((6, y + height // 2 - 8), geography, fill="black", font=font)
        prompts = [LandmarkParams(geography, t, "clear", seed).caption for t in TIMES]
        for col, image in enumerate(draw(pipe, prompts, [seed] * len(prompts))):
            sheet.paste(image, (label_w + col * (width + 4), y))
    return sheet


def write_landmark_card(
    plan: LandmarkPlan, work: Path, out: Path, sheet_path: Path, command: str
) -> dict[str, float]:
    """Recognition and contact sheet of the pipeline in `out`, and its card `out/README.md`."""
    pipe = load(out).to(plan.device)
    sheet_path.parent.mkdir(parents=True, exist_ok=True)
    contact_sheet(pipe).save(sheet_path)
    scores = recognition(pipe)
    parts = ("vae", "text_encoder", "text_encoder_2", "transformer")
    params = {name: sum(p.numel() for p in getattr(pipe, name).parameters()) for name in parts}
    below = [f"{g} ({v:.0%})" for g, v in scores.items() if v < 0.9]
    example = caption(LandmarkParams("San Francisco Bay Area", "golden", "clear", 0), "full")
    card = [
        "# landmark-dit",
        "",
        "Model v2's first stage: Spotforge's own diffusion transformer for the built-in "
        "geographies' landmark scenes, drawn natively in 16:9 at 256x144 (the Stable Diffusion "
        f"3 architecture in miniature: an MMDiT, two CLIP text encoders, no T5, rectified flow; "
        f"its own DC autoencoder at x8 with {LATENT_CHANNELS} latent channels). It runs through "
        "diffusers' SD3 text-to-image pipeline (`text_encoder_3=None`). A second stage, "
        "`landmark-upscaler`, is to take its picture to 1920x1080. See "
        "`engine/training/landmark_dit.py`.",
        "",
        licence("landmarks.py"),
        "",
        "## Data",
        "",
        f"{plan.images} landmark scenes, 256x144, balanced over {len(SIGNATURES)} geographies "
        f"x {len(TIMES)} lights x {len(WEATHER)} weathers, each captioned from its parameters "
        f"(e.g. `{example}`). Caption forms during training: {', '.join(CAPTION_FORMS)} (empty: "
        "for classifier-free guidance).",
        "",
        "Vocabulary (anything else is dropped with a warning): "
        + ", ".join(f"`{w}`" for w in vocabulary()),
        "",
        *model_section(params),
        f"Weights stored in float16 safetensors. Defaults: {STEPS} steps, guidance "
        f"{GUIDANCE:g}. Trained on "
        + ("a 2-core CPU machine (no GPU)." if plan.device == "cpu" else f"a GPU ({plan.device})."),
        "",
        *training_section(command, plan, work, ("vae", "dit", "dit-tune")),
        "## Evaluation",
        "",
        f"The project's scene classifier (`engine/training/classifier.py`, fitted on procedural "
        f"landmark scenes at held-out seeds) names the geography of "
        f"{SEEDS_PER_LIGHT * len(TIMES)} generated pictures per geography (seeds "
        f"0-{SEEDS_PER_LIGHT - 1} in each light, clear and cloudy in turn, the full caption):",
        "",
        "| geography | recognised |",
        "|---|---|",
        *(f"| {g} | {v:.0%} |" for g, v in scores.items()),
        "",
        f"Median {statistics.median(scores.values()):.0%}, lowest {min(scores.values()):.0%}. "
        + (f"Below 90 %: {', '.join(below)}." if below else "Every geography is at 90 % or more."),
        "",
        f"Contact sheet (geography x light, seed 0, 1:1): `{sheet_path.as_posix()}`.",
        "",
    ]
    (out / "README.md").write_text("\n".join(card))
    return scores
