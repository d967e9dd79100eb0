"""Planning a bulk run and showing its progress, at 10 and at 10,000 variants, on SQLite and on
PostgreSQL: the database work only (no image is generated).

    python -m app.scale_bench [--sizes 10 10000] [--repeats 3] [--backends sqlite postgresql]
    python -m app.scale_bench --database-url postgresql+psycopg://user@host/db --sizes 10 10000

For each repeat and size (sizes interleaved, so they share the machine's load), a new business
gets one spot and a matrix of its own geographies x audiences with N cells, and then is timed:

- `plan`: `matrix.plan_matrix` (the library read, the background cache looked up per distinct
  background, the typical cost); a cached generation stands in for the engine's probe.
- `start`: `bulk.start` for a run that is not there yet: N variant rows, N + 1 jobs.
- `start again`: `bulk.start` once more, which must add nothing (a resumed run).
- `run status`: `bulk.run_status`, what the Personalize page reads for a run's progress.
- `gallery`: `variants.cards(..., personalized_only=True, limit=GALLERY_MAX)`, the
  Personalize page's gallery of the newest variants.
- `reconcile`: `bulk.reconcile`, which a waiting worker runs.

Half of each run is made ready with a key frame (rows written directly, not timed) before
the progress reads. On PostgreSQL the first three reads are timed again after `VACUUM ANALYZE`
(", vacuumed"): right after a run is written the planner has no statistics of its rows yet;
autovacuum gathers them on its own within a minute or so of a large insert.

The engine is a stand-in that only names the model revision: `bulk.start` and `plan_matrix` ask
it nothing else when the spot's base variant exists and a generation of the preset is cached.
Every run's jobs are left waiting, so the business's queue limit is lifted. PostgreSQL, without
`--database-url`, is a throwaway cluster started by `tests/postgres.py` (Debian's server
binaries, run as the `postgres` user; run from the repository root).

Prints one JSON line per timing and, at the end, a markdown table (median and range in ms).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from PIL import Image
from sqlalchemy import insert, select, text, update

from app.config import Settings
from app.services import AppContext, bulk, businesses, library, variants
from app.services.backgrounds import background_request, generation_key
from app.services.matrix import plan_matrix
from app.services.spots import (
    SAMPLE_COPY,
    base_variant,
)
from engine.loading import preset_for
from storage.models import Render, RenderTier, Variant, VariantStatus
from templates.spec import load_template

PRESET = "mini-sd"
GALLERY_MAX = 120  # as app/ui/studio.py shows at once
TIMES = ("day", "golden", "night")


class Revisions:
    """The engine as planning sees it: it names the model revision, and nothing is generated."""

    max_batch = 4

    def revision(self, preset: str) -> str:
        return "bench"


def shape(n: int) -> tuple[int, int]:
    """Geographies x audiences for n variants of one spot, as square as n allows."""
    audiences = math.isqrt(n)
    while n % audiences:
        audiences -= 1
    return n // audiences, audiences


def setup(ctx: AppContext, engine: Revisions, n: int, tag: str) -> tuple[int, int, list, list]:
    """A business with one spot (and its base variant), n // a geographies and a audiences of
    its own, and one cached background of the preset (so planning needs no probe)."""
    business = businesses.create(ctx, f"Bench {tag}").id
    geographies, audiences = shape(n)
    photo = io.BytesIO()
    Image.new("RGB", (64, 48), (120, 80, 40)).save(photo, format="PNG")
    with ctx.tenant(business) as tenant:
        asset = tenant.assets.add(photo.getvalue(), "product.png")
        campaign = tenant.campaigns.create("Scale")
        spot = tenant.campaigns.create_spot(
            campaign.id,
            template_id="product-hero",
            template_version=load_template("product-hero").version,
            duration_s=15,
            copy=SAMPLE_COPY,
            product_asset_ids=[asset.id],
        ).id
        gs = [
            tenant.library.add_geography(f"Town {i}", landscape=f"hills {i}", weather="clear")
            for i in range(geographies)
        ]
        aus = [
            tenant.library.add_audience(f"People {i}", time_of_day=TIMES[i % len(TIMES)])
            for i in range(audiences)
        ]
        g_ids, a_ids = [g.id for g in gs], [a.id for a in aus]
    base_variant(ctx, engine, business, spot, preset=PRESET, recipe="balanced")
    g = next(v for v in library.geographies(ctx, business) if v.id == g_ids[0])
    a = next(v for v in library.audiences(ctx, business) if v.id == a_ids[0])
    request = background_request(
        g, a, business_id=business, preset=PRESET, seed=0, recipe="balanced"
    )
    with ctx.tenant(business) as tenant:
        tenant.generations.add(
            generation_key(request, engine.revision(PRESET)),
            tenant.assets.get(asset.id),
            {"model_id": preset_for(PRESET).id},
            seconds=2.0,
        )
    return business, spot, g_ids, a_ids


def half_made(ctx: AppContext, business: int, run: str) -> None:
    """Every other variant of the run ready, with a key frame (written directly)."""
    with ctx.db.session() as session:
        ids = list(
            session.scalars(select(Variant.id).where(Variant.run == run).order_by(Variant.id))
        )[::2]
        frame = _asset(ctx, business)
        session.execute(
            update(Variant).where(Variant.id.in_(ids)).values(status=VariantStatus.READY)
        )
        if ids:
            session.execute(
                insert(Render),
                [
                    {
                        "business_id": business,
                        "variant_id": i,
                        "tier": RenderTier.FRAME,
                        "asset_id": frame,
                        "timings": {},
                    }
                    for i in ids
                ],
            )


def _asset(ctx: AppContext, business: int) -> int:
    with ctx.tenant(business) as tenant:
        return tenant.assets.list("image/")[0].id


def timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def measure(ctx: AppContext, backend: str, n: int, repeat: int) -> Iterator[dict]:
    engine = Revisions()
    business, spot, g_ids, a_ids = setup(ctx, engine, n, f"{n}-{repeat}")
    plan = None

    def plan_it() -> None:
        nonlocal plan
        plan = plan_matrix(ctx, engine, business, [spot], g_ids, a_ids, preset=PRESET)

    steps: list[tuple[str, Callable[[], object]]] = [
        ("plan", plan_it),
        ("start", lambda: bulk.start(ctx, engine, business, plan)),
        ("start again", lambda: bulk.start(ctx, engine, business, plan)),
    ]
    for name, step in steps:
        yield {"backend": backend, "n": n, "repeat": repeat, "step": name, "ms": timed(step)}
    assert bulk.run_status(ctx, business, bulk.run_key(business, plan)).variants == n
    run = bulk.run_key(business, plan)
    half_made(ctx, business, run)
    reads: list[tuple[str, Callable[[], object]]] = [
        ("run status", lambda: bulk.run_status(ctx, business, run)),
        (
            "gallery",
            lambda: variants.cards(ctx, business, spot, personalized_only=True, limit=GALLERY_MAX),
        ),
        ("reconcile", lambda: bulk.reconcile(ctx, business, run)),
    ]
    for name, read in reads:
        read()  # warm: the first read of a new business pays for its plan and cache
        yield {"backend": backend, "n": n, "repeat": repeat, "step": name, "ms": timed(read)}
    if backend == "postgresql":  # again, with the statistics autovacuum gathers soon after
        with ctx.db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.execute(text("VACUUM ANALYZE variants, renders, jobs"))
        for name, read in reads[:2]:
            read()
            ms = timed(read)
            yield {"backend": backend, "n": n, "repeat": repeat, "step": f"{name}, vacuumed",
                   "ms": ms}  # fmt: skip


@contextmanager
def database(backend: str, url: str | None, data_dir: Path) -> Iterator[AppContext]:
    with ExitStack() as stack:
        if backend == "postgresql" and url is None:
            from tests.postgres import new_database, server  # a developer's tool: tests/ is there

            url = new_database(stack.enter_context(server()))
        # Room for every run's jobs: the benchmark leaves them all waiting.
        settings = Settings(data_dir=data_dir, database_url=url, max_waiting_jobs=10**9)
        ctx = AppContext.open(settings)
        stack.callback(ctx.close)
        yield ctx


def table(results: list[dict]) -> str:
    lines = [
        "| backend | step | N | median ms | range ms | repeats |",
        "|---|---|---:|---:|---:|---:|",
    ]
    keys = dict.fromkeys((r["backend"], r["step"], r["n"]) for r in results)
    for backend, step, n in sorted(keys, key=lambda k: (k[0], _order(results, k[1]), k[2])):
        ms = [r["ms"] for r in results if (r["backend"], r["step"], r["n"]) == (backend, step, n)]
        lines.append(
            f"| {backend} | {step} | {n:,} | {statistics.median(ms):,.1f} | "
            f"{min(ms):,.1f}–{max(ms):,.1f} | {len(ms)} |"
        )
    return "\n".join(lines)


def _order(results: list[dict], step: str) -> int:
    return [r["step"] for r in results].index(step)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app.scale_bench", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backends", nargs="+", choices=("sqlite", "postgresql"),
                        default=["sqlite", "postgresql"])  # fmt: skip
    parser.add_argument("--database-url", help="measure this database only (it must be empty "
                        "or Spotforge's, at any revision)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.database_url:
        backends = [(args.database_url.split(":")[0].split("+")[0], args.database_url)]
    else:
        backends = [(b, None) for b in args.backends]
    results = []
    for backend, url in backends:
        with (
            tempfile.TemporaryDirectory(prefix="spotforge-scale-") as tmp,
            database(backend, url, Path(tmp) / "var") as ctx,
        ):
            for repeat in range(args.repeats):
                for n in args.sizes:
                    for result in measure(ctx, backend, n, repeat):
                        results.append(result)
                        print(json.dumps({**result, "ms": round(result["ms"], 2)}), flush=True)
    print(table(results))


if __name__ == "__main__":
    main()
