"""The picture and file checks of a review, and what each measures:

- product_fidelity: inside the product's mask the stored frame matches the uploaded photo, as the
  composite scaled and placed it, within `PRODUCT_TOLERANCE`;
- background_match: the variant's background recognised as its geography's landscape, in its
  audience's light, by the scene judge of the model that drew it (`engine.scene_judge`: mini-sd
  has one); for a model no classifier knows, "not available";
- composition: the key frame has the size it was made at and the product in it is whole and
  inside title-safe; in every scene the copy is inside title-safe, and in product scenes clear of
  the product as it moves;
- qc: the variant's rendered files passed their delivery spec (their stored QC reports);
- distinct: no variant of another geography looks like it (perceptual hash of the frame with the
  product taken out, and its colours);
- integrity: every stored file the variant is made of still hashes to its recorded sha256.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from PIL import Image

from app.services.library import TIMES_OF_DAY, catalog
from app.services.review.reading import _letters, _signature
from app.services.review.subjects import Panel, Subject
from app.services.review.verdicts import Verdict, _sentence, not_judged
from engine import Seen
from storage import RenderTier
from templates.composite import PRODUCT_TOLERANCE
from templates.errors import BriefError
from templates.overlay import SAFE

FIDELITY = 0.995  # share of the product's own pixels within PRODUCT_TOLERANCE of the photo
COVERED = 0.05  # most of a text block's letters that may lie on the product
EDGE_ALPHA = 128  # a photo whose product reaches its border this opaque has it cut off
ALIKE_BITS = 6  # perceptual hashes (63 bits) this close, and...
ALIKE_LEVELS = 5.0  # ...colours this close (mean of 8x8 thumbnails, 0-255), look alike


def product_fidelity(subject: Subject, panel: Panel) -> Verdict:
    expected = subject.expected
    if expected is None:
        return not_judged("Cannot be checked: the background or cut-out it was made from is gone.")
    frame = subject.frame
    if frame.size != subject.size:
        return Verdict(
            False, 0.0,
            f"The frame is {frame.width}x{frame.height}, not the {subject.size[0]}x"
            f"{subject.size[1]} it was made at, so the product is not where it should be.",
        )  # fmt: skip
    inside = np.asarray(expected.interior) > 0
    placed = np.zeros((*inside.shape, 3), dtype=np.int16)
    left, top, right, bottom = expected.box
    placed[top:bottom, left:right] = np.asarray(expected.product.convert("RGB"))
    moved = np.abs(np.asarray(frame, dtype=np.int16) - placed).max(axis=2)[inside]
    share = float((moved <= PRODUCT_TOLERANCE).mean()) if moved.size else 0.0
    if share >= FIDELITY:
        return Verdict(
            True, share,
            f"Your product looks exactly as photographed: {share:.1%} of its "
            f"{moved.size:,} pixels are within {PRODUCT_TOLERANCE} of 255 levels of your photo "
            "(the most the scene's light may tint it).",
        )  # fmt: skip
    return Verdict(
        False, share,
        f"Only {share:.0%} of the product's pixels match your photo (within "
        f"{PRODUCT_TOLERANCE} of 255 levels): in this frame the product is moved, cut off, "
        "altered or missing.",
    )  # fmt: skip


def background_match(subject: Subject, panel: Panel) -> Verdict:
    if subject.geography_id is None:
        return not_judged("The spot as briefed has no place to match.")
    if subject.pictured:
        return not_judged(
            "Not applicable: it is set in your own picture, which Spotforge does not judge "
            "against its pictures of places."
        )
    judge = panel.judges(subject.params.model_id)
    if judge is None:
        return not_judged(
            "Not available for this model: no classifier Spotforge has knows its pictures, so "
            "the background is not checked against the place."
        )
    if subject.background_path is None:
        return not_judged("Cannot be checked: the background it was made on is not stored.")
    if judge.places and subject.geography not in builtin_places():
        return not_judged(
            f"Not available for {subject.geography}: the model's classifier knows the built-in "
            "places only, and this one is yours."
        )
    with Image.open(subject.background_path) as image:
        [seen] = judge.judge([image.convert("RGB")])
    wanted = TIMES_OF_DAY.get(subject.light or "", "")
    if seen.place is not None:
        return _place_match(subject, seen, wanted)
    shown = f"{seen.landscape} {TIMES_OF_DAY[seen.light]}"
    if seen.landscape != subject.landscape:
        return Verdict(False, 0.0, f"The background looks like {shown}, not the "
                                   f"{subject.landscape} of {subject.geography}.")  # fmt: skip
    if subject.light is not None and seen.light != subject.light:
        return Verdict(
            False, 0.5,
            f"The background shows {seen.landscape}, as {subject.geography} should, but it "
            f"looks {TIMES_OF_DAY[seen.light]}, not {wanted} (the light {subject.audience} are "
            "shown).",
        )  # fmt: skip
    return Verdict(True, 1.0, f"The background shows {shown}, as {subject.geography} should "
                              f"for {subject.audience}.")  # fmt: skip


def _place_match(subject: Subject, seen: Seen, wanted: str) -> Verdict:
    """The verdict of a judge of places (landmark-dit's): the place by its shapes."""
    looks = TIMES_OF_DAY[seen.light]
    if seen.place != subject.geography:
        return Verdict(False, 0.0, f"The background looks like {seen.place} {looks}, not "
                                   f"{subject.geography}.")  # fmt: skip
    if subject.light is not None and seen.light != subject.light:
        return Verdict(
            False, 0.5,
            f"The background shows {subject.geography} by its shapes, but it looks "
            f"{looks}, not {wanted} (the light {subject.audience} are shown).",
        )  # fmt: skip
    return Verdict(True, 1.0, f"The background shows {subject.geography} by its shapes, "
                              f"{looks}, as {subject.audience} should see it.")  # fmt: skip


def builtin_places() -> set[str]:
    return {place["name"] for place in catalog()[0]}


def composition(subject: Subject, panel: Panel) -> Verdict:
    width, height = subject.size
    frame = subject.frame
    if frame.size != subject.size:
        return Verdict(
            False, 0.0,
            f"The frame is {frame.width}x{frame.height}, not the {width}x{height} its layout "
            "was made for.",
        )  # fmt: skip
    safe = (round(SAFE * width), round(SAFE * height),
            round((1 - SAFE) * width), round((1 - SAFE) * height))  # fmt: skip
    rules: list[tuple[bool, str]] = []
    expected = subject.expected
    if expected is not None:
        left, top, right, bottom = expected.box
        rules.append((
            left >= 0 and top >= 0 and right <= width and bottom <= height,
            "the product runs off the edge of the frame",
        ))  # fmt: skip
        side = _cut_side(subject.reference)
        rules.append((side is None, f"your photo cuts the product off at its {side} edge"))
        rules.append((_inside(expected.box, safe), "the product reaches outside title-safe"))
    try:
        scenes = subject.scenes
    except BriefError as exc:
        return Verdict(False, 0.0, f"The copy does not fit on screen: {exc}.")
    for laid in scenes:
        alpha = np.asarray(laid.layer.getchannel("A"))
        for block in laid.blocks:
            letters = _letters(alpha, block.box)
            ys, xs = np.nonzero(letters)
            if not xs.size:
                continue
            where = f"the {block.slot} of scene {laid.scene.index + 1}"
            left, top, right, bottom = block.box
            bounds = (left + xs.min(), top + ys.min(), left + xs.max() + 1, top + ys.max() + 1)
            rules.append((_inside(bounds, safe), f"{where} reaches outside title-safe"))
            if laid.products:  # the product moves (parallax, zoom): judged at each moment
                covered = max(float(p[top:bottom, left:right][letters].mean())
                              for p in laid.products)  # fmt: skip
                rules.append((
                    covered <= COVERED,
                    f"{where} lies over the product ({covered:.0%} of its letters)",
                ))  # fmt: skip
    broken = [text for ok, text in rules if not ok]
    score = 1 - len(broken) / len(rules) if rules else 1.0
    if broken:
        return Verdict(False, score, _sentence(broken))
    return Verdict(
        True, score,
        "The product is whole and inside title-safe, and every line of copy is inside "
        "title-safe and clear of the product.",
    )  # fmt: skip


def qc(subject: Subject, panel: Panel) -> Verdict:
    latest = {r.tier: r for r in subject.renders if r.tier != RenderTier.FRAME}
    if not latest:
        return not_judged("Not rendered yet: only its key frame exists.")
    rules = failures = 0
    problems = []
    for tier, render in sorted(latest.items()):
        checked = (render.qc_report or {}).get("rules") or []
        if not checked:
            rules, failures = rules + 1, failures + 1
            problems.append(f"the {tier} was never checked against its spec")
        for rule in checked:
            rules += 1
            if not rule.get("passed"):
                failures += 1
                problems.append(
                    f"the {tier}'s {rule['name']} is {rule['measured']} "
                    f"(expected {rule['expected']})"
                )
    score = 1 - failures / rules
    if problems:
        return Verdict(False, score, _sentence(problems))
    tiers = " and ".join(sorted(latest))
    whose = "its" if len(latest) == 1 else "their"
    return Verdict(True, score, f"The {tiers} passed every rule of {whose} delivery spec.")


def distinct(subject: Subject, panel: Panel) -> Verdict:
    mine = _signature(subject, panel)
    if mine is None:
        return not_judged("Cannot be compared: its frame cannot be read.")
    # Every other place's variants (the same place for another audience may share its
    # background), compared in one pass of array arithmetic, however many there are.
    peers, hashes, colours = panel.comparable()
    others = np.array([p.geography_id != subject.geography_id for p in peers], dtype=bool)
    if not others.any():
        return Verdict(True, 1.0, "There is no variant of another place to compare it with.")
    bits = (hashes[others] != mine[0]).sum(axis=1)
    levels = np.abs(colours[others] - mine[1]).mean(axis=(1, 2, 3))
    # Alike (0.5 or less) when both the layout and the colours are close.
    apart = np.minimum(1.0, np.maximum(bits / (2 * ALIKE_BITS), levels / (2 * ALIKE_LEVELS)))
    i = int(apart.argmin())
    peer = [p for p, other in zip(peers, others, strict=True) if other][i]
    score = float(apart[i])
    distance = f"{bits[i]} of 63 layout bits and {levels[i]:.0f} of 255 colour levels apart"
    if score <= 0.5:
        return Verdict(
            False, score,
            f"It looks like variant #{peer.id} for {peer.geography} ({distance}): a viewer "
            "could not tell the two places apart.",
        )  # fmt: skip
    return Verdict(
        True, score,
        f"It looks different from every other place's variant (the nearest, #{peer.id} for "
        f"{peer.geography}, is {distance}).",
    )  # fmt: skip


def integrity(subject: Subject, panel: Panel) -> Verdict:
    broken = []
    for f in subject.files:
        if f.path not in panel.hashes:
            panel.hashes[f.path] = _sha256(f.path)
        found = panel.hashes[f.path]
        if found == "":
            broken.append(f"its {f.role} is missing from the store")
        elif found != f.sha256:
            broken.append(f"its {f.role} has changed since it was stored (damaged or edited)")
    total = len(subject.files)
    score = 1 - len(broken) / total if total else 1.0
    if broken:
        return Verdict(False, score, _sentence(broken) + " Make it again or restore the file.")
    return Verdict(True, score, f"All {total} stored files are intact (each matches its sha256).")


def _cut_side(reference: Image.Image | None) -> str | None:
    """Which edge of the photo cuts the product off, if one does."""
    if reference is None:
        return None
    alpha = np.asarray(reference.getchannel("A"))
    edges = {"top": alpha[0], "bottom": alpha[-1], "left": alpha[:, 0], "right": alpha[:, -1]}
    return next((side for side, line in edges.items() if line.max() >= EDGE_ALPHA), None)


def _inside(box, outer) -> bool:
    return box[0] >= outer[0] and box[1] >= outer[1] and box[2] <= outer[2] and box[3] <= outer[3]


def _sha256(path: Path) -> str:
    """The file's sha256, or "" when it is missing."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
    except FileNotFoundError:
        return ""
    return digest.hexdigest()
