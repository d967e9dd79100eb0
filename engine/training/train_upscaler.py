"""Training landmark-upscaler (engine.training.upscaler) from the landmark scenes, seeded and
resumable like mini-sd (`train.run_stage`):

1. data    : landmark scenes drawn at 1080p and at the base's 256x144 (enlarged to 480x270),
             kept as aligned random crops (128x128 and 32x32);
2. sr-vae  : the x4 autoencoder (a DC-AE) on the 1080p crops, with an edge term against blur;
             its latents are then rescaled for the pipeline (`upscaler.fit_latent_scale`);
3. sr-unet : the UNet, v-prediction with min-SNR weighting, on latents of the 1080p crops beside
             the matching crops of the enlarged picture, noised to a random level;
4. sr-decoder: the decoder alone, against a patch critic (`adversarial`), so that it draws
             texture where L1 settles for blur; the encoder, and so the UNet's latents, stay.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from engine.training import upscaler as sr
from engine.training.adversarial import adversarial_loss, patch_critic
from engine.training.train import check_plan, precision_context, run_stage, save_atomic


@dataclass(frozen=True)
class UpscalerPlan:
    """Everything that determines the upscaler's weights."""

    seed: int = 0
    scenes: int = 324  # 2 of each geography x light x weather
    crops_per_scene: int = 32
    vae_steps: int = 6000
    vae_batch: int = 12
    vae_lr: float = 1e-3
    unet_steps: int = 6000
    unet_batch: int = 16
    unet_lr: float = 5e-4
    min_snr_gamma: float = 5.0
    decoder_steps: int = 2000
    decoder_lr: float = 2e-4
    adversarial_weight: float = 0.5
    warmup: int = 100
    checkpoint_every: int = 100
    precision: str = "bf16"  # every stage's forward (`train.precision_context`), or "fp32"
    device: str = "cpu"  # where it trains: the numerics, so the weights, depend on it

    def steps(self, stage: str) -> int:
        return {
            "sr-vae": self.vae_steps,
            "sr-unet": self.unet_steps,
            "sr-decoder": self.decoder_steps,
        }[stage]

    @classmethod
    def for_device(cls, device: str, seed: int = 0) -> UpscalerPlan:
        """The CPU plan fits 2 cores in about 1.5 hours with its card: under bfloat16 autocast
        an autoencoder step takes 0.41 s there, a UNet step 0.29 s (float32: 0.63 and 0.47)
        and a decoder step against the critic 0.36 s, so the UNet sees four times the crops
        the float32 plan gave it (docs/benchmarks.md, "Model v2's upscaler, third run" and
        "fourth run"). The GPU plan fits one call of a lent H200 (`python -m engine.gpu_suite
        OUT --parts upscaler`): on the first one (2026-12-04) drawing 648 scenes took about 3
        minutes on 16 cores, an autoencoder step at batch 32 11 ms and a UNet step at batch 64
        44 ms, so 6000 and 5000 steps come to about 8.5 minutes, and the UNet sees three times
        the CPU plan's crops; the decoder's 3000 steps against the critic are estimated at
        under a minute more, not yet run there."""
        if device == "cpu":
            return cls(seed=seed)
        return cls(
            seed=seed,
            device=device,
            scenes=648,
            vae_steps=6000,
            vae_batch=32,
            unet_steps=5000,
            unet_batch=64,
            decoder_steps=3000,
            checkpoint_every=500,
            precision="fp32",  # as its timings were measured
        )


def train_upscaler(plan: UpscalerPlan, work: Path, out: Path, threads: int | None = None):
    """Run (or resume) every stage; write the pipeline to `out`."""
    if threads:
        torch.set_num_threads(threads)
    work.mkdir(parents=True, exist_ok=True)
    check_plan(plan, work)
    high, low = _data(plan, work, workers=threads or 1)
    high, low = high.to(plan.device), low.to(plan.device)
    torch.manual_seed(plan.seed)  # initial weights; every later draw has its own generator
    vae, unet = sr.vae().to(plan.device), sr.unet().to(plan.device)
    critic = patch_critic().to(plan.device)
    _train_vae(plan, work, vae, high)
    sr.fit_latent_scale(vae, _unit(high[: 4 * plan.vae_batch]))
    _train_unet(plan, work, vae, unet, high, low)
    _train_decoder(plan, work, vae, critic, high)
    pipe = sr.pipeline(vae.eval(), unet.eval()).to("cpu")
    out.mkdir(parents=True, exist_ok=True)
    pipe.to(dtype=torch.float16).save_pretrained(out, safe_serialization=True)
    return out


def _crops_of(index: int, plan: UpscalerPlan) -> tuple[torch.Tensor, torch.Tensor]:
    high, low = sr.scene_pair(sr.pair_params(index))
    g = torch.Generator().manual_seed(plan.seed * 1_000_003 + index)
    return sr.random_crops(
        torch.from_numpy(high).permute(2, 0, 1),
        torch.from_numpy(low).permute(2, 0, 1),
        plan.crops_per_scene,
        g,
    )


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


def _unit(pixels: torch.Tensor) -> torch.Tensor:
    return pixels.float() / 127.5 - 1.0


def _randn(like: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Noise shaped like `like`, drawn from the step's CPU generator (the same draws on every
    device), then moved to `like`'s device."""
    return torch.randn(like.shape, generator=g).to(like.device)


def _train_vae(plan: UpscalerPlan, work: Path, vae, high: torch.Tensor) -> None:
    def step_loss(g: torch.Generator) -> torch.Tensor:
        x = _unit(high[torch.randint(len(high), (plan.vae_batch,), generator=g)])
        with precision_context(plan.precision, plan.device):
            recon = vae.decode(vae.encode(x).latent).sample.float()
        return _reconstruction_loss(recon, x)

    vae.train()
    run_stage(plan, work, "sr-vae", {"vae": vae}, plan.vae_lr, step_loss)
    vae.eval()


def _reconstruction_loss(recon: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # The edge term keeps facets, windows and tree lines hard: L1 alone settles for blur.
    edges = sum(F.l1_loss(recon.diff(dim=d), x.diff(dim=d)) for d in (2, 3))
    return F.l1_loss(recon, x) + edges


def _train_decoder(plan: UpscalerPlan, work: Path, vae, critic, high: torch.Tensor) -> None:
    def step_loss(g: torch.Generator) -> torch.Tensor:
        x = _unit(high[torch.randint(len(high), (plan.vae_batch,), generator=g)])
        with precision_context(plan.precision, plan.device):
            with torch.no_grad():
                z = vae.encode(x).latent
            recon = vae.decode(z).sample.float()
            return adversarial_loss(
                critic,
                x,
                recon,
                _reconstruction_loss(recon, x),
                vae.decoder.conv_out.weight,
                plan.adversarial_weight,
            )

    vae.decoder.train()
    critic.train()
    modules = {"decoder": vae.decoder, "critic": critic}
    run_stage(plan, work, "sr-decoder", modules, plan.decoder_lr, step_loss)
    vae.eval()


def _train_unet(plan: UpscalerPlan, work: Path, vae, unet, high, low) -> None:
    schedule, low_res = sr.noise_schedule(), sr.low_res_noise_schedule()
    alphas = schedule.alphas_cumprod
    snr = alphas / (1 - alphas)
    weights = torch.clamp(snr, max=plan.min_snr_gamma) / (snr + 1)  # min-SNR-gamma, v target
    weights = weights.to(plan.device)
    # The pipeline passes its prompt's states; this UNet reads none, so any will do.
    states = torch.zeros(plan.unet_batch, 1, sr.sd.TEXT_DIM, device=plan.device)

    def step_loss(g: torch.Generator) -> torch.Tensor:
        pick = torch.randint(len(high), (plan.unet_batch,), generator=g)
        with torch.no_grad():
            z = vae.encode(_unit(high[pick])).latent * sr.SCALING
        level = torch.randint(0, sr.MAX_TRAIN_NOISE_LEVEL + 1, (plan.unet_batch,), generator=g)
        given = _unit(low[pick])
        level = level.to(plan.device)
        given = low_res.add_noise(given, _randn(given, g), level)
        t = torch.randint(len(alphas), (plan.unet_batch,), generator=g).to(plan.device)
        noise = _randn(z, g)
        noisy = schedule.add_noise(z, noise, t)
        with precision_context(plan.precision, plan.device):
            predicted = unet(torch.cat([noisy, given], dim=1), t, states, class_labels=level)
        predicted = predicted.sample.float()
        target = schedule.get_velocity(z, noise, t)
        per_item = F.mse_loss(predicted, target, reduction="none").mean(dim=(1, 2, 3))
        return (per_item * weights[t]).mean()

    unet.train()
    run_stage(plan, work, "sr-unet", {"unet": unet}, plan.unet_lr, step_loss)
    unet.eval()
