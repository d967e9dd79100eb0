"""A second judge of which place a picture shows: a small convolutional network that reads
shapes (a needle tower, a ridge above water, saguaros), beside the scene classifier
(`classifier.py`), which reads colour and layout.

Why a second one: the colour classifier names a place from its palette and horizon, so a
picture with Seattle's greens and blues passes as Seattle whatever is drawn in it; a viewer
names a place by what is drawn. This network is fitted on the same procedural landmark scenes,
but every training picture has its colours scrambled (channels swapped, scaled, or grey), its
brightness changed, and is blurred, noised, flipped and shifted, and each picture is
standardised on its own, so colour carries nothing it can rely on: the outlines and where they
sit do. It names held-out scenes in grey, with swapped colours or blurred as well as untouched
(its card, `engine/weights/shape-judge/`). It is not a detector of one landmark: a Seattle
scene drawn without its needle still has Rainier over the Sound and is named Seattle
(docs/benchmarks.md, "A shape judge beside the colour classifier").

`spotforge train --model shape-judge` fits it from nothing (seeded; about 5 minutes on 2
cores, drawing the scenes included, so not resumable) and writes its weights and card.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import nn

from engine.training import landmarks
from engine.training.card import licence

WEIGHTS = Path(__file__).parents[1] / "weights" / "shape-judge"
SIZE = (128, 72)  # what it reads: enough for a tower's or a ridge's outline, not for texture
LABELS = tuple(landmarks.SIGNATURES)
EVAL_SEED = 30_000_000  # its card's held-out scenes: apart from every training set's seeds


@dataclass(frozen=True)
class JudgePlan:
    seed: int = 0
    per_combination: int = 40  # scenes per geography x light x weather
    seed_base: int = 20_000_000  # apart from landmark-dit's, the upscaler's and the classifier's
    epochs: int = 8  # held-out accuracy is 100 % from the fifth on (prototype, 2026-12-05)
    batch: int = 64
    lr: float = 2e-3


def network() -> nn.Sequential:
    """Four stride-2 stages to a 3x4 grid of features: where an outline sits matters (a tower
    in the middle, peaks on the horizon), so the last pool keeps a coarse layout."""

    def stage(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, 2, 1), nn.GroupNorm(8, cout), nn.SiLU(),
            nn.Conv2d(cout, cout, 3, 1, 1), nn.GroupNorm(8, cout), nn.SiLU(),
        )  # fmt: skip

    return nn.Sequential(
        stage(3, 32), stage(32, 64), stage(64, 96), stage(96, 128),
        nn.AdaptiveAvgPool2d((3, 4)), nn.Flatten(), nn.Dropout(0.3),
        nn.Linear(128 * 12, len(LABELS)),
    )  # fmt: skip


def tensors(images: Sequence[Image.Image]) -> torch.Tensor:
    """Pictures of any size as a batch at SIZE, values 0-1."""
    arrays = [
        np.asarray(im.convert("RGB").resize(SIZE, Image.Resampling.BOX), np.float32) / 255
        for im in images
    ]
    return torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2)


def standardise(x: torch.Tensor) -> torch.Tensor:
    """Each picture to zero mean and unit spread: its overall brightness and contrast say
    nothing."""
    return (x - x.mean((1, 2, 3), keepdim=True)) / (x.std((1, 2, 3), keepdim=True) + 1e-3)


def blur(x: torch.Tensor, sigma: float) -> torch.Tensor:
    if sigma < 0.3:
        return x
    r = int(3 * sigma)
    k = torch.exp(-(torch.arange(-r, r + 1.0) ** 2) / (2 * sigma**2))
    k = (k / k.sum()).to(x.dtype)
    c = x.shape[1]
    across, down = k.view(1, 1, 1, -1).repeat(c, 1, 1, 1), k.view(1, 1, -1, 1).repeat(c, 1, 1, 1)
    x = F.conv2d(F.pad(x, (r, r, 0, 0), mode="replicate"), across, groups=c)
    return F.conv2d(F.pad(x, (0, 0, r, r), mode="replicate"), down, groups=c)


def augment(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Colours scrambled (channels swapped and scaled; grey two times in five), brightness
    changed, the batch blurred (a generated picture is soft), noised, half flipped, shifted."""
    n = x.shape[0]
    grey = x.mean(1, keepdim=True).expand_as(x)
    order = torch.stack([torch.randperm(3, generator=g) for _ in range(n)])
    x = torch.gather(x, 1, order[:, :, None, None].expand_as(x))
    x = x * (0.6 + 0.8 * torch.rand(n, 3, 1, 1, generator=g))
    x = torch.where(torch.rand(n, 1, 1, 1, generator=g) < 0.4, grey, x)
    x = x * (0.4 + 1.0 * torch.rand(n, 1, 1, 1, generator=g))
    x = blur(x, float(torch.rand(1, generator=g)) * 2.5)
    x = x + 0.04 * torch.randn(x.shape, generator=g)
    flip = torch.rand(n, generator=g) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x)
    dx, dy = (int(v) for v in torch.randint(-8, 9, (2,), generator=g))
    return torch.roll(x, (dy // 2, dx), (2, 3)).clamp(0, 1.5)


def scenes_digest() -> str:
    """A fingerprint of the scenes `landmarks.py` draws now (one per place, light and weather)
    and of the size the judge reads: the committed judge records the one it was fitted on, and
    a test says when they have changed under it, so it is refitted with them."""
    digest = hashlib.sha256(repr(SIZE).encode())
    for params in landmarks.held_out(1, seed_base=0):
        digest.update(landmarks.draw(params).tobytes())
    return digest.hexdigest()


class ShapeJudge:
    def __init__(self, net: nn.Module):
        self.net = net.eval()
        self.labels = LABELS

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> ShapeJudge:
        net = network()
        state = {k: v.float() for k, v in load_file(path / "model.safetensors").items()}
        net.load_state_dict(state)
        return cls(net)

    @classmethod
    def fit(cls, plan: JudgePlan = JudgePlan(), log=print) -> tuple[ShapeJudge, list[dict]]:
        """Fitted from nothing on `plan`'s procedural scenes; `log` gets one line an epoch."""
        torch.manual_seed(plan.seed)
        params = landmarks.held_out(plan.per_combination, plan.seed_base)
        x = tensors([landmarks.draw(p) for p in params])
        y = torch.tensor([LABELS.index(p.geography) for p in params])
        net = network()
        steps = len(x) // plan.batch
        optimizer = torch.optim.AdamW(net.parameters(), plan.lr, weight_decay=1e-2)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, plan.lr, plan.epochs * steps)
        g = torch.Generator().manual_seed(plan.seed)
        history, start = [], time.monotonic()
        for epoch in range(plan.epochs):
            net.train()
            order, total = torch.randperm(len(x), generator=g), 0.0
            for i in range(steps):
                pick = order[i * plan.batch : (i + 1) * plan.batch]
                logits = net(standardise(augment(x[pick], g)))
                loss = F.cross_entropy(logits, y[pick], label_smoothing=0.1)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                schedule.step()
                total += loss.item()
            history.append(
                {"epoch": epoch + 1, "loss": round(total / steps, 4),
                 "seconds": round(time.monotonic() - start)}
            )  # fmt: skip
            log(json.dumps(history[-1]))
        return cls(net.eval()), history

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().half().contiguous() for k, v in self.net.state_dict().items()}
        save_file(state, path / "model.safetensors", metadata={"scenes": scenes_digest()})

    @staticmethod
    def fitted_on(path: Path = WEIGHTS) -> str | None:
        """The `scenes_digest` of the scenes the judge in `path` was fitted on."""
        with safe_open(path / "model.safetensors", framework="pt") as weights:
            return (weights.metadata() or {}).get("scenes")

    @torch.inference_mode()
    def predict(self, images: Sequence[Image.Image]) -> list[str]:
        return self.predict_tensors(tensors(images))

    @torch.inference_mode()
    def predict_tensors(self, x: torch.Tensor) -> list[str]:
        return [self.labels[i] for i in self.net(standardise(x)).argmax(1).tolist()]

    def accuracy(self, images: Sequence[Image.Image], geography: str) -> float:
        predicted = self.predict(images)
        return sum(p == geography for p in predicted) / len(predicted)


VIEWS = {  # the card's held-out scenes as drawn, and with their colours or sharpness taken
    "as drawn": lambda x: x,
    "grey": lambda x: x.mean(1, keepdim=True).expand_as(x),
    "colours swapped (blue, red, green)": lambda x: x[:, [2, 0, 1]],
    "blurred (sigma 2 px at 128x72)": lambda x: blur(x, 2.0),
}


def held_out_accuracy(judge: ShapeJudge, per_combination: int = 4) -> dict[str, float]:
    """Per view, the share of held-out procedural scenes named right."""
    params = landmarks.held_out(per_combination, EVAL_SEED)
    x = tensors([landmarks.draw(p) for p in params])
    truth = np.array([p.geography for p in params])
    return {view: float(np.mean(truth == judge.predict_tensors(f(x)))) for view, f in VIEWS.items()}


def write_judge_card(
    plan: JudgePlan, out: Path, history: list[dict], command: str, per_combination: int = 4
) -> dict:
    judge = ShapeJudge.load(out)  # the committed float16 weights, as every user loads them
    accuracy = held_out_accuracy(judge, per_combination)
    params = sum(p.numel() for p in judge.net.parameters())
    card = [
        "# shape-judge",
        "",
        "Which of the 27 built-in geographies a picture shows, read from its shapes: the "
        "second judge of landmark-dit's card beside the colour-and-layout classifier. See "
        "`engine/training/shape_judge.py` for why it is built as it is.",
        "",
        licence("landmarks.py"),
        "",
        "## Model",
        "",
        f"A convolutional network of {params / 1e6:.2f} M parameters reading {SIZE[0]}x{SIZE[1]} "
        "pictures, each standardised on its own; float16 safetensors.",
        "",
        "## Training",
        "",
        f"Command: `{command}` (seeded; {history[-1]['seconds'] / 60:.0f} min of fitting, after "
        f"drawing the scenes, on the machine that made these weights, "
        f"{torch.get_num_threads()} CPU threads). "
        f"{len(landmarks.held_out(plan.per_combination))} procedural scenes, every picture's "
        "colours, brightness and sharpness scrambled anew each epoch.",
        "",
        "```json",
        json.dumps(asdict(plan), indent=1),
        "```",
        "",
        "| epoch | loss | minutes |",
        "|---|---|---|",
        *(f"| {h['epoch']} | {h['loss']:.3f} | {h['seconds'] / 60:.1f} |" for h in history),
        "",
        "## Evaluation",
        "",
        f"Held-out procedural scenes ({per_combination} seeds per geography x light x weather, "
        "seeds from "
        f"{EVAL_SEED:,}), named right:",
        "",
        "| view | named right |",
        "|---|---|",
        *(f"| {view} | {share:.1%} |" for view, share in accuracy.items()),
        "",
    ]
    (out / "README.md").write_text("\n".join(card))
    return accuracy
