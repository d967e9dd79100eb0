"""Training mini-sd from the procedural scenes, seeded and resumable.

Stages, each resumable from its last checkpoint in the work directory:

1. data    : draw the scenes (balanced over archetype x time x weather) and their captions;
2. vae     : the autoencoder on random crops (it is fully convolutional), then on whole images;
3. latents : encode every scene once; the latent scale is set so latents have unit variance;
4. unet    : the UNet and the text encoder together, epsilon prediction with min-SNR weighting,
             captions randomly shortened or dropped (classifier-free guidance, short prompts);
   unet-tune: the same objective again from the end of `unet`, with a fresh optimizer and a
             lower, shorter cosine (a warm restart): the loss was still falling when `unet`
             ended, and a restart takes it further than stretching one schedule would at the
             same cost;
5. decoder : the VAE decoder alone, on whole images, with an edge term against blur; the
             encoder is frozen, so the latents the UNet learned are unchanged;
6. export  : a diffusers pipeline in safetensors (its model card: engine.training.card).

mini-dit (`train_dit`) takes the same data and mini-sd's trained autoencoder, and trains its
transformer and text encoders together in one stage, `dit`.

Every random draw comes from a generator seeded by (seed, stage, step), so a run resumed from a
checkpoint takes exactly the steps an uninterrupted run takes.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL
from torch.nn.attention import SDPBackend, sdpa_kernel
from tqdm.auto import tqdm

from engine.training import dit
from engine.training import model as arch
from engine.training.scenes import ARCHETYPES, TIMES, WEATHER, SceneParams, draw

# The order gives each stage its random stream (`_step_seed`), so a stage added later goes last
# and leaves the others' draws untouched (a retired one is renamed, not removed); `train` runs
# them in their data-flow order.
STAGES = (
    "vae", "vae-whole", "unet", "decoder", "unet-tune", "dit", "sr-net", "sr-adversarial",
    "dit-tune", "dc-decoder",
)  # fmt: skip
RUN_ORDER = ("vae", "vae-whole", "unet", "unet-tune", "decoder")
CAPTION_FORMS = ("full", "no-weather", "no-time", "archetype", "empty")
# How often each caption form is trained: mostly whole captions, some shortened so a prompt
# naming only a place works, and some empty for classifier-free guidance.
CAPTION_WEIGHTS = (0.6, 0.1, 0.1, 0.1, 0.1)


@dataclass(frozen=True)
class Plan:
    """Everything that determines the trained weights."""

    seed: int = 0
    images: int = 6000
    vae_steps: int = 1500
    vae_batch: int = 16
    vae_crop: int = 64
    vae_whole_steps: int = 150
    vae_whole_batch: int = 8
    vae_lr: float = 5e-4
    kl_weight: float = 1e-6
    unet_steps: int = 2500
    unet_batch: int = 64
    unet_lr: float = 5e-4
    unet_tune_steps: int = 2000
    unet_tune_lr: float = 2.5e-4
    decoder_steps: int = 500
    decoder_batch: int = 8
    decoder_lr: float = 2e-4
    warmup: int = 100
    min_snr_gamma: float = 5.0
    dit_steps: int = 3000
    dit_batch: int = 64
    dit_lr: float = 3e-4
    dit_precision: str = "fp32"  # or "bf16": see `train_transformer`
    checkpoint_every: int = 100

    def steps(self, stage: str) -> int:
        return {
            "vae": self.vae_steps,
            "vae-whole": self.vae_whole_steps,
            "unet": self.unet_steps,
            "unet-tune": self.unet_tune_steps,
            "decoder": self.decoder_steps,
            "dit": self.dit_steps,
        }[stage]


def caption(params: SceneParams, form: str) -> str:
    place, when = ARCHETYPES[params.archetype], TIMES[params.time]
    return {
        "full": params.caption,
        "no-weather": f"{place} {when}",
        "no-time": f"{place}, {params.weather}",
        "archetype": place,
        "empty": "",
    }[form]


def scene_params(index: int) -> SceneParams:
    """Scene `index`: archetype, time and weather cycle so every combination is equally common."""
    combos = [(a, t, w) for a in ARCHETYPES for t in TIMES for w in WEATHER]
    return SceneParams(*combos[index % len(combos)], seed=index)


def train(plan: Plan, work: Path, out: Path, threads: int | None = None) -> Path:
    """Run (or resume) every stage; write the pipeline and its model card to `out`."""
    if threads:
        torch.set_num_threads(threads)
    work.mkdir(parents=True, exist_ok=True)
    check_plan(plan, work)
    images, captions = _data(plan, work)
    torch.manual_seed(plan.seed)  # initial weights; every later draw has its own generator
    vae = arch.vae()
    train_vae(plan, work, vae, images)
    latents = encode_latents(work, vae, images)
    tokenizer = arch.tokenizer()
    torch.manual_seed(plan.seed + 1)
    encoder, unet = arch.text_encoder(len(tokenizer)), arch.unet()
    _train_unet(plan, work, encoder, unet, latents, captions, tokenizer)
    train_decoder(plan, work, vae, images)
    pipe = arch.pipeline(vae.eval(), encoder.eval(), unet.eval())
    out.mkdir(parents=True, exist_ok=True)
    # Half the bytes in git; loading casts back to the device's dtype (float32 on CPU).
    pipe.to(dtype=torch.float16).save_pretrained(out, safe_serialization=True)
    return out


def train_dit(plan: Plan, work: Path, out: Path, base: Path, threads: int | None = None) -> Path:
    """Run (or resume) mini-dit's one stage on the autoencoder of the mini-sd pipeline in
    `base`; write the pipeline to `out`."""
    if threads:
        torch.set_num_threads(threads)
    work.mkdir(parents=True, exist_ok=True)
    check_plan(plan, work)
    images, _ = _data(plan, work)
    vae = AutoencoderKL.from_pretrained(base / "vae", torch_dtype=torch.float32).eval()
    latents = encode_latents(work, vae, images)
    tokenizer = arch.tokenizer()
    torch.manual_seed(plan.seed + 2)
    pipe = dit.pipeline(
        vae, dit.text_encoder(len(tokenizer)), dit.text_encoder(len(tokenizer)), dit.transformer()
    )
    train_transformer(plan, work, pipe, latents, lambda i, form: caption(scene_params(i), form))
    for part in (pipe.text_encoder, pipe.text_encoder_2, pipe.transformer):
        part.eval()
    out.mkdir(parents=True, exist_ok=True)
    pipe.to(dtype=torch.float16).save_pretrained(out, safe_serialization=True)
    return out


def train_transformer(
    plan: Plan,
    work: Path,
    pipe,
    latents: dict[str, torch.Tensor],
    caption_of: Callable[[int, str], str],
    forms: tuple[str, ...] = CAPTION_FORMS,
    form_weights: tuple[float, ...] = CAPTION_WEIGHTS,
    tune_lr: float | None = None,
    device: str = "cpu",
) -> None:
    """Stage `dit`: rectified flow (SD3's objective): the transformer predicts noise - data at
    a point on the straight line between them, with SD3's logit-normal weighting of where on
    it. `caption_of(index, form)` is image `index`'s caption in one of `forms`. With `tune_lr`,
    then stage `dit-tune`: a warm restart at that lr (as mini-sd's `unet-tune`). `latents` and
    `pipe` are on `device`; every random draw is made on the CPU, so a GPU run draws the same.

    `plan.dit_precision` "bf16" runs the forward under bfloat16 (`precision_context`): on these
    AVX512-BF16 CPUs a step of landmark-dit's transformer then takes 1.32x less process time
    (`python -m engine.training.precision_bench`). The committed weights were trained in float32:
    weights trained under bfloat16 for the same minutes were no better by the card and moved
    the recipes' fidelity under its bars (docs/benchmarks.md, "landmark-dit trained under
    bfloat16 autocast")."""
    form_odds = torch.tensor(form_weights)
    scale = float(latents["scale"])

    def step_loss(g: torch.Generator) -> torch.Tensor:
        pick = torch.randint(len(latents["mean"]), (plan.dit_batch,), generator=g)
        z = latents["mean"][pick]
        if "std" in latents:  # a KL autoencoder's posterior: a sample of it
            z = z + latents["std"][pick] * torch.randn(z.shape, generator=g).to(device)
        z = z * scale
        drawn = torch.multinomial(form_odds, plan.dit_batch, replacement=True, generator=g)
        prompts = [
            caption_of(i, forms[f]) for i, f in zip(pick.tolist(), drawn.tolist(), strict=True)
        ]
        sigma = torch.sigmoid(torch.randn(plan.dit_batch, generator=g)).to(device)
        noise = torch.randn(z.shape, generator=g).to(device)
        s = sigma.view(-1, 1, 1, 1)
        with precision_context(plan.dit_precision, device):
            states, _, pooled, _ = pipe.encode_prompt(
                prompts, None, None, device=device, do_classifier_free_guidance=False,
                max_sequence_length=dit.T5_TOKENS,
            )  # fmt: skip
            predicted = pipe.transformer(
                hidden_states=(1 - s) * z + s * noise,
                encoder_hidden_states=states,
                pooled_projections=pooled,
                timestep=sigma * 1000,
            ).sample
        return F.mse_loss(predicted.float(), noise - z)

    modules = {
        "text_encoder": pipe.text_encoder,
        "text_encoder_2": pipe.text_encoder_2,
        "transformer": pipe.transformer,
    }
    for module in modules.values():
        module.train()
    run_stage(plan, work, "dit", modules, plan.dit_lr, step_loss)
    if tune_lr is not None:
        run_stage(plan, work, "dit-tune", modules, tune_lr, step_loss)


@contextmanager
def precision_context(precision: str, device: str):
    """The forward of a training step in `precision`: "fp32", or "bf16" for bfloat16 autocast
    (weights, optimizer and loss stay float32). On the CPU attention then takes the math
    kernel: the flash kernel's bfloat16 backward is about three times slower than its float32
    one, which would take back most of what bfloat16 gains."""
    if precision not in ("fp32", "bf16"):
        raise ValueError(f"precision is fp32 or bf16, not {precision!r}")
    half, device_type = precision == "bf16", torch.device(device).type
    with (
        torch.autocast(device_type, dtype=torch.bfloat16, enabled=half),
        sdpa_kernel(SDPBackend.MATH) if half and device_type == "cpu" else nullcontext(),
    ):
        yield


def check_plan(plan, work: Path) -> None:
    """Refuse to resume a work directory made with another plan (a dataclass of everything
    that determines the weights): the result would be neither."""
    path = work / "plan.json"
    if path.exists():
        # A field added since the run began counts at its default (older runs still resume).
        before = {**asdict(type(plan)()), **json.loads(path.read_text())}
        if before != asdict(plan):
            now = asdict(plan)
            changed = sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))
            raise ValueError(
                f"{work} holds a run with a different plan ({', '.join(changed)} differ); "
                "use another --work directory or delete it"
            )
    else:
        path.write_text(json.dumps(asdict(plan), indent=1))


def _data(plan: Plan, work: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """Images as uint8 [N, 3, H, W] and the token ids of each caption form [N, forms, T]."""
    path = work / "data.pt"
    if not path.exists():
        params = [scene_params(i) for i in range(plan.images)]
        pixels = np.stack(
            [np.asarray(draw(p, arch.SIZE)) for p in tqdm(params, desc="data", unit="img")]
        )
        tokenizer = arch.tokenizer()
        ids = [
            tokenizer(
                [caption(p, form) for p in params],
                padding="max_length",
                max_length=arch.MAX_TOKENS,
                return_tensors="pt",
            ).input_ids
            for form in CAPTION_FORMS
        ]
        save_atomic(
            {
                "images": torch.from_numpy(pixels).permute(0, 3, 1, 2).contiguous(),
                "captions": torch.stack(ids, dim=1),
            },
            path,
        )
    data = torch.load(path, weights_only=True)
    return data["images"], data["captions"]


def _to_unit(pixels: torch.Tensor) -> torch.Tensor:
    return pixels.float() / 127.5 - 1.0


def train_vae(plan: Plan, work: Path, vae, images: torch.Tensor) -> None:
    def loss_at(batch: int, crop: int | None):
        def step_loss(g: torch.Generator) -> torch.Tensor:
            pick = torch.randint(len(images), (batch,), generator=g)
            x = _to_unit(images[pick])
            if crop:
                top = int(torch.randint(x.shape[2] - crop + 1, (1,), generator=g))
                left = int(torch.randint(x.shape[3] - crop + 1, (1,), generator=g))
                x = x[:, :, top : top + crop, left : left + crop]
            posterior = vae.encode(x).latent_dist
            z = posterior.mean + posterior.std * torch.randn(posterior.mean.shape, generator=g)
            recon = vae.decode(z).sample
            return F.l1_loss(recon, x) + plan.kl_weight * posterior.kl().mean()

        return step_loss

    vae.train()
    whole = loss_at(plan.vae_whole_batch, None)
    run_stage(plan, work, "vae", {"vae": vae}, plan.vae_lr, loss_at(plan.vae_batch, plan.vae_crop))
    run_stage(plan, work, "vae-whole", {"vae": vae}, plan.vae_lr / 5, whole)
    vae.eval()


def train_decoder(plan: Plan, work: Path, vae, images: torch.Tensor) -> None:
    def step_loss(g: torch.Generator) -> torch.Tensor:
        x = _to_unit(images[torch.randint(len(images), (plan.decoder_batch,), generator=g)])
        with torch.no_grad():
            posterior = vae.encode(x).latent_dist
            z = posterior.mean + posterior.std * torch.randn(posterior.mean.shape, generator=g)
        recon = vae.decode(z).sample
        edges = sum(
            F.l1_loss(recon.diff(dim=d), x.diff(dim=d)) for d in (2, 3)
        )  # sharp horizons, windows and tree lines
        return F.l1_loss(recon, x) + edges

    vae.decoder.train()
    decoder = {"decoder": vae.decoder, "post_quant_conv": vae.post_quant_conv}
    run_stage(plan, work, "decoder", decoder, plan.decoder_lr, step_loss)
    vae.eval()


def encode_latents(work: Path, vae, images: torch.Tensor) -> dict[str, torch.Tensor]:
    """Posterior mean and std of every scene; sets the VAE's scaling factor from them."""
    path = work / "latents.pt"
    if not path.exists():
        means, stds = [], []
        with torch.inference_mode():
            for chunk in tqdm(images.split(64), desc="latents", unit="batch"):
                posterior = vae.encode(_to_unit(chunk)).latent_dist
                means.append(posterior.mean)
                stds.append(posterior.std)
        mean, std = torch.cat(means), torch.cat(stds)
        scale = 1.0 / torch.sqrt(mean.var() + (std**2).mean()).item()
        save_atomic({"mean": mean, "std": std, "scale": torch.tensor(scale)}, path)
    latents = torch.load(path, weights_only=True)
    vae.register_to_config(scaling_factor=float(latents["scale"]))
    return latents


def _train_unet(plan, work, encoder, unet, latents, captions, tokenizer) -> None:
    noise_schedule = arch.training_scheduler()
    alphas = noise_schedule.alphas_cumprod
    snr = alphas / (1 - alphas)
    weights = torch.clamp(snr, max=plan.min_snr_gamma) / snr  # min-SNR-gamma, epsilon target
    form_odds = torch.tensor(CAPTION_WEIGHTS)
    scale = float(latents["scale"])

    def step_loss(g: torch.Generator) -> torch.Tensor:
        pick = torch.randint(len(captions), (plan.unet_batch,), generator=g)
        mean, std = latents["mean"][pick], latents["std"][pick]
        z = (mean + std * torch.randn(mean.shape, generator=g)) * scale
        forms = torch.multinomial(form_odds, plan.unet_batch, replacement=True, generator=g)
        ids = captions[pick, forms]
        t = torch.randint(len(alphas), (plan.unet_batch,), generator=g)
        noise = torch.randn(z.shape, generator=g)
        noisy = noise_schedule.add_noise(z, noise, t)
        states = encoder(ids)[0]
        predicted = unet(noisy, t, states).sample
        per_item = F.mse_loss(predicted, noise, reduction="none").mean(dim=(1, 2, 3))
        return (per_item * weights[t]).mean()

    encoder.train()
    unet.train()
    modules = {"text_encoder": encoder, "unet": unet}
    run_stage(plan, work, "unet", modules, plan.unet_lr, step_loss)
    run_stage(plan, work, "unet-tune", modules, plan.unet_tune_lr, step_loss)


def run_stage(
    plan,
    work: Path,
    stage: str,
    modules: dict[str, torch.nn.Module],
    lr: float,
    step_loss: Callable[[torch.Generator], torch.Tensor],
) -> None:
    """AdamW with warm-up and cosine decay; checkpoints every `plan.checkpoint_every` steps and
    resumes from the last one; one loss row per step in `<stage>-loss.csv`. `plan` is a `Plan`
    or another model's plan with the same `seed`, `warmup`, `checkpoint_every` and `steps`."""
    steps = plan.steps(stage)
    params = [p for m in modules.values() for p in m.parameters()]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    checkpoint = work / f"{stage}.ckpt"
    start = 0
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=True)
        for name, module in modules.items():
            module.load_state_dict(state[name])
        optimizer.load_state_dict(state["optimizer"])
        start = int(state["step"])
    if start >= steps:
        return
    log_path = work / f"{stage}-loss.csv"
    rows = _read_log(log_path)[:start]  # a crash may have logged steps past the checkpoint
    bar = tqdm(range(start, steps), initial=start, total=steps, desc=stage, unit="step")
    began = time.monotonic() - (rows[-1][2] if rows else 0.0)
    for step in bar:
        for group in optimizer.param_groups:
            group["lr"] = lr * _lr_factor(step, steps, plan.warmup)
        g = torch.Generator().manual_seed(_step_seed(plan.seed, stage, step))
        loss = step_loss(g)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        rows.append((step, loss.item(), round(time.monotonic() - began, 2)))
        bar.set_postfix(loss=f"{loss.item():.4f}")
        if (step + 1) % plan.checkpoint_every == 0 or step + 1 == steps:
            state = {name: m.state_dict() for name, m in modules.items()}
            save_atomic(
                {**state, "optimizer": optimizer.state_dict(), "step": step + 1}, checkpoint
            )
            _write_log(log_path, rows)


def _lr_factor(step: int, steps: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


def _step_seed(seed: int, stage: str, step: int) -> int:
    return (seed * 1_000_003 + STAGES.index(stage) * 10_000_019 + step) % 2**63


def save_atomic(obj, path: Path) -> None:
    """Write-then-rename: a kill mid-save leaves the previous checkpoint intact."""
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _read_log(path: Path) -> list[tuple[int, float, float]]:
    if not path.exists():
        return []
    with path.open() as f:
        return [(int(r["step"]), float(r["loss"]), float(r["seconds"])) for r in csv.DictReader(f)]


def _write_log(path: Path, rows: list[tuple[int, float, float]]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(("step", "loss", "seconds"))
        writer.writerows(rows)
    os.replace(tmp, path)


def read_losses(work: Path, stage: str) -> list[tuple[int, float, float]]:
    return _read_log(work / f"{stage}-loss.csv")
