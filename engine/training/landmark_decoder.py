"""landmark-dit's decoder, trained on further on its frozen encoder.

Why: the autoencoder, not the transformer, is what blurs landmark-dit's pictures. Held-out
layouts drawn at 256x144 carry a median of 105 lines enlarged to 1080p, their round trip
through the autoencoder landmark-dit's training gives 55.5, and the model's own pictures of
them 52 (docs/benchmarks.md, "landmark-dit's decoder"). Its 3000 steps trained encoder and
decoder together; 2000 more of the decoder alone give the houses, ridgelines and sun back
sharper. A decoder four times as wide did no better in as many steps (the latents, not the
decoder, hold the rest back) and cost three times as much a picture, so it keeps its shape.

The encoder is kept as it is, weights and all, so the latents the transformer was trained on
mean what they meant: only the decoding of them changes, and the transformer needs no
retraining. The result is the same diffusers `AutoencoderDC`, loaded by plain
`DiffusionPipeline.from_pretrained`.

Rebuilding landmark-dit from nothing: `spotforge train --model landmark-dit`, then
`--model landmark-decoder`, then `--model landmark-upscaler`. The decoder starts from the one
landmark-dit's training wrote; an autoencoder whose decoder this already trained (its card,
vae/README.md, says so) is refused, so a rerun never trains it twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from diffusers import AutoencoderDC
from PIL import Image

from engine.bench import psnr
from engine.detail import effective_lines
from engine.training import landmark_dit
from engine.training.card import licence, model_section, training_section
from engine.training.landmarks import TRAIN_SIZE, LandmarkParams, draw
from engine.training.train import check_plan, run_stage

FOLDER = "vae"  # the preset's autoencoder: its decoder is what this replaces
STAGE = "dc-decoder"
HIGH = (1920, 1080)


@dataclass(frozen=True)
class DecoderPlan:
    """Everything that determines the decoder's weights (about 10 minutes on 2 cores)."""

    seed: int = 0
    images: int = landmark_dit.LandmarkPlan.images  # landmark-dit's own training scenes
    decoder_steps: int = 2000
    batch: int = 16
    crop: int = 96  # a multiple of 8: whole latents; landmark-dit's stage took 64
    lr: float = 2e-4  # a fifth of landmark-dit's autoencoder's: it goes on from there
    warmup: int = 100
    checkpoint_every: int = 100
    device: str = "cpu"

    def steps(self, stage: str) -> int:
        return {STAGE: self.decoder_steps}[stage]


def train_decoder(
    plan: DecoderPlan, work: Path, base: Path, out: Path, threads: int | None = None
) -> AutoencoderDC:
    """Train (or resume) the decoder of the autoencoder of the preset in `base`, as landmark-dit's
    training wrote it; write the autoencoder to `out`/vae (`out` may be `base`)."""
    if threads:
        torch.set_num_threads(threads)
    work.mkdir(parents=True, exist_ok=True)
    if not (work / f"{STAGE}.ckpt").exists() and (base / FOLDER / "README.md").exists():
        raise ValueError(
            f"{base / FOLDER}'s decoder is already trained on by this stage (its card); give "
            "the landmark-dit its own training wrote as --base, or the --work folder of the "
            "run that made it"
        )
    check_plan(plan, work)
    images = landmark_dit._data(plan, work)
    model = AutoencoderDC.from_pretrained(base / FOLDER, torch_dtype=torch.float32)
    model = model.to(plan.device)
    model.encoder.requires_grad_(False)

    def step_loss(g: torch.Generator) -> torch.Tensor:
        """landmark-dit's autoencoder loss on its crops, the encoder's latents as they are."""
        x = landmark_dit.random_crops(images, plan.batch, plan.crop, g, plan.device)
        with torch.no_grad():
            latent = model.encode(x).latent
        return landmark_dit.autoencoder_loss(model.decode(latent).sample, x)

    model.decoder.train()
    run_stage(plan, work, STAGE, {"decoder": model.decoder}, plan.lr, step_loss)
    model.eval()
    model.to("cpu", dtype=torch.float16).save_pretrained(out / FOLDER, safe_serialization=True)
    return model


def round_trip(model: AutoencoderDC, picture: Image.Image) -> Image.Image:
    param = next(model.parameters())
    x = torch.from_numpy(np.array(picture.convert("RGB"))).permute(2, 0, 1)[None]
    x = (x.float() / 127.5 - 1.0).to(param.device, param.dtype)
    with torch.inference_mode():
        y = model.decode(model.encode(x).latent).sample.float().clamp(-1, 1)
    pixels = ((y[0].permute(1, 2, 0) + 1) * 127.5).round().to(torch.uint8).cpu().numpy()
    return Image.fromarray(pixels)


def measure(model: AutoencoderDC, params: list[LandmarkParams]) -> dict[str, list[float]]:
    """For held-out drawings at 256x144: effective lines at 1080p (enlarged, bicubic) of the
    drawing and of its round trip through `model`, and the round trip's PSNR against it."""
    found: dict[str, list[float]] = {"drawn": [], "decoded": [], "psnr": []}
    for p in params:
        drawing = draw(p, TRAIN_SIZE)
        decoded = round_trip(model, drawing)
        found["drawn"].append(effective_lines(drawing.resize(HIGH, Image.Resampling.BICUBIC)))
        found["decoded"].append(effective_lines(decoded.resize(HIGH, Image.Resampling.BICUBIC)))
        found["psnr"].append(psnr([decoded], [drawing]))
    return found


def write_decoder_card(
    plan: DecoderPlan,
    work: Path,
    out: Path,
    model: AutoencoderDC,
    command: str,
    params: list[LandmarkParams] | None = None,
) -> dict[str, float]:
    """The decoder's card, `out`/vae/README.md: the plan, its loss and what it keeps of
    held-out drawings (`params`: the upscaler card's, every place once)."""
    from engine.training.upscaler_card import evaluation_params

    found = measure(model.float(), params or evaluation_params())
    summary = {
        "drawn_lines": float(np.median(found["drawn"])),
        "decoded_lines": float(np.median(found["decoded"])),
        "decoded_worst": float(min(found["decoded"])),
        "psnr": float(np.mean(found["psnr"])),
        "psnr_worst": float(min(found["psnr"])),
    }
    parts = {"encoder (landmark-dit's)": model.encoder, "decoder": model.decoder}
    params = {name: sum(p.numel() for p in part.parameters()) for name, part in parts.items()}
    card = [
        "# landmark-dit's autoencoder",
        "",
        "landmark-dit's DC autoencoder (x8, 16 latent channels): the encoder its transformer was "
        "trained on, unchanged, and its decoder trained on further on that encoder's latents, "
        "so that its pictures keep the scenes' edges. See "
        "`engine/training/landmark_decoder.py`.",
        "",
        licence("landmarks.py"),
        "",
        "## Data",
        "",
        f"landmark-dit's {plan.images} training scenes at 256x144, {plan.crop}x{plan.crop} "
        "crops. The decoder starts from the one landmark-dit's training wrote "
        "(`spotforge train --model landmark-dit`, its card one folder up).",
        "",
        *model_section(params),
        "Weights stored in float16 safetensors. Trained on "
        + ("a 2-core CPU machine (no GPU)." if plan.device == "cpu" else f"a GPU ({plan.device})."),
        "",
        *training_section(command, plan, work, (STAGE,)),
        "## Evaluation",
        "",
        f"{len(found['drawn'])} held-out drawings at 256x144 (every place once, lights and "
        "weathers in turn), enlarged to 1920x1080 for `engine.detail.effective_lines`:",
        "",
        "| picture | median lines | worst | PSNR against the drawing (mean, worst) |",
        "|---|---|---|---|",
        f"| the drawing | {summary['drawn_lines']:g} | {min(found['drawn']):g} | - |",
        f"| its round trip | {summary['decoded_lines']:g} | {summary['decoded_worst']:g} | "
        f"{summary['psnr']:.2f} dB, {summary['psnr_worst']:.2f} dB |",
        "",
    ]
    (out / FOLDER / "README.md").write_text("\n".join(card))
    return summary
