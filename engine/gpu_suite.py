"""Everything Spotforge measures (and trains) on a lent GPU, as prepared runs that fit a lease:

    python -m engine.gpu_suite OUT [--budget-s 570] [--parts kernels,swaps,recipes,graphs]
    python -m engine.gpu_suite OUT --parts landmark-dit    # or upscaler: a call of its own

Each part runs as a subprocess with its own time cap, its JSON lines in OUT/<part>.jsonl and
its other output in OUT/suite.log: each Triton kernel against torch (`kernels.bench`); the fused
norms inside full-size models, eager, in a CUDA graph and under regional torch.compile
(`engine.acceleration.swap_bench`); the recipes and the peers a user would pick on the shipped
models (`engine.bench`, wall time synchronised); the engine's recipes again with its denoiser
replayed from CUDA graphs (`engine.acceleration.cuda_graphs`). The training parts, model v2's
base (`landmark_dit`, with its card) and its upscaler (`train_upscaler`), take the time left
and come back packed with their loss logs, whose timings size the next plan even when a run
is cut short. A training part cut at its cap resumes from its checkpoints when called again
on the same machine (it stays warm for a while after a call; landmark-dit's GPU plan takes
about 11 minutes, two calls). Later parts need only that earlier ones ended, not that they
succeeded.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

# The shipped models' recipes, and at each one's speed the peers closest to it on the CPU
# bench (docs/benchmarks.md), so each comparison is at a like speed.
RECIPE_RUNS = {
    "mini-sd": ["balanced", "fast", "deepcache:3", "deepcache:5", "tgate:5", "layercache:2"],
    "mini-dit": [
        "balanced", "fast", "stepcache:0.8", "magcache:0.1", "magcache:0.3",
        "cachedit-ts:0.1", "cachedit-ts:0.3", "pab:2",
    ],
}  # fmt: skip
# The engine's own recipes with its denoiser replayed from CUDA graphs (fused norms inside).
GRAPH_RUNS = {"mini-sd": ["exact", "balanced"], "mini-dit": ["exact", "balanced", "fast"]}
# Training parts take the time the others leave (each a call of its own, in practice), train
# in a work folder outside OUT and come back packed: the plan, the loss logs with their timings,
# and the pipeline when it finished, as OUT/<part>.tar.NN pieces under the trip's 16 MiB a file.
TRAINING = {"upscaler": Path("/tmp/spotforge-upscaler"), "landmark-dit": Path("/tmp/spotforge-dit")}
TRAINING_MIN_S = 60  # less than this left: a training part would not get past its data
PIECE = 15 * 2**20
MEASURING = frozenset({"kernels", "swaps", "recipes", "graphs"})
PARTS = MEASURING | TRAINING.keys()


def _parts() -> list[tuple[str, list[str], float]]:
    py, me = sys.executable, "engine.gpu_suite"
    swaps = [py, "-m", "engine.acceleration.swap_bench"]
    # Caps from the first H200 run's times, with room: the kernels took 35 s, the 2-row swaps
    # 82 s, the 8-row ones 40 s for two thirds; a bench method 7-10 s, 20 s with graphs.
    parts = [
        ("kernels", [py, "-m", "kernels.bench"], 50),
        ("swaps", [*swaps, "--rows", "2", "--modes", "graph,regional"], 110),
        ("swaps", [*swaps, "--rows", "8", "--modes", "graph"], 70),
    ]
    parts += [("recipes", [py, "-m", me, "recipes", p, *m], 15 + 12 * len(m))
              for p, m in RECIPE_RUNS.items()]  # fmt: skip
    parts += [("graphs", [py, "-m", me, "graphs", p, *m], 15 + 20 * len(m))
              for p, m in GRAPH_RUNS.items()]  # fmt: skip
    return parts + [(name, [py, "-m", me, name, str(work)], 0) for name, work in TRAINING.items()]


def run(out: Path, budget_s: float, parts: set[str] = MEASURING) -> None:
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + budget_s
    with (out / "suite.log").open("a") as log:
        for name, command, cap in _parts():
            if name not in parts:
                continue
            left = deadline - time.monotonic() - 15  # 15 s to pack what a training part made
            if left < (TRAINING_MIN_S if name in TRAINING else 1):
                print(f"{name}: not run, {left:.0f} s left", file=log, flush=True)
                continue
            cap = left if name in TRAINING else min(cap, left)
            began = time.monotonic()
            with (out / f"{name}.jsonl").open("a") as rows:
                try:
                    code = subprocess.run(command, stdout=rows, stderr=log, timeout=cap).returncode
                except subprocess.TimeoutExpired:
                    code = "cut at its time cap (call again on this machine to resume)"
            took = time.monotonic() - began
            print(f"{' '.join(command[2:])}: {code} in {took:.0f} s", file=log, flush=True)
            if name in TRAINING:
                _pack(TRAINING[name], out / f"{name}.tar")


def _pack(work: Path, tar: Path) -> None:
    """`work`'s files but data and checkpoints, as `tar`.00, .01, ... of at most PIECE bytes
    (`cat NAME.tar.* | tar -x` unpacks them)."""
    if not work.exists():
        return
    for stale in tar.parent.glob(f"{tar.name}.*"):  # an earlier, longer pack's tail
        stale.unlink()
    with tarfile.open(tar, "w") as archive:
        for path in sorted(work.rglob("*")):
            if path.is_file() and not path.name.endswith((".pt", ".ckpt")):
                archive.add(path, arcname=path.relative_to(work))
    with tar.open("rb") as whole:
        for n, piece in enumerate(iter(lambda: whole.read(PIECE), b"")):
            tar.with_name(f"{tar.name}.{n:02d}").write_bytes(piece)
    tar.unlink()


def _recipes(preset: str, names: list[str], cuda_graphs: bool = False) -> None:
    from engine.bench import methods
    from engine.requests import Task

    options = {"model_dir": Path("var/models"), "cuda_graphs": cuda_graphs}
    for row in methods(preset, Task.TEXT_TO_IMAGE, names, **options):
        print(json.dumps(row), flush=True)


def _upscaler(work: Path) -> None:
    from engine.training.train_upscaler import UpscalerPlan, train_upscaler

    plan = UpscalerPlan.for_device("cuda")
    train_upscaler(plan, work / "train", work / "upscaler", threads=15)


def _landmark_dit(work: Path) -> None:
    """Model v2's base trained on the GPU's plan, then its decoder (`landmark_decoder`), with
    their cards and the contact sheet."""
    from engine.training import landmark_dit
    from engine.training.landmark_card import write_landmark_card
    from engine.training.landmark_decoder import DecoderPlan, train_decoder, write_decoder_card

    plan = landmark_dit.LandmarkPlan.for_device("cuda")
    out = work / "landmark-dit"
    landmark_dit.train(plan, work / "train", out, threads=15)
    decoder_plan = DecoderPlan(device="cuda")
    decoder = train_decoder(decoder_plan, work / "decoder", out, out, threads=15)
    suite = "python -m engine.gpu_suite OUT --parts landmark-dit"
    write_decoder_card(decoder_plan, work / "decoder", out, decoder, suite)
    command = "spotforge train --model landmark-dit --device cuda"
    scores = write_landmark_card(
        plan, work / "train", out, work / "landmark-dit-sheet.png", command
    )
    print(json.dumps({"recognised": scores}), flush=True)


def main() -> None:
    part, *rest = sys.argv[1:] or [""]
    if part in ("recipes", "graphs"):  # the parts `run` starts in their own processes
        return _recipes(rest[0], rest[1:], cuda_graphs=part == "graphs")
    if part in TRAINING:
        return {"upscaler": _upscaler, "landmark-dit": _landmark_dit}[part](Path(rest[0]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--budget-s", type=float, default=570)
    parser.add_argument(
        "--parts", default=",".join(sorted(MEASURING)), help=f"of {', '.join(sorted(PARTS))}"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if unknown := parts - PARTS:
        parser.error(f"unknown parts {sorted(unknown)}; of {', '.join(sorted(PARTS))}")
    run(args.out, args.budget_s, parts)


if __name__ == "__main__":
    main()
