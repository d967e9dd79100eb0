"""Everything Spotforge measures on a lent GPU, as one prepared run that fits one lease:

    python -m engine.gpu_suite OUT [--budget-s 570] [--parts kernels,swaps,recipes,graphs,upscaler]

In order, each part a subprocess with its own time cap, its JSON lines in OUT/<part>.jsonl and
its other output in OUT/suite.log: each Triton kernel against torch (`kernels.bench`); the fused
norms inside full-size models, eager, in a CUDA graph and under regional torch.compile
(`engine.acceleration.swap_bench`); the recipes and the peers a user would pick on the shipped
models (`engine.bench`, wall time synchronised); the engine's recipes again with its denoiser
replayed from CUDA graphs (`engine.acceleration.cuda_graphs`); then, in the time left, the x4
upscaler's GPU plan (`engine.training.train_upscaler`), packed into OUT/landmark-upscaler.tar
with its loss logs, whose timings size the next plan even when the run is cut short. The
upscaler's whole plan needs a call of its own (`--parts upscaler`). Later parts need only that
earlier ones ended, not that they succeeded.
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
UPSCALER_MIN_S = 60  # less than this left: the upscaler would not get past its data
UPSCALER_WORK = Path("/tmp/spotforge-upscaler")  # its data and checkpoints stay out of OUT
PARTS = frozenset({"kernels", "swaps", "recipes", "graphs", "upscaler"})


def _parts() -> list[tuple[str, list[str], float]]:
    py, me = sys.executable, "engine.gpu_suite"
    swaps = [py, "-m", "engine.acceleration.swap_bench"]
    parts = [
        ("kernels", [py, "-m", "kernels.bench"], 60),
        ("swaps", [*swaps, "--rows", "2", "--modes", "graph,regional"], 120),
        ("swaps", [*swaps, "--rows", "8", "--modes", "graph"], 40),
    ]
    parts += [("recipes", [py, "-m", me, "recipes", p, *m], 60) for p, m in RECIPE_RUNS.items()]
    parts += [("graphs", [py, "-m", me, "graphs", p, *m], 90) for p, m in GRAPH_RUNS.items()]
    return [*parts, ("upscaler", [py, "-m", me, "upscaler", str(UPSCALER_WORK)], 0)]


def run(out: Path, budget_s: float, parts: set[str] = PARTS) -> None:
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + budget_s
    with (out / "suite.log").open("a") as log:
        for name, command, cap in _parts():
            if name not in parts:
                continue
            left = deadline - time.monotonic() - 15  # 15 s to pack what the upscaler made
            if left < (UPSCALER_MIN_S if name == "upscaler" else 1):
                print(f"{name}: not run, {left:.0f} s left", file=log, flush=True)
                continue
            cap = left if name == "upscaler" else min(cap, left)
            began = time.monotonic()
            with (out / f"{name}.jsonl").open("a") as rows:
                try:
                    code = subprocess.run(command, stdout=rows, stderr=log, timeout=cap).returncode
                except subprocess.TimeoutExpired:
                    code = "cut at its time cap"
            took = time.monotonic() - began
            print(f"{' '.join(command[2:])}: {code} in {took:.0f} s", file=log, flush=True)
            if name == "upscaler":
                _pack(UPSCALER_WORK, out / "landmark-upscaler.tar")


def _pack(work: Path, tar: Path) -> None:
    if work.exists():
        with tarfile.open(tar, "w") as archive:
            for path in sorted(work.rglob("*")):
                if path.is_file() and not path.name.endswith((".pt", ".ckpt")):
                    archive.add(path, arcname=path.relative_to(work))


def _recipes(preset: str, names: list[str], cuda_graphs: bool = False) -> None:
    from engine.bench import methods
    from engine.requests import Task

    options = {"model_dir": Path("var/models"), "cuda_graphs": cuda_graphs}
    for row in methods(preset, Task.TEXT_TO_IMAGE, names, **options):
        print(json.dumps(row), flush=True)


def _upscaler(work: Path) -> None:
    from engine.training.train_upscaler import UpscalerPlan, train_upscaler

    plan = UpscalerPlan.for_device("cuda")
    train_upscaler(plan, work / "train", work / "landmark-upscaler", threads=15)


def main() -> None:
    part, *rest = sys.argv[1:] or [""]
    if part in ("recipes", "graphs"):  # the parts `run` starts in their own processes
        return _recipes(rest[0], rest[1:], cuda_graphs=part == "graphs")
    if part == "upscaler":
        return _upscaler(Path(rest[0]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--budget-s", type=float, default=570)
    parser.add_argument("--parts", default=",".join(sorted(PARTS)))
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if unknown := parts - PARTS:
        parser.error(f"unknown parts {sorted(unknown)}; of {', '.join(sorted(PARTS))}")
    run(args.out, args.budget_s, parts)


if __name__ == "__main__":
    main()
