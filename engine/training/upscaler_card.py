"""What landmark-upscaler is shown by: the detail it adds to base-size landmark pictures at
1080p (`engine.detail`'s effective lines, against the same pictures merely enlarged), a crop
at 1:1 a person looks at, and its model card."""

from __future__ import annotations

import statistics
from pathlib import Path

import torch
from diffusers import DiffusionPipeline
from PIL import Image, ImageDraw, ImageFont

from engine.bench import psnr
from engine.detail import effective_lines
from engine.training import upscaler as sr
from engine.training.card import licence, model_section, training_section
from engine.training.landmarks import SIGNATURES, TRAIN_SIZE, LandmarkParams, draw
from engine.training.scenes import TIMES, WEATHER
from engine.training.train_upscaler import UpscalerPlan

STEPS = 10  # the upscaler's sampling steps in the evaluation (and the preset's default)
EVAL_SEED = 70_000_000  # far from the training scenes' seeds


def evaluation_params() -> list[LandmarkParams]:
    """Every geography once, the lights and weathers in turn, at held-out seeds."""
    return [
        LandmarkParams(g, list(TIMES)[i % 3], WEATHER[(i // 3) % 2], EVAL_SEED + i)
        for i, g in enumerate(SIGNATURES)
    ]


def measure(pipe, params: list[LandmarkParams], steps: int = STEPS) -> dict[str, list[float]]:
    """Effective lines at 1080p of each base-size drawing enlarged (bicubic) and upscaled, and
    each one's PSNR against the same scene drawn at 1080p: lines that are not the scene's
    (grain, blotches, invented edges) count as detail, but lower that PSNR."""
    found: dict[str, list[float]] = {
        f"{kind}_{what}": [] for kind in ("enlarged", "upscaled") for what in ("lines", "psnr")
    }
    for p in params:
        base, truth = draw(p, TRAIN_SIZE), draw(p, sr.HIGH)
        shown = {
            "enlarged": base.resize(sr.HIGH, Image.Resampling.BICUBIC),
            "upscaled": sr.upscale(pipe, base, steps, p.seed),
        }
        for kind, image in shown.items():
            found[f"{kind}_lines"].append(effective_lines(image))
            found[f"{kind}_psnr"].append(psnr([image], [truth]))
    return found


def crop_sheet(pipe, params: LandmarkParams, box=(480, 270, 1440, 810)) -> Image.Image:
    """The middle of one picture at 1:1: enlarged, upscaled, and drawn natively at 1080p."""
    base = draw(params, TRAIN_SIZE)
    shown = {
        "256x144 enlarged (bicubic)": base.resize(sr.HIGH, Image.Resampling.BICUBIC),
        "upscaled by landmark-upscaler": sr.upscale(pipe, base, STEPS, params.seed),
        "drawn at 1080p (what it learns from)": draw(params, sr.HIGH),
    }
    width, height = box[2] - box[0], box[3] - box[1]
    sheet = Image.new("RGB", (width, len(shown) * (height + 28)), "white")
    pen, font = ImageDraw.Draw(sheet), ImageFont.load_default(18)
    for row, (label, image) in enumerate(shown.items()):
        y = row * (height + 28)
        pen.text((8, y + 4), label, fill="black", font=font)
        sheet.paste(image.crop(box), (0, y + 28))
    return sheet


def write_upscaler_card(
    plan: UpscalerPlan, work: Path, out: Path, crop_path: Path, command: str
) -> dict[str, float]:
    """Measure the pipeline in `out`, write its 1:1 crop and its card `out/README.md`."""
    # Measured where it trained (a GPU draws the 27 pictures in seconds, 2 cores in minutes).
    pipe = DiffusionPipeline.from_pretrained(out, torch_dtype=torch.float32).to(plan.device)
    found = measure(pipe, evaluation_params())
    crop_path.parent.mkdir(parents=True, exist_ok=True)
    crop_sheet(pipe, LandmarkParams("Manhattan", "night", "clear", EVAL_SEED)).save(crop_path)
    summary = {
        f"{kind}_{stat}": fn(found[f"{kind}_lines"])
        for kind in ("enlarged", "upscaled")
        for stat, fn in (("median", statistics.median), ("worst", min))
    }
    for kind in ("enlarged", "upscaled"):
        summary[f"{kind}_psnr"] = round(statistics.mean(found[f"{kind}_psnr"]), 2)
    params = {name: sum(p.numel() for p in getattr(pipe, name).parameters()) for name in
              ("vae", "unet", "text_encoder")}  # fmt: skip
    card = [
        "# landmark-upscaler",
        "",
        "Model v2's second stage: a x4 latent diffusion upscaler in the shape of Stable "
        "Diffusion's x4 upscaler (diffusers' `StableDiffusionUpscalePipeline`: a UNet over "
        "latents beside the enlarged picture, the noise added to that picture as a class label, "
        "v-prediction, an autoencoder at x4: here a DC-AE, diffusers' `AutoencoderDC`; "
        "`engine.training.upscaler.upscale` decodes its latents, which the pipeline's own "
        "decoding step cannot), trained to turn a 256x144 landmark scene "
        "(enlarged to 480x270) into the 1920x1080 one. See `engine/training/upscaler.py`.",
        "",
        licence("landmarks.py"),
        "",
        "## Data",
        "",
        f"{plan.scenes} landmark scenes (every geography x light x weather in turn), each drawn "
        f"at 1920x1080 and at 256x144; {plan.crops_per_scene} aligned crops of each "
        f"({sr.CROP}x{sr.CROP} of the 1080p picture, {sr.CROP // 4}x{sr.CROP // 4} of the "
        "enlarged one).",
        "",
        *model_section(params),
        "The UNet has no attention and reads no prompt; the pipeline class encodes one, so a "
        "minimal text encoder stands in. Weights stored in float16 safetensors. Trained on "
        + ("a 2-core CPU machine (no GPU)." if plan.device == "cpu" else f"a GPU ({plan.device})."),
        "",
        *training_section(command, plan, work, ("sr-vae", "sr-unet", "sr-decoder")),
        "The `sr-decoder` row is the decoder's reconstruction loss, its adversarial term and "
        "the critic's hinge loss added together (`engine/training/adversarial.py`).",
        "",
        "## Evaluation",
        "",
        f"Effective detail lines at 1920x1080 (`engine/detail.py`) of one held-out scene per "
        f"geography ({len(found['upscaled_lines'])}, lights and weathers in turn), drawn at "
        f"256x144 and then enlarged (bicubic) or upscaled ({STEPS} steps), and the mean PSNR of "
        "each against the same scene drawn at 1080p (detail that is not the scene's lowers it):",
        "",
        "| picture | median lines | worst | PSNR against the 1080p drawing |",
        "|---|---|---|---|",
        *(
            f"| {kind} | {summary[kind + '_median']:g} | {summary[kind + '_worst']} "
            f"| {summary[kind + '_psnr']} dB |"
            for kind in ("enlarged", "upscaled")
        ),
        "",
        f"A crop at 1:1 (Manhattan at night): `{crop_path.as_posix()}`.",
        "",
    ]
    (out / "README.md").write_text("\n".join(card))
    return summary
