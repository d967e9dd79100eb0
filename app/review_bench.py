"""What review catches, what it flags wrongly, and what it costs, on a real run.

    python -m app.review_bench [--geographies 5] [--audiences 4] [--seed 0] [--preset P] [--out DIR]

A business's espresso spot is made for the first N built-in places x M audiences with the
default model, or --preset (a fresh data folder under --out), and every variant is reviewed as
it came out ("clean"): each check's failures are counted and a contact sheet of the flagged
variants' frames is written (`flagged.png`), to be looked at by hand: a flag is a catch if the
picture is wrong as the check says, else a false alarm. Then known faults are planted, one kind
per variant (a key frame edited on disk, a frame whose product is cut off, a frame copied from
another place, a blank frame), and the review is run again: each fault is caught when the check
it should trip fails that variant. Prints the counts as JSON and a markdown table, with the
cost of review per variant in wall and process CPU seconds.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path

from PIL import Image

from app.bulk_bench import setup
from app.config import Settings
from app.services import AppContext, bulk, library
from app.services.matrix import plan_matrix
from app.services.review import CHECKS, SpotReview, review_spot
from engine import Engine
from engine.presets import DEFAULT_PRESET
from storage import RenderTier

# Each planted fault, and the check that must catch it.
FAULTS = {
    "edited file": "integrity",
    "product cut off": "product_fidelity",
    "frame of another place": "distinct",
    "blank frame": "product_fidelity",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--geographies", type=int, default=5)
    parser.add_argument("--audiences", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default=DEFAULT_PRESET)
    parser.add_argument("--out", type=Path, default=Path("var/review-bench"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=args.out / f"data-{time.time_ns()}", device="cpu")
    ctx = AppContext.open(settings)
    try:
        business, [spot] = setup(ctx, 1)
        places = [g.id for g in library.geographies(ctx, business)][: args.geographies]
        people = [a.id for a in library.audiences(ctx, business)][: args.audiences]
        with Engine(model_dir=settings.data_dir / "models", device="cpu") as engine:
            plan = plan_matrix(ctx, engine, business, [spot], places, people, preset=args.preset,
                               seed=args.seed)  # fmt: skip
            bulk.work(ctx, engine, business, bulk.start(ctx, engine, business, plan))
            clean, cost = _timed(lambda: review_spot(ctx, engine, business, spot))
            _sheet(clean, ctx, business, args.out / "flagged.png")
            caught = _planted(ctx, engine, business, spot, clean)
    finally:
        ctx.close()
    failures = {name: sum(v.checks[name].passed is False for v in clean.variants)
                for name in CHECKS}  # fmt: skip
    result = {
        "variants": len(clean.variants),
        "flagged": sum(not v.passed for v in clean.variants),
        "failures_per_check": failures,
        "planted_caught": caught,
        "seconds_per_variant": {k: round(s / len(clean.variants), 2) for k, s in cost.items()},
        "flagged_why": {f"#{v.id} {v.geography} · {v.audience}": {n: v.checks[n].why
                        for n in v.failed} for v in clean.variants if not v.passed},
    }  # fmt: skip
    print(json.dumps(result, indent=2))
    print("\n| check | failed on the clean run | planted fault | caught |\n|---|---|---|---|")
    for name in CHECKS:
        planted = [f for f, check in FAULTS.items() if check == name]
        got = ", ".join(f"{f}: {'yes' if caught[f] else 'NO'}" for f in planted) or "-"
        print(f"| {name} | {failures[name]} of {len(clean.variants)} | {got} | |")


def _timed(review) -> tuple[SpotReview, dict[str, float]]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = review()
    return result, {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


def _planted(ctx, engine, business: int, spot: int, clean: SpotReview) -> dict[str, bool]:
    """Plant each fault in its own variant (of a different place each), review, and say for
    each whether its check failed that variant."""
    by_place: dict[str, int] = {}
    for v in clean.variants:
        if v.geography != "as briefed":
            by_place.setdefault(v.geography, v.id)
    victims = list(by_place.values())
    if len(victims) < len(FAULTS) + 1:
        raise SystemExit(f"planting {len(FAULTS)} faults needs {len(FAULTS) + 1} places")
    with ctx.tenant(business) as tenant:
        frames = tenant.variants.frames(victims)
        paths = {v: tenant.assets.path(frames[v]) for v in victims}
    pictures = {v: Image.open(paths[v]).convert("RGB") for v in victims}
    edited, cut, copied, blank = victims[: len(FAULTS)]
    paths[edited].write_bytes(paths[edited].read_bytes() + b"edited")
    size = pictures[cut].size
    shifted = Image.new("RGB", size)
    shifted.paste(pictures[cut], (size[0] // 2, 0))  # the product half out of the frame
    _replace(ctx, business, cut, shifted)
    _replace(ctx, business, copied, pictures[victims[-1]])
    _replace(ctx, business, blank, Image.new("RGB", size, (90, 90, 90)))
    planted = review_spot(ctx, engine, business, spot, variant_ids=[edited, cut, copied, blank])
    verdicts = {v.id: v for v in planted.variants}
    return {
        fault: verdicts[victim].checks[check].passed is False
        for (fault, check), victim in zip(FAULTS.items(), (edited, cut, copied, blank),
                                          strict=True)
    }  # fmt: skip


def _replace(ctx, business: int, variant: int, frame: Image.Image) -> None:
    png = io.BytesIO()
    frame.save(png, format="PNG")
    with ctx.tenant(business) as tenant:
        asset = tenant.assets.add(png.getvalue(), "planted.png")
        tenant.variants.add_render(variant, tier=RenderTier.FRAME, asset_id=asset.id)


def _sheet(review: SpotReview, ctx, business: int, out: Path) -> None:
    flagged = [v for v in review.variants if not v.passed]
    if not flagged:
        return
    with ctx.tenant(business) as tenant:
        frames = tenant.variants.frames([v.id for v in flagged])
        shots = [Image.open(tenant.assets.path(frames[v.id])).convert("RGB").resize((480, 270))
                 for v in flagged if v.id in frames]  # fmt: skip
    sheet = Image.new("RGB", (480 * 4, 270 * ((len(shots) + 3) // 4)), "white")
    for i, shot in enumerate(shots):
        sheet.paste(shot, (480 * (i % 4), 270 * (i // 4)))
    sheet.save(out)


if __name__ == "__main__":
    main()
