"""What landmark-dit's upscaler is shown by: the detail it gives at 1080p (`engine.detail`'s
effective lines) to landmark-dit's own pictures, alone and with their layout's detail as finals
show them (`engine.layout_detail`), and to base-size drawings, whose 1080p drawing says how
faithful it is; a crop at 1:1 a person looks at; its model card."""

from __future__ import annotations

import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from engine.bench import psnr
from engine.detail import effective_lines
from engine.layout_detail import with_layout_detail
from engine.layouts import Layout
from engine.training import landmark_card
from engine.training.card import licence, model_section, replace_evaluation, training_section
from engine.training.landmarks import SIGNATURES, TRAIN_SIZE, LandmarkParams, draw
from engine.training.scenes import TIMES, WEATHER
from engine.training.train_upscaler import CROP, HIGH, UpscalerPlan
from engine.upscaling import SceneUpscaler, upscale

EVAL_SEED = 70_000_000  # far from the training scenes' seeds
GENERATED_SEEDS = (0, 1)  # landmark-dit's pictures measured: every place x light x these seeds


def evaluation_params() -> list[LandmarkParams]:
    """Every geography once, the lights and weathers in turn, at held-out seeds."""
    return [
        LandmarkParams(g, list(TIMES)[i % 3], WEATHER[(i // 3) % 2], EVAL_SEED + i)
        for i, g in enumerate(SIGNATURES)
    ]


def _lines(images: list[Image.Image], workers: int) -> list[int]:
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(effective_lines, images))


def measure(model: SceneUpscaler, params: list[LandmarkParams], workers: int = 1):
    """Effective lines at 1080p of each base-size drawing enlarged (bicubic) and upscaled, and
    each one's PSNR against the same scene drawn at 1080p: lines that are not the scene's
    (grain, blotches, invented edges) count as detail, but lower that PSNR."""
    shown: dict[str, list[Image.Image]] = {"enlarged": [], "upscaled": []}
    truths = []
    for p in params:
        base = draw(p, TRAIN_SIZE)
        shown["enlarged"].append(base.resize(HIGH, Image.Resampling.BICUBIC))
        shown["upscaled"].append(upscale(model, base, HIGH))
        truths.append(draw(p, HIGH))
    found = {}
    for kind, images in shown.items():
        found[f"{kind}_lines"] = _lines(images, workers)
        found[f"{kind}_psnr"] = [psnr([im], [t]) for im, t in zip(images, truths, strict=True)]
    return found


def generated_pictures(pipe, seeds=GENERATED_SEEDS) -> list[tuple[LandmarkParams, Image.Image]]:
    """landmark-dit's 256x144 picture of every place in every light at `seeds` (clear and
    cloudy in turn), drawn as the product draws a built-in place: from its layout."""
    asked = [
        LandmarkParams(g, t, WEATHER[seed % 2], seed) for g in SIGNATURES for t in TIMES
        for seed in seeds
    ]  # fmt: skip
    pictures = []
    for p in asked:
        pictures += landmark_card.draw(pipe, [p], from_layout=True)
    return list(zip(asked, pictures, strict=True))


def final(model: SceneUpscaler, drawn: LandmarkParams, picture: Image.Image) -> Image.Image:
    """landmark-dit's `picture` of `drawn` as a final shows it: upscaled, with the fine detail
    of its layout (as `engine.runner` makes it)."""
    layout = Layout(drawn.geography, drawn.time, drawn.weather)
    scene, given = layout.draw_scene(drawn.seed, HIGH), layout.draw(drawn.seed, picture.size)
    return with_layout_detail(upscale(model, picture, HIGH), scene.image, given, scene.sun)


def measure_generated(model: SceneUpscaler, generated, workers: int = 1) -> dict[str, list[int]]:
    """Effective lines at 1080p of landmark-dit's pictures enlarged, upscaled, and as finals
    show them."""
    bases = [image for _, image in generated]
    return {
        "enlarged": _lines([b.resize(HIGH, Image.Resampling.BICUBIC) for b in bases], workers),
        "upscaled": _lines([upscale(model, b, HIGH) for b in bases], workers),
        "final": _lines([final(model, p, b) for p, b in generated], workers),
    }


def crop_sheet(model: SceneUpscaler, drawn: LandmarkParams, generated, box):
    """The middle of pictures at 1:1: a drawing enlarged, upscaled and drawn natively at 1080p,
    then one of landmark-dit's own pictures (`generated`: what was asked, the picture) enlarged,
    upscaled, and as a final shows it."""
    asked, picture = generated
    base = draw(drawn, TRAIN_SIZE)
    shown = {
        "256x144 drawing, enlarged (bicubic)": base.resize(HIGH, Image.Resampling.BICUBIC),
        "256x144 drawing, upscaled": upscale(model, base, HIGH),
        "drawn at 1080p (what it learns from)": draw(drawn, HIGH),
        "landmark-dit's picture, enlarged (bicubic)": picture.resize(HIGH, Image.BICUBIC),
        "landmark-dit's picture, upscaled": upscale(model, picture, HIGH),
        "and with its layout's detail (what a final shows)": final(model, asked, picture),
    }
    width, height = box[2] - box[0], box[3] - box[1]
    sheet = Image.new("RGB", (width, len(shown) * (height + 28)), "white")
    pen, font = ImageDraw.Draw(sheet), ImageFont.load_default(18)
    for row, (label, image) in enumerate(shown.items()):
        y = row * (height + 28)
        pen.text((8, y + 4), label, fill="black", font=font)
        sheet.paste(image.crop(box), (0, y + 28))
    return sheet


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):g} | {min(values)}"


def evaluation(
    model: SceneUpscaler, base: Path, crop_path: Path, workers: int = 1
) -> tuple[list[str], dict[str, float]]:
    """The card's "Evaluation": effective lines of landmark-dit's pictures (from `base`) as
    finals show them, and of held-out drawings; writes the 1:1 crop to `crop_path`."""
    pipe = landmark_card.load(base)
    pipe.set_progress_bar_config(disable=True)
    drawings = measure(model, evaluation_params(), workers)
    generated = generated_pictures(pipe)
    lines = measure_generated(model, generated, workers)
    manhattan = next(g for g in generated if g[0].geography == "Manhattan" and g[0].time == "night")
    box = (480, 270, 1440, 810)
    crop_path.parent.mkdir(parents=True, exist_ok=True)
    crop_sheet(model, LandmarkParams("Manhattan", "night", "clear", EVAL_SEED), manhattan,
               box).save(crop_path)  # fmt: skip
    summary = {
        "generated_final_median": statistics.median(lines["final"]),
        "generated_final_worst": min(lines["final"]),
        "generated_upscaled_median": statistics.median(lines["upscaled"]),
        "generated_upscaled_worst": min(lines["upscaled"]),
        "generated_enlarged_median": statistics.median(lines["enlarged"]),
        "drawn_upscaled_median": statistics.median(drawings["upscaled_lines"]),
        "drawn_upscaled_psnr": round(statistics.mean(drawings["upscaled_psnr"]), 2),
        "drawn_enlarged_psnr": round(statistics.mean(drawings["enlarged_psnr"]), 2),
    }
    count = len(generated)
    lines_md = [
        "## Evaluation",
        "",
        "Effective detail lines at 1920x1080 (`engine/detail.py`: the fewest lines a picture "
        "can be shrunk to and enlarged back from at 38 dB, after a 5x5 median filter). "
        f"landmark-dit's own pictures ({count}: every geography x light, seeds "
        f"{', '.join(map(str, GENERATED_SEEDS))}, clear and cloudy in turn), each drawn from "
        "its layout (`engine/layouts.py`) as a built-in place is, taken to 1080p three ways "
        "(the last what a final shows):",
        "",
        "| picture | median lines | worst |",
        "|---|---|---|",
        f"| landmark-dit's, enlarged (bicubic) | {_summary(lines['enlarged'])} |",
        f"| landmark-dit's, upscaled | {_summary(lines['upscaled'])} |",
        "| landmark-dit's, upscaled, with its layout's detail (`engine/layout_detail.py`; what "
        f"a final shows) | {_summary(lines['final'])} |",
        "",
        f"And {len(drawings['upscaled_lines'])} held-out scenes (one per geography, lights and "
        "weathers in turn) drawn at 256x144, enlarged or upscaled, with their mean PSNR against "
        "the same scene drawn at 1080p (detail that is not the scene's lowers it):",
        "",
        "| picture | median lines | worst | PSNR against the 1080p drawing |",
        "|---|---|---|---|",
        *(
            f"| {kind} | {_summary(drawings[kind + '_lines'])} "
            f"| {statistics.mean(drawings[kind + '_psnr']):.2f} dB |"
            for kind in ("enlarged", "upscaled")
        ),
        "",
        f"A crop at 1:1 (Manhattan at night): `{crop_path.as_posix()}`.",
        "",
    ]
    return lines_md, summary


def write_upscaler_card(
    plan: UpscalerPlan,
    work: Path,
    out: Path,
    base: Path,
    crop_path: Path,
    command: str,
    workers: int = 1,
) -> dict[str, float]:
    """Measure the upscaler in `out` on the pictures of the landmark-dit in `base` and on
    drawings, write its 1:1 crop and its card `out/README.md`."""
    model = SceneUpscaler.from_pretrained(out).eval()
    evaluated, summary = evaluation(model, base, crop_path, workers)
    card = [
        "# landmark-dit's upscaler",
        "",
        "Model v2's second stage: a feed-forward super-resolution network "
        "(`engine.upscaling.SceneUpscaler`, a diffusers `ModelMixin`: residual blocks at a "
        "quarter of the output's size, then nearest-neighbour enlargement and a convolution "
        "twice, added to the input enlarged) that takes landmark-dit's 256x144 picture, "
        "enlarged to 480x270, to 1920x1080. The engine runs it on a landmark-dit request for "
        "1920x1080 (`Preset.upscale_to`), as backgrounds are asked for.",
        "",
        licence("landmarks.py"),
        "",
        "## Data",
        "",
        f"{plan.scenes} landmark scenes (every geography x light x weather in turn), each drawn "
        f"at 1920x1080 and at 256x144; {plan.crops_per_scene} aligned crops of each "
        f"({CROP}x{CROP} of the 1080p picture, {CROP // 4}x{CROP // 4} of the enlarged one), "
        f"the enlarged crop blurred (sigma up to {plan.blur} px) and noised (up to "
        f"{plan.noise}) by a random amount each time it is seen.",
        "",
        *model_section({"upscaler": sum(p.numel() for p in model.parameters())}),
        "Weights stored in float32 safetensors. Trained on "
        + ("a 2-core CPU machine (no GPU)." if plan.device == "cpu" else f"a GPU ({plan.device})."),
        "",
        *training_section(command, plan, work, ("sr-net", "sr-adversarial")),
        "The `sr-adversarial` row is the reconstruction loss (L1 and edges), the adversarial "
        "term and the critic's hinge loss added together (`engine/training/adversarial.py`).",
        "",
        *evaluated,
    ]
    (out / "README.md").write_text("\n".join(card))
    return summary


def refresh_evaluation(out: Path, base: Path, crop_path: Path, workers: int = 1) -> dict:
    """Re-measure the card of an upscaler already trained (after a change in how landmark-dit's
    pictures are drawn), keeping its data and training sections."""
    lines, summary = evaluation(SceneUpscaler.from_pretrained(out).eval(), base, crop_path, workers)
    replace_evaluation(out / "README.md", lines)
    return summary


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=refresh_evaluation.__doc__)
    parser.add_argument("--base", type=Path, default=Path("engine/weights/landmark-dit"))
    parser.add_argument("--crop", type=Path, default=Path("docs/landmark-upscaler-crop.png"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    summary = refresh_evaluation(args.base / "upscaler", args.base, args.crop, args.workers)
    print(json.dumps(summary))
