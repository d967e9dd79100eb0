"""Bulk throughput with and without background reuse, or at several engine batch sizes, each
run in a fresh data directory.

    python -m app.bulk_bench [--creatives 5] [--geographies 4] [--audiences 1] [--data DIR]
    python -m app.bulk_bench --creatives 1 --geographies 8 --batch 1 8 --repeats 3
    python -m app.bulk_bench --creatives 1 --geographies 24 --workers 0 1 2 --repeats 3

A business with N creatives (spots of scikit-image's espresso photo) runs the matrix once with
reuse (each background made once, shared by the creatives) and once without (every variant
makes its own). With `--batch`, it runs the matrix with reuse at each engine `max_batch` given
(1: one frame job at a time), alternating them `--repeats` times so neighbouring runs share the
machine's load. With `--workers`, the same at each pool size (0: the engine in this process,
with torch's threads; N: a Ray pool of N one-thread engines, whose wall time is what counts, its
start-up timed apart). Prints one JSON line per run (wall seconds and the process's CPU seconds)
and a markdown table. `--setup-only` prints the business and spot ids and stops, for driving
`spotforge bulk` by hand.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import time
from pathlib import Path

from PIL import Image
from skimage import data

from app.config import Settings
from app.services import AppContext, bulk, businesses, library
from app.services.matrix import plan_matrix
from app.services.pool import WorkerPool
from app.services.spots import SAMPLE_COPY
from engine import Engine
from templates.spec import load_template


def setup(ctx: AppContext, creatives: int) -> tuple[int, list[int]]:
    business = businesses.create(ctx, "Bench Coffee").id
    photo = io.BytesIO()
    Image.fromarray(data.coffee()).resize((300, 200)).save(photo, format="PNG")
    with ctx.tenant(business) as tenant:
        asset = tenant.assets.add(photo.getvalue(), "espresso.png")
        campaign = tenant.campaigns.create("Throughput")
        spots = [
            tenant.campaigns.create_spot(
                campaign.id,
                template_id="product-hero",
                template_version=load_template("product-hero").version,
                duration_s=15,
                copy={**SAMPLE_COPY, "headline": f"Fresh espresso, take {n + 1}"},
                product_asset_ids=[asset.id],
            ).id
            for n in range(creatives)
        ]
    return business, spots


def run(
    data_dir: Path, args: argparse.Namespace, reuse: bool, max_batch: int = 4, workers: int = 0
) -> dict:
    settings = Settings(data_dir=data_dir, engine_max_batch=max_batch, device="cpu")
    ctx = AppContext.open(settings)
    startup = None
    try:
        business, spots = setup(ctx, args.creatives)
        geographies = [g.id for g in library.geographies(ctx, business)][: args.geographies]
        audiences = [a.id for a in library.audiences(ctx, business)][: args.audiences]
        with Engine(model_dir=data_dir / "models", device="cpu", max_batch=max_batch) as engine:
            plan = plan_matrix(
                ctx, engine, business, spots, geographies, audiences, preset="mini-sd"
            )
            run = bulk.start(ctx, engine, business, plan)
            cpu = time.process_time()
            if workers:
                began = time.perf_counter()
                with WorkerPool(settings, workers) as pool:
                    startup = round(time.perf_counter() - began, 1)
                    report = pool.work(ctx, business, run, reuse=reuse)
            else:
                report = bulk.work(ctx, engine, business, run, reuse=reuse)
            cpu = time.process_time() - cpu
    finally:
        ctx.close()
    return {
        "matrix": f"{args.creatives}x{args.geographies}x{args.audiences}",
        "reuse": reuse,
        "max_batch": max_batch,
        "workers": workers or "in-process",
        "pool_startup_seconds": startup,
        "variants": report.variants,
        "ready": report.ready,
        "backgrounds_made": report.backgrounds.asked - report.backgrounds.reused,
        "reuse_ratio": report.backgrounds.to_dict()["ratio"],
        "seconds": round(report.seconds, 1),
        "cpu_seconds": None if workers else round(cpu, 1),  # a pool's is in its processes
        "variants_per_minute": round(report.variants_per_minute, 1),
        "frames_per_worker": sorted(report.workers.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--creatives", type=int, default=5)
    parser.add_argument("--geographies", type=int, default=4)
    parser.add_argument("--audiences", type=int, default=1)
    parser.add_argument("--data", type=Path, default=Path("var/bulk-bench"))
    parser.add_argument("--setup-only", action="store_true")
    parser.add_argument("--batch", type=int, nargs="+", help="engine max_batch values to compare")
    parser.add_argument(
        "--workers", type=int, nargs="+", help="pool sizes to compare (0: the engine in-process)"
    )
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if args.setup_only:
        ctx = AppContext.open(Settings(data_dir=args.data))
        try:
            business, spots = setup(ctx, args.creatives)
        finally:
            ctx.close()
        print(json.dumps({"business": business, "spots": spots}))
        return
    if args.workers:
        runs = [(True, 4, w) for _ in range(args.repeats) for w in args.workers]
    elif args.batch:
        runs = [(True, b, 0) for _ in range(args.repeats) for b in args.batch]
    else:
        runs = [(True, 4, 0), (False, 4, 0)]
    rows = []
    for n, (reuse, max_batch, workers) in enumerate(runs):
        name = f"{n}-{'reuse' if reuse else 'no-reuse'}-batch{max_batch}-workers{workers}"
        folder = args.data / name
        shutil.rmtree(folder, ignore_errors=True)
        row = run(folder, args, reuse, max_batch, workers)
        print(json.dumps(row), flush=True)
        rows.append(row)
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")


if __name__ == "__main__":
    main()
