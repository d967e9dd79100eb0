"""landmark-dit: model v2's first stage, the landmark scenes drawn natively in 16:9 at 256x144
by a diffusion transformer trained from scratch on them (`landmarks.py`), so a caption that
names a place ("mission peak above the bay at golden hour") draws that place. Its picture is
what its upscaler (`engine.upscaling`) takes to 1920x1080.

mini-dit's architecture (an SD3 MMDiT, two small CLIP encoders, no T5, rectified flow) with its
own autoencoder and vocabulary:
- The autoencoder is a DC-AE (diffusers' `AutoencoderDC`) at x8 with SD3's
  16 latent channels, where mini-sd's is a KL one with 4. mini-sd's gave back landmark scenes at
  24 dB with cabs, windows and palms as blots, and the base picture is all the upscaler is told
  about the place; a KL autoencoder of this size trained here reached 17 dB in the 400 steps a
  DC-AE took to 22 (docs/benchmarks.md). SD3's image-to-image and inpaint pipelines read a KL
  autoencoder's posterior, so this model draws from text only (the product asks no more of it).
- 32x18 latents in patches of 2: 144 image tokens.
- The vocabulary is the landmark captions' words (every geography's signature and catalog
  landscape, the lights and weathers); words of the catalog's longer descriptions that it lacks
  are left out, and the page says which.

Captions are also trained in the order of the engine's background prompt for a built-in place:
its catalog landscape (mini-sd's archetype) and light before the landmark words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from diffusers import AutoencoderDC
from tqdm.auto import tqdm

from engine.training import dit
from engine.training import model as sd
from engine.training.dc_autoencoder import dc_autoencoder
from engine.training.landmarks import (
    LANDSCAPES,
    SIGNATURES,
    TRAIN_SIZE,
    LandmarkParams,
    draw,
)
from engine.training.scenes import TIMES, WEATHER
from engine.training.train import check_plan, run_stage, save_atomic, train_transformer

LATENT_CHANNELS = 16
AUTOENCODER_CHANNELS = (16, 32, 64, 128)  # per resolution, full to an eighth
CAPTION_FORMS = (
    "full",
    "landscape-first",
    "light-first",
    "no-weather",
    "no-time",
    "place",
    "empty",
)
CAPTION_WEIGHTS = (0.35, 0.2, 0.1, 0.1, 0.05, 0.1, 0.1)
SEED_BASE = 1_000_000  # training scenes' seeds: apart from the classifier's and the upscaler's


@dataclass(frozen=True)
class LandmarkPlan:
    """Everything that determines landmark-dit's weights. Autoencoder and transformer take
    about 70 minutes on 2 cores, the upscaler (`train_upscaler`) about 40 with its card: model
    v2 rebuilds in under 2 of its 3 hours."""

    seed: int = 0
    images: int = 20 * len(SIGNATURES) * len(TIMES) * len(WEATHER)  # 20 of each combination
    vae_steps: int = 3000
    vae_batch: int = 16
    vae_crop: int = 64
    vae_lr: float = 1e-3
    dit_steps: int = 1800
    dit_batch: int = 32
    dit_lr: float = 3e-4
    # A warm restart: the loss was still falling at the end of `dit`; the restart takes it from
    # 0.381 to 0.368 and the places recognised at >= 90 % from 17 to 23 of 27 (docs/benchmarks.md).
    dit_tune_steps: int = 700
    dit_tune_lr: float = 1.5e-4
    dit_precision: str = "fp32"  # see `train_transformer`
    warmup: int = 100
    checkpoint_every: int = 100
    device: str = "cpu"  # where it trains: the numerics, so the weights, depend on it

    def steps(self, stage: str) -> int:
        return {"vae": self.vae_steps, "dit": self.dit_steps, "dit-tune": self.dit_tune_steps}[
            stage
        ]

    @classmethod
    def for_device(cls, device: str, seed: int = 0) -> LandmarkPlan:
        """The CPU plan above, or on a GPU twice the scenes (more compositions of each place)
        and the transformer's stages twice as long at twice the batch: its loss was still
        falling at the end of each on the CPU (docs/benchmarks.md). Timed on an H200
        (2026-12-04): the scenes, start-up and latents about 70 s, the autoencoder 42 s, a
        transformer step 86 ms (launch-bound: the model is small), so about 11 minutes with
        the card, more than one call: `gpu_suite` resumes a part cut at its cap."""
        if device == "cpu":
            return cls(seed=seed)
        return cls(
            seed=seed,
            device=device,
            images=2 * cls.images,
            dit_steps=3600,
            dit_batch=64,
            dit_tune_steps=1400,
        )


def scene(index: int) -> LandmarkParams:
    """Training scene `index`: geography, light and weather cycle so every combination is
    equally common."""
    combos = [(g, t, w) for g in SIGNATURES for t in TIMES for w in WEATHER]
    return LandmarkParams(*combos[index % len(combos)], seed=SEED_BASE + index)


def caption(params: LandmarkParams, form: str) -> str:
    place, light = SIGNATURES[params.geography].words, TIMES[params.time]
    return {
        "full": params.caption,
        # The order of the engine's background prompt for a built-in place, its other words
        # (the catalog's longer description) left out as unknown.
        "landscape-first": f"{LANDSCAPES[params.geography]} {light}, {params.weather}, {place}",
        "light-first": f"{light}, {params.weather}, {place}",
        "no-weather": f"{place} {light}",
        "no-time": f"{place}, {params.weather}",
        "place": place,
        "empty": "",
    }[form]


def vocabulary() -> list[str]:
    """Every word of the captions, split as the tokenizer splits them ("honky-tonk" is two)."""
    phrases = [
        *(s.words for s in SIGNATURES.values()),
        *LANDSCAPES.values(),
        *TIMES.values(),
        *WEATHER,
    ]
    return sorted({word for phrase in phrases for word in re.findall("[a-z]+", phrase.lower())})


def vae() -> AutoencoderDC:
    model = dc_autoencoder(AUTOENCODER_CHANNELS, LATENT_CHANNELS)  # three downsamplings: x8
    # SD3's pipelines decode latents / scaling_factor + shift_factor.
    model.register_to_config(shift_factor=0.0)
    return model


def pipeline(vae_model: AutoencoderDC, encoder, encoder_2, transformer):
    pipe = dit.pipeline(vae_model, encoder, encoder_2, transformer)
    words = vocabulary()
    pipe.tokenizer, pipe.tokenizer_2 = sd.tokenizer(words), sd.tokenizer(words)
    return pipe


def train(plan: LandmarkPlan, work: Path, out: Path, threads: int | None = None) -> Path:
    """Run (or resume) both stages (autoencoder, transformer); write the pipeline to `out`."""
    if threads:
        torch.set_num_threads(threads)
    work.mkdir(parents=True, exist_ok=True)
    check_plan(plan, work)
    images = _data(plan, work)
    torch.manual_seed(plan.seed)  # initial weights; every later draw has its own generator
    autoencoder = vae().to(plan.device)
    _train_vae(plan, work, autoencoder, images)
    latents = _latents(work, autoencoder, images)
    words = len(vocabulary()) + len(sd.SPECIALS)
    torch.manual_seed(plan.seed + 2)
    pipe = pipeline(
        autoencoder,
        dit.text_encoder(words),
        dit.text_encoder(words),
        dit.transformer(TRAIN_SIZE[0] // 8, LATENT_CHANNELS),
    ).to(plan.device)
    train_transformer(
        plan,
        work,
        pipe,
        latents,
        lambda i, form: caption(scene(i), form),
        CAPTION_FORMS,
        CAPTION_WEIGHTS,
        tune_lr=plan.dit_tune_lr,
        device=plan.device,
    )
    for part in (pipe.text_encoder, pipe.text_encoder_2, pipe.transformer):
        part.eval()
    out.mkdir(parents=True, exist_ok=True)
    pipe.to("cpu", dtype=torch.float16).save_pretrained(out, safe_serialization=True)
    return out


def _data(plan: LandmarkPlan, work: Path) -> torch.Tensor:
    """The training scenes, uint8 [N, 3, 144, 256] (captions are made from the index)."""
    path = work / "data.pt"
    if not path.exists():
        pixels = np.stack(
            [np.asarray(draw(scene(i))) for i in tqdm(range(plan.images), desc="data")]
        )
        save_atomic({"images": torch.from_numpy(pixels).permute(0, 3, 1, 2).contiguous()}, path)
    return torch.load(path, weights_only=True)["images"]


def _unit(pixels: torch.Tensor) -> torch.Tensor:
    return pixels.float() / 127.5 - 1.0


def random_crops(
    images: torch.Tensor, batch: int, size: int, g: torch.Generator, device: str
) -> torch.Tensor:
    """`batch` square crops of `size` in [-1, 1], each from its own place in its own scene: a
    crop place shared by the batch gave mostly sky to whole batches."""
    height, width = images.shape[2:]
    pick = torch.randint(len(images), (batch,), generator=g).tolist()
    tops = torch.randint(height - size + 1, (batch,), generator=g).tolist()
    lefts = torch.randint(width - size + 1, (batch,), generator=g).tolist()
    crops = [
        images[i, :, t : t + size, x : x + size] for i, t, x in zip(pick, tops, lefts, strict=True)
    ]
    return _unit(torch.stack(crops).to(device))


def autoencoder_loss(recon: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """L1 with an edge term: sharp horizons, windows and tree lines."""
    edges = sum(F.l1_loss(recon.diff(dim=d), x.diff(dim=d)) for d in (2, 3))
    return F.l1_loss(recon, x) + edges


def _train_vae(plan: LandmarkPlan, work: Path, autoencoder, images: torch.Tensor) -> None:
    def step_loss(g: torch.Generator) -> torch.Tensor:
        x = random_crops(images, plan.vae_batch, plan.vae_crop, g, plan.device)
        return autoencoder_loss(autoencoder.decode(autoencoder.encode(x).latent).sample, x)

    autoencoder.train()
    run_stage(plan, work, "vae", {"vae": autoencoder}, plan.vae_lr, step_loss)
    autoencoder.eval()


def _latents(work: Path, autoencoder, images: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every scene's latents, in the form `train_transformer` takes (a DC-AE's are exact: no
    "std" of a posterior), on the autoencoder's device; sets its scaling factor so that they
    have unit variance."""
    path = work / "latents.pt"
    device = next(autoencoder.parameters()).device
    if not path.exists():
        with torch.inference_mode():
            chunks = [autoencoder.encode(_unit(c.to(device))).latent for c in images.split(64)]
        mean = torch.cat(chunks).cpu()
        scale = torch.tensor(1.0 / mean.std().item())
        save_atomic({"mean": mean, "scale": scale}, path)
    latents = torch.load(path, weights_only=True)
    autoencoder.register_to_config(scaling_factor=float(latents["scale"]))
    return {"mean": latents["mean"].to(device), "scale": latents["scale"]}
