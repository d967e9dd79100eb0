"""Backgrounds per geography: generated once per everything that determines them, stored as
assets, shared by creatives and by audiences in the same light, and the same bits every time."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from app.services import library, pictures
from app.services.backgrounds import (
    background,
    background_request,
    generation_key,
    stored_request,
)
from app.services.errors import UserError
from app.services.pictures import Backdrop
from app.services.results_cache import Reuse
from app.services.scene_look import scene
from app.services.spots import generation_params
from engine import Engine, TextToImage, with_defaults
from engine.detail import effective_lines
from engine.loading import preset_for
from engine.runner import resolve


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


def pick(views, *names):
    by_name = {v.name: v for v in views}
    return [by_name[n] for n in names]


def test_a_matrix_generates_each_background_once(ctx, business_ids, engine):
    business = business_ids[0]
    geographies = pick(library.geographies(ctx, business), "Miami", "Denver")
    # Runners and families see daylight, retirees golden hour.
    audiences = pick(library.audiences(ctx, business), "Young runners", "Families", "Retirees")
    tally = Reuse()
    made = []
    for _creative in range(2):
        for geography in geographies:
            for audience in audiences:
                request = background_request(
                    geography, audience, business_id=business, preset="mini-sd", seed=4
                )
                made.append(background(ctx, engine, business, request, tally=tally))
    assert tally.asked == 12
    assert len({b.asset_id for b in made}) == 4  # 2 geographies x 2 lights
    assert sum(not b.reused for b in made) == 4
    assert tally.reuse_ratio == pytest.approx(8 / 12)
    with ctx.tenant(business) as tenant:
        for asset_id in {b.asset_id for b in made}:
            assert Image.open(tenant.assets.path(asset_id)).size == (128, 128)


def test_a_stored_background_is_what_the_request_regenerates(ctx, business_ids, engine, tmp_path):
    business = business_ids[1]
    [geography] = pick(library.geographies(ctx, business), "Chicago")
    [audience] = pick(library.audiences(ctx, business), "Night owls")
    request = background_request(
        geography, audience, business_id=business, preset="mini-sd", seed=7
    )
    stored = background(ctx, engine, business, request)
    assert not stored.reused and any("'chicago'" in w for w in stored.warnings)
    assert background(ctx, engine, business, request).warnings == stored.warnings  # kept too
    with ctx.tenant(business) as tenant:
        pixels = np.asarray(Image.open(tenant.assets.path(stored.asset_id)))
    with Engine(model_dir=tmp_path, device="cpu") as fresh:
        again = np.asarray(fresh.generate(request).images[0])
    assert np.array_equal(pixels, again)


def test_the_key_changes_with_anything_that_changes_the_pixels(ctx, business_ids, monkeypatch):
    [geography] = pick(library.geographies(ctx, business_ids[0]), "Phoenix")
    [audience] = pick(library.audiences(ctx, business_ids[0]), "Families")

    def key(seed=1, recipe="balanced", revision="bundled:a"):
        request = background_request(
            geography, audience, business_id=business_ids[0], preset="mini-sd", seed=seed,
            recipe=recipe,
        )  # fmt: skip
        return generation_key(request, revision)

    assert key() == key()
    # Retrained weights, another seed, another recipe: each a different result.
    assert len({key(), key(revision="bundled:b"), key(seed=2), key(recipe="fast")}) == 4
    # So does an engine whose recipes compute differently: its old results are not hits.
    before = key()
    monkeypatch.setattr("app.services.backgrounds.ENGINE_VERSION", "0.1.0")
    assert key() != before


def test_two_businesses_in_one_place_get_two_pictures(ctx, business_ids, engine):
    """The same geography, light and run seed: each business its own composition, and each
    business's the same every time it is asked."""
    pictures = {}
    for business in business_ids:
        [geography] = pick(library.geographies(ctx, business), "Manhattan")
        [audience] = pick(library.audiences(ctx, business), "Families")
        request = background_request(
            geography, audience, business_id=business, preset="mini-sd", seed=3
        )
        again = background_request(
            geography, audience, business_id=business, preset="mini-sd", seed=3
        )
        assert again == request
        made = background(ctx, engine, business, request)
        with ctx.tenant(business) as tenant:
            pictures[business] = np.asarray(Image.open(tenant.assets.path(made.asset_id)))
    a, b = (pictures[x].astype(int) for x in business_ids)
    assert np.abs(a - b).mean() > 3  # not the same picture


def test_a_look_at_a_scene_is_the_same_each_time_and_each_business_its_own(
    ctx, business_ids, engine, tmp_path
):
    """`spotforge scene`'s service: the background fitted to the final's frame, the same
    pixels each time it is asked; a business's own differs from the built-in look."""
    asked = [scene(ctx, engine, "manhattan", preset="mini-sd", light="night") for _ in "ab"]
    assert asked[0].size == (1920, 1080)
    assert asked[0].tobytes() == asked[1].tobytes()
    own = scene(ctx, engine, "Manhattan", preset="mini-sd", light="night",
                business_id=business_ids[0])  # fmt: skip
    assert np.abs(np.asarray(own, int) - np.asarray(asked[0], int)).mean() > 3
    with pytest.raises(UserError, match="light must be one of day, golden, night"):
        scene(ctx, engine, "Manhattan", preset="mini-sd", light="dusk")

    # A place the business set in its own picture is looked at in that picture, graded.
    photo = tmp_path / "our-street.png"
    Image.new("RGB", (1600, 900), (200, 180, 60)).save(photo)
    picture = pictures.upload(ctx, business_ids[0], photo)
    library.set_geography_background(ctx, business_ids[0], "Manhattan", Backdrop(picture.asset_id))
    day = scene(ctx, engine, "Manhattan", preset="mini-sd", business_id=business_ids[0])
    assert day.size == (1920, 1080)
    assert np.abs(np.asarray(day, int) - (200, 180, 60)).max() <= 2


def test_a_landmark_dit_background_is_drawn_at_a_finals_size_by_its_upscaler(
    ctx, business_ids, engine, tmp_path
):
    """Model v2 as a business gets it: landmark-dit's 256x144 picture taken to 1920x1080 by its
    learned upscaler, crisper than the same picture enlarged, stored with a lineage that
    re-renders it bit for bit."""
    business = business_ids[0]
    [geography] = pick(library.geographies(ctx, business), "Manhattan")
    [audience] = pick(library.audiences(ctx, business), "Night owls")
    request = background_request(
        geography, audience, business_id=business, preset="landmark-dit", seed=2
    )
    assert (request.width, request.height) == (1920, 1080)
    assert request.layout == "Manhattan | night | clear"  # drawn from its layout (engine.layouts)
    # The variant's stored parameters name the same request, layout and all.
    params = generation_params(request, engine.revision("landmark-dit"), {})
    assert stored_request(params) == with_defaults(request)
    made = background(ctx, engine, business, request)
    with ctx.tenant(business) as tenant:
        upscaled = Image.open(tenant.assets.path(made.asset_id))
        upscaled.load()
        recorded = tenant.generations.get(made.key).params
    assert upscaled.size == (1920, 1080)
    assert (recorded["width"], recorded["height"]) == (1920, 1080)
    base = engine.generate(replace(request, width=None, height=None)).images[0]
    assert base.size == (256, 144)
    enlarged = base.resize((1920, 1080), Image.Resampling.BICUBIC)
    assert effective_lines(upscaled) >= 1.3 * effective_lines(enlarged)
    # The upscaler keeps the picture: shrunk back, its colours and layout are the base's (its
    # sharper edges move pixels by 8 grey levels on average; a picture of another place by 50+).
    small = np.asarray(upscaled.resize((256, 144), Image.Resampling.BOX), int)
    assert np.abs(small - np.asarray(base, int)).mean() < 12
    with Engine(model_dir=tmp_path, device="cpu") as fresh:
        again = fresh.generate(request)
    assert again.images[0].tobytes() == upscaled.tobytes()
    assert again.timings["upscaling"] > 0
    assert again.params["model_revision"] == recorded["model_revision"]


@pytest.mark.parametrize("preset_id", ["mini-sd", "tiny-sd"])
def test_defaults_are_filled_by_one_resolver_for_key_lineage_and_engine(preset_id):
    """A request that leaves the preset's defaults out and one that spells them out are the
    same background to the cache, the same variant to the lineage, the same run to the engine."""
    bare = TextToImage(preset=preset_id, prompt="snowy peaks at golden hour", seed=3)
    preset = preset_for(preset_id)
    full = with_defaults(bare)
    assert (full.steps, full.guidance, full.width, full.height) == (
        preset.steps, preset.guidance, preset.width, preset.height,
    )  # fmt: skip
    assert generation_key(bare, "r1") == generation_key(full, "r1")
    assert generation_params(bare, "r1", {}) == generation_params(full, "r1", {})
    ran = resolve(bare, preset)
    assert (ran.steps, ran.guidance, ran.width, ran.height) == (
        full.steps, full.guidance, full.width, full.height,
    )  # fmt: skip
    other = with_defaults(replace(bare, steps=preset.steps + 1))
    assert generation_key(other, "r1") != generation_key(full, "r1")
