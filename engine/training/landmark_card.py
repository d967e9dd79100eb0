"""What landmark-dit is shown by: how often the project's two judges, both fitted on the
procedural landmark scenes, name the geography a generated picture was asked for (the scene
classifier by its colours and layout, the shape judge by its outlines), a contact sheet of
every geography in every light at 1:1, and its model card."""

from __future__ import annotations

import statistics
from contextlib import nullcontext
from pathlib import Path

import torch
from diffusers import DiffusionPipeline
from PIL import Image, ImageDraw, ImageFont

from engine.detail import patch_grid
from engine.layouts import Layout, from_layouts
from engine.patch_shift import shifted_patches
from engine.presets import PRESETS
from engine.training.card import licence, model_section, replace_evaluation, training_section
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
from engine.training.shape_judge import ShapeJudge

STEPS, GUIDANCE = 20, 4.0  # the preset's defaults
LAYOUT_STRENGTH = PRESETS["landmark-dit"].layout_strength  # a built-in place's (engine.layouts)
SEEDS_PER_LIGHT = 4  # 12 pictures a geography: 4 seeds in each light, clear and cloudy in turn
CALL = {"max_sequence_length": 0}  # no T5 tokens (the preset's call options)


def load(out: Path):
    return DiffusionPipeline.from_pretrained(
        out, text_encoder_3=None, tokenizer_3=None, torch_dtype=torch.float32
    )


def recognition(
    pipe, seeds_per_light: int = SEEDS_PER_LIGHT, from_layout: bool = False
) -> dict[str, dict[str, float]]:
    """Per judge ("colour and layout", "shapes"), per geography: the share of its generated
    pictures (every light, seeds 0 and up, the full caption; drawn from noise, or from their
    layouts as the product draws a built-in place) that the judge names as that geography."""
    judges = {
        "colour and layout": SceneClassifier.fit(target="geography"),
        "shapes": ShapeJudge.load(),
    }
    scores: dict[str, dict[str, float]] = {name: {} for name in judges}
    for geography in SIGNATURES:
        asked = [
            LandmarkParams(geography, light, WEATHER[seed % 2], seed)
            for light in TIMES
            for seed in range(seeds_per_light)
        ]
        images = draw(pipe, asked, from_layout=from_layout)
        for name, judge in judges.items():
            scores[name][geography] = judge.accuracy(images, geography)
    return scores


def draw(
    pipe, asked: list[LandmarkParams], shifted: bool = True, from_layout: bool = False
) -> list[Image.Image]:
    """One 256x144 picture per scene asked, by its caption, the engine's way: a CPU generator
    seeded per image, shifted patches (the preset's sampling, `engine.patch_shift`) unless not
    `shifted`, and from noise or from the scene's layout (`engine.layouts`)."""
    generators = [torch.Generator().manual_seed(p.seed) for p in asked]
    start = {}
    if from_layout:
        layouts = [Layout(p.geography, p.time, p.weather).draw(p.seed, TRAIN_SIZE) for p in asked]
        start = from_layouts(pipe, layouts, generators, STEPS, LAYOUT_STRENGTH)
    with torch.inference_mode(), shifted_patches(pipe) if shifted else nullcontext():
        return pipe(
            [p.caption for p in asked],
            num_inference_steps=STEPS,
            guidance_scale=GUIDANCE,
            width=TRAIN_SIZE[0],
            height=TRAIN_SIZE[1],
            generator=generators,
            **start,
            **CALL,
        ).images


def sheet_pictures(
    pipe, seed: int = 0, shifted: bool = True, from_layout: bool = False
) -> dict[str, list[Image.Image]]:
    """Per geography, its picture in every light, clear, one seed."""
    return {
        geography: draw(
            pipe,
            [LandmarkParams(geography, t, "clear", seed) for t in TIMES],
            shifted,
            from_layout,
        )
        for geography in SIGNATURES
    }


def contact_sheet(pictures: dict[str, list[Image.Image]]) -> Image.Image:
    """Every geography (rows) in every light (columns), each at 1:1."""
    width, height = TRAIN_SIZE
    label_w = 190
    sheet = Image.new("RGB", (label_w + 3 * (width + 4), len(pictures) * (height + 4)), "white")
    pen, font = ImageDraw.Draw(sheet), ImageFont.load_default(13)
    for row, (geography, images) in enumerate(pictures.items()):
        y = row * (height + 4)
        pen.text((6, y + height // 2 - 8), geography, fill="black", font=font)
        for col, image in enumerate(images):
            sheet.paste(image, (label_w + col * (width + 4), y))
    return sheet


def evaluation(pipe, sheet_path: Path) -> tuple[list[str], dict[str, dict[str, float]]]:
    """The card's "Evaluation" (recognition per geography by both judges, of pictures drawn
    from noise and from their layouts; the patch grid with and without shifted patches) and
    the recognition scores; writes the contact sheets: the product's (from layouts) to
    `sheet_path`, from noise beside it."""
    noise_path = sheet_path.with_name(f"{sheet_path.stem}-from-noise{sheet_path.suffix}")
    sheet_path.parent.mkdir(parents=True, exist_ok=True)
    contact_sheet(sheet_pictures(pipe, from_layout=True)).save(sheet_path)
    pictures = sheet_pictures(pipe)
    contact_sheet(pictures).save(noise_path)
    grids = {
        name: statistics.median(patch_grid(im) for ims in drawn.values() for im in ims)
        for name, drawn in (("shifted", pictures), ("plain", sheet_pictures(pipe, shifted=False)))
    }
    noise, layout = recognition(pipe), recognition(pipe, from_layout=True)
    scores = {**noise, **{f"{name}, from its layout": v for name, v in layout.items()}}

    def summary(judged: dict[str, float]) -> str:
        below = [f"{g} ({v:.0%})" for g, v in judged.items() if v < 0.9]
        return (
            f"median {statistics.median(judged.values()):.0%}, lowest {min(judged.values()):.0%}, "
            f"{len(judged) - len(below)} of {len(judged)} at 90 % or more"
            + (f"; below: {', '.join(below)}" if below else "")
        )

    judged = [(f"From noise, by {n}", noise[n]) for n in noise]
    judged += [(f"From its layout, by {n}", layout[n]) for n in layout]
    lines = [
        "## Evaluation",
        "",
        "Pictures are drawn as Spotforge draws them, with shifted patches "
        "(`engine/patch_shift.py`: every other step the transformer sees the latents half a "
        "patch over, which evens out the seams of its 2x2 patches); plain `from_pretrained` "
        "sampling draws the same model with its 16-pixel patch grid showing. Patch grid "
        "(`engine/detail.py`'s `patch_grid`, 1 where no grid shows), median over the "
        f"from-noise contact sheet's pictures: {grids['shifted']:.2f} with shifted patches, "
        f"{grids['plain']:.2f} with plain sampling.",
        "",
        "A built-in place is drawn from its layout (`engine/layouts.py`): the procedural scene "
        "of the place at the picture's seed, noised to the last part of the schedule "
        f"(strength {LAYOUT_STRENGTH:g}) and denoised by the model from there, as SDEdit does; "
        "from noise alone the model draws the place's colours and horizon but seldom its "
        "landmark. Any other prompt is drawn from noise.",
        "",
        f"Two judges, both fitted on procedural landmark scenes at held-out seeds, name the "
        f"geography of {SEEDS_PER_LIGHT * len(TIMES)} generated pictures per geography (seeds "
        f"0-{SEEDS_PER_LIGHT - 1} in each light, clear and cloudy in turn, the full caption): "
        "the scene classifier (`engine/training/classifier.py`) by colour and layout, and the "
        "shape judge (`engine/training/shape_judge.py`) by outlines, with colour taken from "
        "it (stricter, but not a detector of landmarks alone: it also reads the layout).",
        "",
        "| geography | from noise: by colour and layout | by shapes "
        "| from its layout: by colour and layout | by shapes |",
        "|---|---|---|---|---|",
        *(
            f"| {g} | {noise['colour and layout'][g]:.0%} | {noise['shapes'][g]:.0%} "
            f"| {layout['colour and layout'][g]:.0%} | {layout['shapes'][g]:.0%} |"
            for g in SIGNATURES
        ),
        "",
        *(line for name, scored in judged for line in (f"{name}: {summary(scored)}.", "")),
        f"Contact sheets (geography x light, seed 0, 1:1): from layouts, as the product draws "
        f"a built-in place, `{sheet_path.as_posix()}`; from noise, `{noise_path.as_posix()}`.",
        "",
    ]
    return lines, scores


def write_landmark_card(
    plan: LandmarkPlan, work: Path, out: Path, sheet_path: Path, command: str
) -> dict[str, dict[str, float]]:
    """Recognition and contact sheet of the pipeline in `out`, and its card `out/README.md`."""
    pipe = load(out).to(plan.device)
    evaluated, scores = evaluation(pipe, sheet_path)
    parts = ("vae", "text_encoder", "text_encoder_2", "transformer")
    params = {name: sum(p.numel() for p in getattr(pipe, name).parameters()) for name in parts}
    example = caption(LandmarkParams("San Francisco Bay Area", "golden", "clear", 0), "full")
    card = [
        "# landmark-dit",
        "",
        "Model v2's first stage: Spotforge's own diffusion transformer for the built-in "
        "geographies' landmark scenes, drawn natively in 16:9 at 256x144 (the Stable Diffusion "
        f"3 architecture in miniature: an MMDiT, two CLIP text encoders, no T5, rectified flow; "
        f"its own DC autoencoder at x8 with {LATENT_CHANNELS} latent channels, whose decoder "
        "is then trained on alone: its card in `vae/`). It runs through "
        "diffusers' SD3 text-to-image pipeline (`text_encoder_3=None`). Its second stage, an "
        "upscaler in `upscaler/` (its own card there), takes the picture to 1920x1080. See "
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
        *evaluated,
    ]
    (out / "README.md").write_text("\n".join(card))
    return scores


def refresh_evaluation(out: Path, sheet_path: Path) -> dict[str, dict[str, float]]:
    """Re-measure the card of weights already trained (after a change in how they are sampled),
    keeping its data and training sections."""
    lines, scores = evaluation(load(out), sheet_path)
    replace_evaluation(out / "README.md", lines)
    return scores


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=refresh_evaluation.__doc__)
    parser.add_argument("--out", type=Path, default=Path("engine/weights/landmark-dit"))
    parser.add_argument("--sheet", type=Path, default=Path("docs/landmark-dit-sheet.png"))
    args = parser.parse_args()
    print(json.dumps(refresh_evaluation(args.out, args.sheet)))
