"""How recognisable the landmark scenes are: recognition per geography by the project's scene
classifier on held-out seeds (the ceiling a model trained on them can reach), and the contact
sheet a person looks at.

    python -m engine.training.landmark_report --measure --sheet docs/landmarks-contact-sheet.png
"""

from __future__ import annotations

import argparse

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from engine.training.classifier import SceneClassifier
from engine.training.landmarks import SIGNATURES, TRAIN_SIZE, LandmarkParams, draw, held_out
from engine.training.scenes import TIMES, WEATHER


def recognition(per_combination: int = 8, fit_per_combination: int = 40) -> dict[str, float]:
    """Per geography, the share of held-out pictures (seeds apart from the classifier's) that
    the project's scene classifier, fitted on landmark scenes, names right."""
    classifier = SceneClassifier.fit(fit_per_combination, target="geography")
    params = held_out(per_combination)
    predicted = classifier.predict(draw(p) for p in params)
    hits: dict[str, list[bool]] = {g: [] for g in SIGNATURES}
    for p, label in zip(params, predicted, strict=True):
        hits[p.geography].append(label == p.geography)
    return {g: sum(h) / len(h) for g, h in hits.items()}


def contact_sheet(seed: int = 0) -> Image.Image:
    """Every geography (rows) in every light (columns), each cell at 1:1 at TRAIN_SIZE."""
    width, height = TRAIN_SIZE
    label_w = 190
    sheet = Image.new("RGB", (label_w + 3 * (width + 4), len(SIGNATURES) * (height + 4)), "white")
    d = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(13)
    for row, geography in enumerate(SIGNATURES):
        y = row * (height + 4)
        d.text((6, y + height // 2 - 8), geography, fill="black", font=font)
        for col, time in enumerate(TIMES):
            weather = WEATHER[(row + col) % 2]
            image = draw(LandmarkParams(geography, time, weather, seed + row * 3 + col))
            sheet.paste(image, (label_w + col * (width + 4), y))
    return sheet


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true", help="recognition per geography")
    parser.add_argument("--per-combination", type=int, default=8)
    parser.add_argument("--sheet", help="write the contact sheet PNG here")
    args = parser.parse_args(argv)
    if args.sheet:
        contact_sheet().save(args.sheet)
        print(f"wrote {args.sheet}")
    if args.measure:
        scores = recognition(args.per_combination)
        for geography, score in sorted(scores.items(), key=lambda kv: kv[1]):
            print(f"{score:6.1%}  {geography}")
        print(f"lowest {min(scores.values()):.1%}, mean {np.mean(list(scores.values())):.1%}")


if __name__ == "__main__":
    main()
