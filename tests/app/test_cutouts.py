"""Cut-outs are made once per photo and segmenter, and stored: another process finds them."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from skimage import data

from app.services.cutouts import cutout
from app.services.results_cache import Reuse
from engine import Engine
from engine.segmentation import Refinement, Segmenter


def test_a_photo_is_cut_out_once_and_found_again(ctx, business_ids, tmp_path):
    business = business_ids[0]
    png = io.BytesIO()
    Image.fromarray(data.coffee()).save(png, format="PNG")
    with ctx.tenant(business) as tenant:
        photo = tenant.assets.add(png.getvalue(), "espresso.png").id
    tally = Reuse()
    with Engine(model_dir=tmp_path, device="cpu") as engine:
        first = cutout(ctx, engine, business, photo, tally=tally)
        assert first.mode == "RGBA"
        alpha = np.asarray(first.getchannel("A"))
        assert 0.05 < (alpha > 127).mean() < 0.8  # the cup, not the whole photo or nothing
    with Engine(model_dir=tmp_path, device="cpu") as other_process:
        again = cutout(ctx, other_process, business, photo, tally=tally)
        assert np.array_equal(np.asarray(first), np.asarray(again))
        assert (tally.asked, tally.reused) == (2, 1)
        # Another segmenter (here: another threshold) makes another cut-out, not the stored one.
        other_process._segmenter = Segmenter(refinement=Refinement(threshold=0.8))
        cutout(ctx, other_process, business, photo, tally=tally)
        assert (tally.asked, tally.reused) == (3, 1)
