"""The text check of a review, and what it measures:

- legibility: each scene is drawn as the spot draws it from the variant's stored inputs (its
  moving picture, at the key frame's size, under the copy laid out by the templates' overlay
  code); every text slot is read back by OCR (RapidOCR, whose PP-OCR models ship in its wheel)
  at the scene's hardest moment and matched to the copy, the QR code is decoded and matched to
  the web address, and each block's contrast is measured on the final pixels at the scene's
  start, middle and end.
"""

from __future__ import annotations

import numpy as np

from app.services.review.reading import (
    _address,
    _letters,
    _similarity,
    measured_contrast,
    read_block,
    read_qr,
)
from app.services.review.subjects import Panel, Subject
from app.services.review.verdicts import Verdict, _sentence
from templates.errors import BriefError
from templates.overlay import MIN_CONTRAST

READ_BACK = 0.85  # similarity of OCR'd text to the copy (difflib ratio on letters and digits)


def legibility(subject: Subject, panel: Panel) -> Verdict:
    try:
        scenes = subject.scenes
    except BriefError as exc:  # copy that cannot be laid out at a legible size
        return Verdict(False, 0.0, f"The copy does not fit on screen: {exc}.")
    problems, similarities, contrasts, lines = [], [], [], 0
    for laid in scenes:
        alpha = np.asarray(laid.layer.getchannel("A"))
        pixels = [np.asarray(p) for p in laid.pictures]
        for block in laid.blocks:
            lines += 1
            wanted = laid.scene.copy_text[block.slot]
            where = f"the {block.slot} of scene {laid.scene.index + 1} ({laid.scene.title})"
            # The picture moves under the copy: judged at its hardest moment.
            measured = [measured_contrast(p, alpha, block.box) for p in pixels]
            known = [(r, i) for i, r in enumerate(measured) if r is not None]
            ratio, hardest = min(known) if known else (None, 0)
            letters = _letters(alpha, block.box)
            read = read_block(laid.pictures[hardest], letters, block.box, block.font_px)
            similarity = _similarity(read, wanted)
            similarities.append(similarity)
            if similarity < READ_BACK:
                shown = repr(read) if read.strip() else "nothing"
                problems.append(f"{where} should say {wanted!r} but reads as {shown}")
            if ratio is not None:
                contrasts.append(ratio)
                if ratio < MIN_CONTRAST:
                    when = ("at its start", "halfway through", "at its end")[hardest]
                    problems.append(
                        f"{where} has a contrast of {ratio:.1f}:1 against the picture behind it "
                        f"{when} ({MIN_CONTRAST}:1 is needed to read it across a room)"
                    )
        if laid.scene.qr_url:
            lines += 1
            decoded = read_qr(laid.pictures[0])
            opens = _address(decoded) == _address(laid.scene.qr_url)
            similarities.append(1.0 if opens else 0.0)
            if not opens:
                got = f"opens {decoded!r}" if decoded else "cannot be read by a phone"
                problems.append(f"the QR code should open {laid.scene.qr_url!r} but {got}")
    worst_contrast = min(contrasts) if contrasts else None
    score = min(similarities, default=1.0)
    if worst_contrast is not None:
        score = min(score, worst_contrast / MIN_CONTRAST, 1.0)
    if problems:
        return Verdict(False, score, _sentence(problems))
    faintest = "" if worst_contrast is None else (
        f"; the faintest has a contrast of {worst_contrast:.1f}:1 ({MIN_CONTRAST}:1 needed)"
    )  # fmt: skip
    return Verdict(True, score, f"All {lines} lines of copy read back as written{faintest}.")
