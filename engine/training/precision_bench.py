"""How much faster landmark-dit's transformer trains under bfloat16 autocast than in float32,
timed through `train_transformer` itself (the step the real plan runs: captions, both text
encoders, the transformer, AdamW) on unit-variance latents of the training size. Float32 and
bfloat16 runs alternate, so each pair shares the machine's load; process CPU time per step.

    python -m engine.training.precision_bench [--pairs 5] [--steps 6]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

from engine.training import dit, landmark_dit
from engine.training import model as sd
from engine.training.landmarks import TRAIN_SIZE
from engine.training.train import train_transformer


def _seconds_per_step(plan: landmark_dit.LandmarkPlan, pipe, latents) -> float:
    with tempfile.TemporaryDirectory() as work:
        began = time.process_time()
        train_transformer(
            plan,
            Path(work),
            pipe,
            latents,
            lambda i, form: landmark_dit.caption(landmark_dit.scene(i), form),
            landmark_dit.CAPTION_FORMS,
            landmark_dit.CAPTION_WEIGHTS,
        )
        return (time.process_time() - began) / plan.dit_steps


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=_positive, default=5)
    parser.add_argument("--steps", type=_positive, default=6, help="training steps per timed run")
    args = parser.parse_args()
    torch.manual_seed(0)
    width, height = TRAIN_SIZE[0] // 8, TRAIN_SIZE[1] // 8
    latents = {"mean": torch.randn(64, landmark_dit.LATENT_CHANNELS, height, width)}
    latents["scale"] = torch.tensor(1.0)
    words = len(landmark_dit.vocabulary()) + len(sd.SPECIALS)
    pipe = landmark_dit.pipeline(
        landmark_dit.vae(),
        dit.text_encoder(words),
        dit.text_encoder(words),
        dit.transformer(width, landmark_dit.LATENT_CHANNELS),
    )
    plan = replace(landmark_dit.LandmarkPlan(), dit_steps=args.steps, warmup=1)  # no restart
    times: dict[str, list[float]] = {"fp32": [], "bf16": []}
    for precision in times:  # untimed: kernel selection and allocator warm-up
        _seconds_per_step(replace(plan, dit_steps=1, dit_precision=precision), pipe, latents)
    for _ in range(args.pairs):
        for precision, runs in times.items():
            runs.append(_seconds_per_step(replace(plan, dit_precision=precision), pipe, latents))
    ratios = [a / b for a, b in zip(times["fp32"], times["bf16"], strict=True)]
    print(f"batch {plan.dit_batch}, {torch.get_num_threads()} threads, process CPU s per step:")
    print("| precision | median | range |\n|---|---|---|")
    for precision, runs in times.items():
        print(f"| {precision} | {statistics.median(runs):.2f} | {min(runs):.2f}-{max(runs):.2f} |")
    print(f"bf16 speedup: {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
