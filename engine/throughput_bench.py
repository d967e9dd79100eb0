"""Background throughput: pictures per minute of the engine against the plain diffusers loop a
user would write (one call per picture, batch 1), the same model, prompts, seeds and steps.

    python -m engine.throughput_bench [--preset mini-sd] [--images 48] [--batch 8] \
        [--recipe balanced] [--repeats 3] [--compile]

The engine side is what a bulk run asks of it: every background queued at once
(`submit_all`), so it runs them in batches of up to `--batch`, with the run's recipe (bulk runs
use `balanced`) and the text encodings its prompts share. The plain loop runs in a process of
its own, as a user's script would (run beside an engine in the same process it measured 2.5x
slower than alone), timed from its first call to its last. Each repeat times
the plain loop and then the engine back to back, so the two share the machine's load, and the
ratio is taken per repeat. Both use torch's default threads. Wall time is the measure (a
throughput); process CPU time is reported beside it. The prompts are the bench's held-out ones,
each with its own seeds. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from engine.bench import HELD_OUT_PROMPTS
from engine.engine import Engine
from engine.loading import load, with_defaults
from engine.requests import Priority, Task, TextToImage


def throughput(
    preset: str = "mini-sd",
    *,
    images: int = 48,
    max_batch: int = 8,
    recipe: str = "balanced",
    repeats: int = 3,
    compile_blocks: bool = False,
    model_dir: Path = Path("var/models"),
) -> dict:
    prompts = [HELD_OUT_PROMPTS[i % len(HELD_OUT_PROMPTS)] for i in range(images)]
    requests = [
        TextToImage(preset=preset, prompt=p, seed=1000 + i, recipe=recipe, priority=Priority.BULK)
        for i, p in enumerate(prompts)
    ]
    with Engine(device="cpu", model_dir=model_dir, max_batch=max_batch,
                compile_blocks=compile_blocks) as engine:  # fmt: skip
        # The words each prompt keeps, as the engine's model reads them, so both draw the same;
        # these runs also load the engine's copy of the model (and compile it).
        read = {
            p: engine.generate(TextToImage(preset=preset, prompt=p, recipe=recipe)).params["prompt"]
            for p in HELD_OUT_PROMPTS
        }

        jobs = json.dumps({"preset": preset, "model_dir": str(model_dir),
                           "jobs": [[read[r.prompt], r.seed] for r in requests]})  # fmt: skip

        def plain_loop() -> tuple[float, float]:
            child = subprocess.run(
                [sys.executable, "-m", "engine.throughput_bench", "--plain-child", jobs],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            timing = json.loads(child.stdout.splitlines()[-1])
            return timing["wall"], timing["cpu"]

        def engine_run() -> None:
            engine.pool.get(preset).forget_encodings()  # each run encodes its prompts afresh
            for handle in engine.submit_all(requests):
                handle.result()

        def timed(fn) -> tuple[float, float]:
            wall, cpu_s = time.perf_counter(), time.process_time()
            fn()
            return time.perf_counter() - wall, time.process_time() - cpu_s

        runs = [(plain_loop(), timed(engine_run)) for _ in range(repeats)]
    per_minute = [(images * 60 / p[0], images * 60 / e[0]) for p, e in runs]
    ratios = [e / p for p, e in per_minute]
    return {
        "preset": preset,
        "images": images,
        "max_batch": max_batch,
        "recipe": recipe,
        "compile": compile_blocks,
        "threads": torch.get_num_threads(),
        "repeats": repeats,
        "load": round(os.getloadavg()[0], 2),
        "plain_per_minute": [round(p, 1) for p, _ in per_minute],
        "engine_per_minute": [round(e, 1) for _, e in per_minute],
        "plain_cpu_s": [round(p[1], 1) for p, _ in runs],
        "engine_cpu_s": [round(e[1], 1) for _, e in runs],
        "ratio": round(statistics.median(ratios), 2),
        "ratio_range": [round(min(ratios), 2), round(max(ratios), 2)],
    }


def plain_child(spec: str) -> None:
    """The loop a diffusers user writes: one call per picture; prints its wall and CPU time."""
    job = json.loads(spec)
    model = load(job["preset"], Path(job["model_dir"]), torch.device("cpu"))
    pipe, preset = model.pipeline(Task.TEXT_TO_IMAGE), model.preset
    options = dict(preset.call_options)
    filled = with_defaults(TextToImage(preset=job["preset"], prompt="x"), preset)

    def call(prompt: str, seed: int, steps: int) -> None:
        with torch.inference_mode():
            pipe(prompt, num_inference_steps=steps, guidance_scale=filled.guidance,
                 width=filled.width, height=filled.height,
                 generator=torch.Generator().manual_seed(seed), **options)  # fmt: skip

    call(*job["jobs"][0], steps=2)  # warm
    wall, cpu_s = time.perf_counter(), time.process_time()
    for prompt, seed in job["jobs"]:
        call(prompt, seed, filled.steps)
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu_s}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="mini-sd")
    parser.add_argument("--images", type=int, default=48)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--recipe", default="balanced")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="regional torch.compile")
    parser.add_argument("--plain-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plain_child:
        plain_child(args.plain_child)
        return
    row = throughput(args.preset, images=args.images, max_batch=args.batch, recipe=args.recipe,
                     repeats=args.repeats, compile_blocks=args.compile)  # fmt: skip
    print(json.dumps(row))


if __name__ == "__main__":
    main()
