"""A spot from a brief: refused with a reason when something is wrong, its storyboard, its
scenes reordered or one redrawn, each edit a new base variant in its lineage."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from skimage import data

from app.services import renders, spots
from app.services.demo import BRIEF
from engine import Engine
from storage.errors import StorageError
from templates.export import frames_at
from templates.storyboard import CopyError

COPY = {k: v for k, v in BRIEF.items() if k != "business_name"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "espresso.png"
    Image.fromarray(data.coffee()).save(path)
    return path


def form(photo, **changes) -> spots.BriefForm:
    fields = {
        "campaign_name": "Espresso week",
        "template_id": "product-hero",
        "copy": {**COPY, "setting": "street with buildings during the day"},
        "colors": ["#1F3A5F", "#F2B134"],
        "product_photos": [photo],
    }
    return spots.BriefForm(**{**fields, **changes})


def test_a_brief_with_a_problem_is_refused_and_stores_nothing(ctx, business_ids, photo, tmp_path):
    business = business_ids[0]
    text = tmp_path / "notes.png"
    text.write_text("not a picture")
    too_long = {**COPY, "offer": "An unbelievable forty percent off every single bag"}
    for changes, error, match in (
        ({"product_photos": []}, ValueError, "add a photo of your product"),
        ({"copy": too_long}, CopyError, "offer: 50 characters, the limit is 32"),
        ({"colors": ["navy"]}, ValueError, "colours look like #1A2B3C"),
        ({"product_photos": [text]}, StorageError, "not a supported|unrecognised|unknown"),
        ({"template_id": "nope"}, ValueError, "nope"),
    ):
        with pytest.raises(error, match=match):
            spots.create_spot(ctx, business, form(photo, **changes))
    with ctx.tenant(business) as tenant:
        assert tenant.campaigns.list() == []


def test_reorder_and_redraw_make_new_bases(ctx, business_ids, photo, engine):
    business = business_ids[0]
    spot = spots.create_spot(ctx, business, form(photo)).id
    first = spots.choose_background(ctx, engine, business, spot, 1)
    cards = spots.storyboard(ctx, engine, business, spot)
    assert [c.kind for c in cards] == ["establishing", "hero", "offer", "end_card"]
    assert cards[2].copy == {"offer": BRIEF["offer"]}

    reordered = spots.reorder_scenes(ctx, engine, business, spot, [0, 2, 1, 3])
    cards = spots.storyboard(ctx, engine, business, spot)
    assert [c.kind for c in cards] == ["establishing", "offer", "hero", "end_card"]
    with pytest.raises(ValueError, match="names each of the 4 scenes once"):
        spots.reorder_scenes(ctx, engine, business, spot, [0, 0, 1, 3])
    with pytest.raises(ValueError, match="brand card"):
        spots.regenerate_scene(ctx, engine, business, spot, 3)

    before = renders.render_variant(ctx, engine, business, reordered, "preview")
    redrawn = spots.regenerate_scene(ctx, engine, business, spot, 0)
    after = renders.render_variant(ctx, engine, business, redrawn, "preview")
    assert before.qc_passed and after.qc_passed
    with ctx.tenant(business) as tenant:
        lineage = [v.id for v in tenant.variants.ancestors(redrawn)]
        assert lineage == [reordered, first]  # each edit under the one it changed
        assert tenant.variants.get(redrawn).extra_params["scene_seeds"] == {"0": 2}
    # Only the redrawn scene changed: the opening differs, the offer (scene 2 now) does not.
    times = [1.75, 5.0]
    old, new = (
        [np.asarray(f, dtype=np.float32) for f in frames_at(r.path, times)] for r in (before, after)
    )
    assert np.abs(old[0] - new[0]).mean() > 8
    assert np.abs(old[1] - new[1]).mean() < 3
