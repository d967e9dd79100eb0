"""Effective detail lines (`engine.detail`) of the backgrounds finals show: every built-in place
in every light, at several seeds, as `spotforge scene` writes them (1920x1080, before any
overlay, made by the configured model); with `--procedural`, the landmark scenes the next model
learns from, drawn natively at 1920x1080, for the same places, lights and seeds. A model
with a learned upscaler (landmark-dit's) is measured through it, as finals are made; what the
upscaler adds to a perfect base picture is on its card (`engine.training.upscaler_card`).

    SPOTFORGE_MODEL=landmark-dit python -m app.detail_bench [--seeds 2] [--places N] \
        [--procedural] [--markdown table.md]

Prints one JSON line per source: the median and worst lines over every picture, how many reach
the bar (issue 16's 540 lines at 1080p), how many carry all 1080 (saturated), and each place's
worst.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from PIL import Image

from app.config import Settings
from app.services import AppContext, library
from app.services.context import open_engine
from app.services.scene_look import FINAL_SIZE, scene
from engine.detail import effective_lines
from engine.training.landmarks import LandmarkParams, draw

BAR = 540  # the lines a background at 1920x1080 should carry (issue 16)
Source = Callable[[str, str, int], Image.Image]


def measure(name: str, picture: Source, places: list[str], seeds: int) -> dict:
    lines: dict[str, list[int]] = {}
    for place in places:
        for light in library.TIMES_OF_DAY:
            for seed in range(seeds):
                lines.setdefault(place, []).append(effective_lines(picture(place, light, seed)))
    every = [n for per_place in lines.values() for n in per_place]
    return {
        "source": name,
        "pictures": len(every),
        "median": statistics.median(every),
        "worst": min(every),
        "best": max(every),
        "reaching_bar": sum(n >= BAR for n in every),
        # At the full 1080 the measure saturates: such a picture carries at least that much.
        "saturated": sum(n >= FINAL_SIZE[1] for n in every),
        "worst_by_place": {place: min(n) for place, n in sorted(lines.items())},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--procedural", action="store_true")
    parser.add_argument("--places", type=int, help="only the first N places (all by default)")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    configured = Settings()
    places = [p.name for p in library.builtin_views()[0]][: args.places]
    rows = []
    # The configured model, but a throwaway database: the bench looks at no business's rows.
    with tempfile.TemporaryDirectory() as data:
        settings = configured.model_copy(
            update={"data_dir": Path(data), "database_url": f"sqlite:///{data}/bench.db",
                    "model_dir": configured.resolved_model_dir}
        )  # fmt: skip
        ctx = AppContext.open(settings)
        try:
            with open_engine(settings) as engine:

                def final(place: str, light: str, seed: int) -> Image.Image:
                    return scene(ctx, engine, place, preset=settings.model, light=light, seed=seed)

                rows.append(measure(f"final ({settings.model})", final, places, args.seeds))
        finally:
            ctx.close()

    if args.procedural:

        def procedural(place: str, light: str, seed: int) -> Image.Image:
            weather = "clear" if seed % 2 else "cloudy"
            return draw(LandmarkParams(place, light, weather, seed), FINAL_SIZE)

        rows.append(measure("landmark scenes, drawn at 1080p", procedural, places, args.seeds))
    for row in rows:
        print(json.dumps(row))
    if args.markdown:
        head = f"| source | pictures | median lines | worst | best | {BAR} or more | saturated |\n"
        head += "|---" * 7 + "|\n"
        body = "".join(
            f"| {r['source']} | {r['pictures']} | {r['median']} | {r['worst']} | {r['best']} "
            f"| {r['reaching_bar']} | {r['saturated']} |\n"
            for r in rows
        )
        args.markdown.write_text(head + body)


if __name__ == "__main__":
    main()
