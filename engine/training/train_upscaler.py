"""Training landmark-dit's upscaler (`engine.upscaling.SceneUpscaler`) from the landmark scenes,
seeded and resumable like every model here (`train.run_stage`):

1. data          : landmark scenes drawn at 1080p and at the base's 256x144 (enlarged to
                   480x270), kept as aligned random crops (128x128 and 32x32);
2. sr-net        : the network on L1 and an edge term: crisp edges where the base's are soft;
3. sr-adversarial: on, against a patch critic (`adversarial`), so that it draws one plausible
                   texture where L1 settles for the average of all (grass, rock, canopy).

The enlarged crops it is given are blurred and noised by random amounts first, so that it
sharpens a generated base picture, softer than a drawing, and not only a clean drawing.
(Trained on landmark-dit's own redrawings of the scenes as well, it drew its pictures no
better: docs/benchmarks.md, "landmark-dit's upscaler".)
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from engine.training.adversarial import adversarial_loss, patch_critic
from engine.training.landmarks import SIGNATURES, TRAIN_SIZE, LandmarkParams, draw
from engine.training.scenes import TIMES, WEATHER
from engine.training.train import check_plan, precision_context, run_stage, save_atomic
from engine.upscaling import SceneUpscaler, enlarged, to_unit

HIGH = (1920, 1080)  # what a final shows
CROP = 128  # training crops of the 1080p picture (32x32 of the enlarged base picture)
BLUR_TAPS = 7


@dataclass(frozen=True)
class UpscalerPlan:
    """Everything that determines the upscaler's weights."""

    seed: int = 0
    scenes: int = 324  # 2 of each geography x light x weather
    crops_per_scene: int = 32
    batch: int = 16
    net_steps: int = 4000
    net_lr: float = 5e-4
    adversarial_steps: int = 2000
    adversarial_lr: float = 2e-4
    adversarial_weight: float = 0.5
    blur: float = 1.2  # the most Gaussian blur (sigma, pixels of the enlarged picture) given
    noise: float = 0.04  # the most noise (standard deviation, on [-1, 1])
    warmup: int = 100
    checkpoint_every: int = 100
    precision: str = "bf16"  # every stage's forward (`train.precision_context`), or "fp32"
    device: str = "cpu"  # where it trains: the numerics, so the weights, depend on it

    def steps(self, stage: str) -> int:
        return {"sr-net": self.net_steps, "sr-adversarial": self.adversarial_steps}[stage]

    @classmethod
    def for_device(cls, device: str, seed: int = 0) -> UpscalerPlan:
        """The CPU plan takes 22 minutes on 2 cores, its card 16 more (docs/benchmarks.md,
        "landmark-dit's upscaler"). On a GPU (not yet run there), twice the scenes and each
        stage twice as long at twice the batch."""
        if device == "cpu":
            return cls(seed=seed)
        return cls(
            seed=seed,
            device=device,
            scenes=648,
            batch=32,
            net_steps=6000,
            adversarial_steps=3000,
            checkpoint_every=500,
            precision="fp32",
        )


def train_upscaler(plan: UpscalerPlan, work: Path, out: Path, threads: int | None = None) -> Path:
    """Run (or resume) every stage; write the upscaler to `out`."""
    if threads:
        torch.set_num_threads(threads)
    work.mkdir(parents=True, exist_ok=True)
    check_plan(plan, work)
    high, low = _data(plan, work, workers=threads or 1)
    high, low = high.to(plan.device), low.to(plan.device)
    torch.manual_seed(plan.seed)  # initial weights; every later draw has its own generator
    net, critic = SceneUpscaler().to(plan.device), patch_critic().to(plan.device)

    def batch(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        pick = torch.randint(len(high), (plan.batch,), generator=g)
        return to_unit(high[pick]), _degraded(to_unit(low[pick]), plan, g)

    def reconstruction(g: torch.Generator) -> torch.Tensor:
        truth, given = batch(g)
        with precision_context(plan.precision, plan.device):
            drawn = net(given).float()
        return _reconstruction_loss(drawn, truth)

    def against_critic(g: torch.Generator) -> torch.Tensor:
        truth, given = batch(g)
        with precision_context(plan.precision, plan.device):
            drawn = net(given).float()
            return adversarial_loss(
                critic,
                truth,
                drawn,
                _reconstruction_loss(drawn, truth),
                net.conv_out.weight,
                plan.adversarial_weight,
            )

    net.train()
    run_stage(plan, work, "sr-net", {"net": net}, plan.net_lr, reconstruction)
    critic.train()
    run_stage(
        plan, work, "sr-adversarial", {"net": net, "critic": critic}, plan.adversarial_lr,
        against_critic,
    )  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    net.eval().to("cpu").save_pretrained(out, safe_serialization=True)
    return out


def _reconstruction_loss(drawn: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    # The edge term keeps facets, windows and tree lines hard: L1 alone settles for blur.
    edges = sum(F.l1_loss(drawn.diff(dim=d), truth.diff(dim=d)) for d in (2, 3))
    return F.l1_loss(drawn, truth) + edges


def _degraded(given: torch.Tensor, plan: UpscalerPlan, g: torch.Generator) -> torch.Tensor:
    """Each picture blurred (a Gaussian of sigma 0 to `plan.blur`) and noised (0 to
    `plan.noise`) by its own random amount."""
    n, channels, height, width = given.shape
    sigma = (torch.rand(n, generator=g) * plan.blur).clamp(min=1e-3)
    taps = torch.arange(BLUR_TAPS) - BLUR_TAPS // 2
    kernel = torch.exp(-(taps[None] ** 2) / (2 * sigma[:, None] ** 2))
    kernel = (kernel / kernel.sum(dim=1, keepdim=True)).repeat_interleave(channels, dim=0)
    kernel = kernel.to(given.device)
    flat = given.reshape(1, n * channels, height, width)
    pad = BLUR_TAPS // 2
    flat = F.conv2d(F.pad(flat, (pad, pad, 0, 0), mode="replicate"),
                    kernel[:, None, None, :], groups=n * channels)  # fmt: skip
    flat = F.conv2d(F.pad(flat, (0, 0, pad, pad), mode="replicate"),
                    kernel[:, None, :, None], groups=n * channels)  # fmt: skip
    amount = torch.rand(n, 1, 1, 1, generator=g) * plan.noise
    noise = torch.randn(given.shape, generator=g) * amount
    return flat.reshape(given.shape) + noise.to(given.device)


def pair_params(index: int, seed_base: int = 2_000_000) -> LandmarkParams:
    """Scene `index` of the upscaler's data: every geography x time x weather in turn."""
    combos = [(g, t, w) for g in SIGNATURES for t in TIMES for w in WEATHER]
    return LandmarkParams(*combos[index % len(combos)], seed=seed_base + index)


def random_crops(
    high: torch.Tensor, low: torch.Tensor, count: int, g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """`count` aligned crops of one scene: CROP x CROP of the 1080p picture (uint8 3xHxW) and
    the matching quarter-size crop of the enlarged base picture."""
    size, quarter = CROP, CROP // 4
    ys = torch.randint(0, (HIGH[1] - size) // 4 + 1, (count,), generator=g).tolist()
    xs = torch.randint(0, (HIGH[0] - size) // 4 + 1, (count,), generator=g).tolist()
    at = list(zip(ys, xs, strict=True))
    highs = [high[:, 4 * y : 4 * y + size, 4 * x : 4 * x + size] for y, x in at]
    lows = [low[:, y : y + quarter, x : x + quarter] for y, x in at]
    return torch.stack(highs), torch.stack(lows)


def _crops_of(index: int, plan: UpscalerPlan) -> tuple[torch.Tensor, torch.Tensor]:
    params = pair_params(index)
    high = np.array(draw(params, HIGH))
    low = np.array(enlarged(draw(params, TRAIN_SIZE), HIGH))
    g = torch.Generator().manual_seed(plan.seed * 1_000_003 + index)
    as_tensor = [torch.from_numpy(p).permute(2, 0, 1) for p in (high, low)]
    return random_crops(*as_tensor, plan.crops_per_scene, g)


def _data(plan: UpscalerPlan, work: Path, workers: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Aligned crops, uint8: [N, 3, 128, 128] of 1080p scenes and [N, 3, 32, 32] of the
    enlarged base drawings. Drawn in `workers` processes (a scene at 1080p takes about 1 s)."""
    path = work / "data.pt"
    if not path.exists():
        indices = range(plan.scenes)
        with ProcessPoolExecutor(workers) as pool:
            pairs = list(
                tqdm(
                    pool.map(_crops_of, indices, [plan] * plan.scenes),
                    total=plan.scenes,
                    desc="data",
                    unit="scene",
                )
            )
        high = torch.cat([h for h, _ in pairs])
        low = torch.cat([lo for _, lo in pairs])
        save_atomic({"high": high, "low": low}, path)
    data = torch.load(path, weights_only=True)
    return data["high"], data["low"]
