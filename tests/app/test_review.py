"""Review: every variant of a real (tiny) bulk run scored by the named checks, and the checks
caught when a stored file is tampered with, a frame loses its product, two places look alike or
a render misses its spec; `spotforge review` as a user runs it; another business refused."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings
from app.services import AppContext, bulk, businesses, library
from app.services.backgrounds import generation_key, stored_request
from app.services.cutouts import cutout
from app.services.matrix import plan_matrix
from app.services.review import CHECKS, review_spot
from engine import Engine
from engine.training.classifier import SceneClassifier
from engine.training.scenes import ARCHETYPES
from storage import GenerationParams, NotFound, RenderTier
from templates import qc as quality
from templates.composite import Placement, composite
from tests.app.conftest import SPOTFORGE, spotforge_env
from tests.app.test_bulk import cup, ids, png, spot_with_photo


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Iterator[SimpleNamespace]:
    """One real run shared by the module: a business's spot of the espresso photo, made for
    Miami and Denver x young runners; and a second business."""
    root = tmp_path_factory.mktemp("review")
    settings = Settings(data_dir=root / "var", max_asset_bytes=5_000_000)
    ctx = AppContext.open(settings)
    business = businesses.create(ctx, "Harbor Coffee").id
    other = businesses.create(ctx, "Trailhead Running").id
    spot = spot_with_photo(ctx, business, cup())
    geographies = ids(library.geographies(ctx, business), "Miami", "Denver")
    audiences = ids(library.audiences(ctx, business), "Young runners")
    with Engine(model_dir=root / "models", device="cpu") as engine:
        plan = plan_matrix(ctx, engine, business, [spot], geographies, audiences,
                           preset="mini-sd", seed=2)  # fmt: skip
        run = bulk.work(ctx, engine, business, bulk.start(ctx, engine, business, plan), lease_s=5)
        assert (run.variants, run.ready) == (2, 2)
        with ctx.tenant(business) as tenant:
            miami, denver = tenant.variants.run_ids(run.run)
            base = tenant.variants.base_of(spot).id
        yield SimpleNamespace(
            ctx=ctx, engine=engine, settings=settings, business=business, other=other,
            spot=spot, base=base, miami=miami, denver=denver,
        )  # fmt: skip
    ctx.close()


def review(made, *variants: int, **options):
    """The review of these variants (all of the spot's when none are named), by id."""
    chosen = variants or None
    result = review_spot(made.ctx, made.engine, made.business, made.spot, variant_ids=chosen,
                         **options)  # fmt: skip
    return {v.id: v for v in result.variants}


@contextmanager
def frame_replaced(made, variant_id: int, image: Image.Image | None = None, asset_id=None):
    """The variant's key frame replaced by another picture (or stored asset), as a newer frame
    render; the original is put back (as the newest) afterwards."""
    with made.ctx.tenant(made.business) as tenant:
        original = tenant.variants.frames([variant_id])[variant_id]
        if asset_id is None:
            asset_id = tenant.assets.add(png(image), "replaced.png").id
        tenant.variants.add_render(variant_id, tier=RenderTier.FRAME, asset_id=asset_id)
    try:
        yield
    finally:
        with made.ctx.tenant(made.business) as tenant:
            tenant.variants.add_render(variant_id, tier=RenderTier.FRAME, asset_id=original)


def stored_frame(made, variant_id: int):
    with made.ctx.tenant(made.business) as tenant:
        return tenant.assets.path(tenant.variants.frames([variant_id])[variant_id])


def test_every_variant_is_scored_by_every_check(made):
    reviewed = review(made)
    assert list(reviewed) == [made.base, made.miami, made.denver]
    for variant in reviewed.values():
        assert list(variant.checks) == list(CHECKS)
        assert variant.passed, {n: c.why for n, c in variant.checks.items() if not c.passed}
        for name in ("legibility", "product_fidelity", "composition", "distinct", "integrity"):
            check = variant.checks[name]
            assert check.passed is True and 0.0 < check.score <= 1.0 and check.why
        # Nothing rendered yet, and no classifier on the engine's face: judged by neither.
        assert variant.checks["qc"].passed is None
        assert variant.checks["qc"].why.startswith("Not rendered yet")
        assert variant.checks["background_match"].passed is None
    miami = reviewed[made.miami]
    assert (miami.geography, miami.audience) == ("Miami", "Young runners")
    assert miami.checks["product_fidelity"].score == 1.0  # the product exactly as photographed
    assert "read back as written" in miami.checks["legibility"].why
    assert miami.checks["background_match"].why.startswith("Not available")
    assert reviewed[made.base].geography == "as briefed"


class Classifier:
    """The scene classifier mini-sd's model card uses (softmax regression on procedural scenes,
    fitted here in seconds), naming landscapes in the library's words."""

    def __init__(self):
        self.model = SceneClassifier.fit(per_combination=5)

    def landscapes(self, images):
        return [ARCHETYPES[label] for label in self.model.predict(images)]


class EverythingIsADesert:
    def landscapes(self, images):
        return ["desert dunes"] * len(images)


def test_background_match_with_the_project_s_scene_classifier(made):
    """The check's method, with a classifier handed in (the engine's face has none yet)."""
    only = {"checks": ["background_match"]}
    reviewed = review(made, made.miami, made.denver, scene_judge=Classifier(), **only)
    assert "shows beach and ocean" in reviewed[made.miami].checks["background_match"].why
    assert reviewed[made.denver].checks["background_match"].passed is True
    denver = review(made, made.denver, scene_judge=EverythingIsADesert(), **only)[made.denver]
    assert denver.checks["background_match"].passed is False and not denver.passed
    assert "not the snowy peaks of Denver" in denver.checks["background_match"].why


def test_a_tampered_file_fails_integrity_with_its_reason(made):
    only = {"checks": ["integrity"]}
    path = stored_frame(made, made.denver)
    kept = path.read_bytes()
    try:
        path.write_bytes(kept + b"edited")  # still a picture, no longer what was stored
        denver = review(made, made.denver, **only)[made.denver]
        integrity = denver.checks["integrity"]
        assert integrity.passed is False and integrity.score < 1
        assert "key frame" in integrity.why and "changed since it was stored" in integrity.why
        path.unlink()
        gone = review(made, made.denver, **only)[made.denver]
        assert "is missing from the store" in gone.checks["integrity"].why
    finally:
        path.write_bytes(kept)
    assert review(made, made.denver, **only)[made.denver].checks["integrity"].passed is True


def test_a_frame_without_its_product_fails_fidelity(made):
    with made.ctx.tenant(made.business) as tenant:
        variant = tenant.variants.get(made.miami)
        params = GenerationParams.of(variant)
        made_on = tenant.generations.get(
            generation_key(stored_request(params), params.model_revision)
        )
        background = Image.open(tenant.assets.path(made_on.asset_id))
        photo = tenant.campaigns.spot(made.spot).product_assets[0].id
    product = cutout(made.ctx, made.engine, made.business, photo)
    size = (1280, 720)
    # The same product on the same background, placed so that the frame's edge cuts it off.
    wide = composite(background, product, (size[0] + 700, size[1]), Placement(centre_x=0.36))
    cut_off = wide.image.crop((700, 0, 700 + size[0], size[1]))
    only = {"checks": ["product_fidelity", "composition"]}
    assert 0 < np.asarray(wide.interior)[:, 700:].sum() < np.asarray(wide.interior).sum()
    for frame, what in ((cut_off, "cut off"), (Image.new("RGB", size, (90, 90, 90)), "blank")):
        with frame_replaced(made, made.miami, frame):
            miami = review(made, made.miami, **only)[made.miami]
        fidelity = miami.checks["product_fidelity"]
        assert fidelity.passed is False and fidelity.score < 0.5, what
        assert "not as photographed" in fidelity.why or "moved, cut off" in fidelity.why
        assert not miami.passed
    with frame_replaced(made, made.miami, Image.new("RGB", (640, 360))):
        small = review(made, made.miami, **only)[made.miami]
    assert small.checks["composition"].passed is False
    assert "not the 1280x720" in small.checks["composition"].why
    assert review(made, made.miami, **only)[made.miami].passed  # its own frame back: fine again


def test_two_places_that_look_alike_fail_distinct(made):
    with made.ctx.tenant(made.business) as tenant:
        miami_frame = tenant.variants.frames([made.miami])[made.miami]
    only = {"checks": ["distinct"]}
    with frame_replaced(made, made.denver, asset_id=miami_frame):  # Denver shows Miami's beach
        reviewed = review(made, **only)
    for one, other in ((made.denver, made.miami), (made.miami, made.denver)):
        check = reviewed[one].checks["distinct"]
        assert check.passed is False and check.score <= 0.5
        assert f"looks like variant #{other}" in check.why
    assert reviewed[made.base].checks["distinct"].passed is True
    assert review(made, made.denver, **only)[made.denver].checks["distinct"].passed is True


def test_spotforge_review_prints_the_documented_json(made):
    env = spotforge_env(made.settings.data_dir)
    args = [str(SPOTFORGE), "review", "-b", str(made.business), "--spot", str(made.spot)]
    done = subprocess.run([*args, "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert list(printed) == ["variants"]
    assert [v["id"] for v in printed["variants"]] == [made.base, made.miami, made.denver]
    for variant in printed["variants"]:
        assert list(variant) == ["id", "geography", "audience", "passed", "checks"]
        assert variant["passed"] is True and list(variant["checks"]) == list(CHECKS)
        for check in variant["checks"].values():
            assert list(check) == ["passed", "score", "why"]
    assert printed["variants"][2]["geography"] == "Denver"
    assert "s a variant" in done.stderr

    # The table, and exit status 1 once a variant fails.
    runner = CliRunner()
    path = stored_frame(made, made.denver)
    kept = path.read_bytes()
    try:
        path.write_bytes(kept + b"edited")
        table = runner.invoke(cli, args[1:], env=env)
    finally:
        path.write_bytes(kept)
    assert table.exit_code == 1, table.output
    assert "legibility" in table.stdout and "integrity" in table.stdout
    assert f"#{made.denver} Denver · Young runners, integrity:" in table.stdout


def test_another_business_s_spot_is_not_found(made):
    with pytest.raises(NotFound):
        review_spot(made.ctx, made.engine, made.other, made.spot)
    env = spotforge_env(made.settings.data_dir)
    refused = CliRunner().invoke(
        cli, ["review", "-b", str(made.other), "--spot", str(made.spot), "--json"], env=env
    )
    assert refused.exit_code == 1
    assert refused.stderr == f"error: spot {made.spot} not found\n" and refused.stdout == ""


def test_a_render_that_misses_its_spec_fails_qc(made, mp4_bytes, tmp_path):
    """A real QC report (of a 1 s, 160x90 clip checked as a preview), stored with a render."""
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(mp4_bytes)
    report = quality.check(clip, quality.PREVIEW)
    with made.ctx.tenant(made.business) as tenant:
        asset = tenant.assets.add(mp4_bytes, "variant-preview.mp4")
        tenant.variants.add_render(made.miami, tier=RenderTier.PREVIEW, asset_id=asset.id,
                                   qc_report=report.to_dict())  # fmt: skip
    miami = review(made, made.miami, checks=["qc"])[made.miami]
    check = miami.checks["qc"]
    assert check.passed is False and 0 <= check.score < 1 and not miami.passed
    assert "The preview's frame size is 160x90 (expected 640x360)" in check.why
    assert np.isclose(check.score, 1 - len(report.failures()) / len(report.rules))
