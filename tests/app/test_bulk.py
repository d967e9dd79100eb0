"""Bulk variant runs: every variant made once with its lineage, backgrounds and cut-outs reused,
failures recorded without stopping the rest, and a killed `spotforge bulk` process finished by
starting it again."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import time

import numpy as np
import pytest
from PIL import Image
from skimage import data

from app.services import AppContext, bulk, library, variants
from app.services.backgrounds import generation_key, stored_request
from app.services.demo import BRIEF
from app.services.matrix import plan_matrix
from engine import Engine, Priority
from storage.models import VariantStatus
from storage.repos.variants import GenerationParams
from tests.app.conftest import SPOTFORGE, spotforge_env


def png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def spot_with_photo(ctx, business: int, photo: Image.Image) -> int:
    with ctx.tenant(business) as tenant:
        asset = tenant.assets.add(png(photo), "product.png")
        campaign = tenant.campaigns.create("Espresso week")
        return tenant.campaigns.create_spot(
            campaign.id,
            template_id="product-hero",
            template_version="1",
            duration_s=15,
            copy=BRIEF,
            product_asset_ids=[asset.id],
        ).id


def cup() -> Image.Image:
    return Image.fromarray(data.coffee()).resize((300, 200))


def ids(views, *names):
    by_name = {v.name: v.id for v in views}
    return [by_name[n] for n in names]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


def test_a_run_makes_each_variant_once_and_reuses_backgrounds(ctx, business_ids, engine):
    business = business_ids[0]
    good = spot_with_photo(ctx, business, cup())
    # A photo with nothing in it: its variants fail, with the reason, and the others go on.
    empty = spot_with_photo(ctx, business, Image.new("RGBA", (64, 64), (0, 0, 0, 0)))
    geographies = ids(library.geographies(ctx, business), "Miami", "Denver")
    audiences = ids(library.audiences(ctx, business), "Young runners", "Families")
    plan = plan_matrix(
        ctx, engine, business, [good, empty], geographies, audiences, preset="mini-sd", seed=2
    )
    run = bulk.start(ctx, engine, business, plan)
    report = bulk.work(ctx, engine, business, run, lease_s=5)
    assert (report.variants, report.ready, report.failed, report.made) == (8, 4, 4, 4)
    assert list(report.workers.values()) == [4]  # one worker (this process) made every frame
    # 2 geographies x 1 light, plus the spots' own setting (shared by both spots' bases).
    assert report.backgrounds.asked - report.backgrounds.reused == 3
    assert report.cutouts.asked - report.cutouts.reused == 2  # one cut-out per photo
    with ctx.tenant(business) as tenant:
        made = [v for v in tenant.variants.of_run(report.run) if v.spot_id == good]
        base = tenant.variants.base_of(good)
        assert base.status is VariantStatus.READY and base.prompt.startswith("a sunny main street")
        assert (base.geography_id, base.audience_id, base.parent_id) == (None, None, None)
        assert [v.id for v in tenant.variants.descendants(base.id)] == [v.id for v in made]
        batch_sizes = set()
        for variant in made:
            assert [a.id for a in tenant.variants.ancestors(variant.id)] == [base.id]
            [render] = tenant.variants.renders(variant.id)
            frame = Image.open(tenant.assets.path(render.asset_id))
            assert frame.size == (1280, 720)
            assert variant.prompt.startswith(("beach and ocean", "snowy peaks"))
            # Made at bulk priority, several in one engine batch: a preview or a final someone
            # waits on goes first.
            key = generation_key(
                stored_request(GenerationParams.of(variant)), variant.model_revision
            )
            made_with = tenant.generations.get(key).params
            assert made_with["priority"] == int(Priority.BULK)
            batch_sizes.add(made_with["batch_size"])
            # The copy it was made with is stored with it: the owner's own words (none chosen
            # for an audience), in the audience's accent colour (runners: orange).
            copy = variant.extra_params["copy"]
            assert (copy["headline"], copy["cta_text"]) == (BRIEF["headline"], BRIEF["cta_text"])
            runners = variant.audience_id == audiences[0]
            assert (copy["brand"]["colors"][1] == "#FF5A1F") == runners
        assert max(batch_sizes) == 2  # backgrounds asked together ran as one engine batch
        for variant in tenant.variants.list(empty):
            assert variant.status is VariantStatus.FAILED
            assert "no product was found" in variant.last_error

    # Any frame is made again, bit for bit, from the variant's stored parameters alone.
    with ctx.tenant(business) as tenant:
        variant = made[-1]
        stored = np.asarray(
            Image.open(tenant.assets.path(tenant.variants.renders(variant.id)[0].asset_id))
        )
    again_frame = np.asarray(bulk.rerender_frame(ctx, engine, business, variant.id))
    assert np.array_equal(stored, again_frame)

    # The gallery shows each variant's spot at a glance, its scenes as they air: two
    # audiences in one place share one key frame, but not their accent colour (the offer card).
    cards = {(c.geography, c.audience): c for c in variants.cards(ctx, business, good)}
    runners, families = cards["Miami", "Young runners"], cards["Miami", "Families"]
    frames = [np.asarray(Image.open(c.frame), dtype=float) for c in (runners, families)]
    assert np.array_equal(*frames)
    shown = [Image.open(c.picture) for c in (runners, families)]
    assert shown[0].format == "JPEG" and shown[0].size == (641, 361)
    sheets = [np.asarray(s.convert("RGB"), dtype=float) for s in shown]
    offer = np.s_[181:, :320]  # product-hero's third scene, the offer on the brand card
    yellow = [np.sum(np.linalg.norm(s[offer] - (0xF4, 0xB4, 0x00), axis=2) < 40) for s in sheets]
    assert yellow[0] == 0 and yellow[1] > 300  # the families' accent
    establishing = np.s_[:180, :320]  # the place, the headline over it, in both
    assert np.abs(sheets[0][establishing] - sheets[1][establishing]).mean() < 2

    # Opened again, the spot's places and audiences are those of its newest run (in the
    # library's order); a spot never personalized has none.
    assert variants.last_choice(ctx, business, good) == (
        [g.name for g in library.geographies(ctx, business) if g.id in geographies],
        [a.name for a in library.audiences(ctx, business) if a.id in audiences],
    )
    assert variants.last_choice(ctx, business, spot_with_photo(ctx, business, cup())) == ([], [])

    # Starting the same run again adds nothing and makes nothing.
    run = bulk.start(ctx, engine, business, plan)
    again = bulk.work(ctx, engine, business, run, lease_s=5)
    assert (again.variants, again.ready, again.made, again.backgrounds.asked) == (8, 4, 0, 0)


def test_a_spot_set_at_sunset_airs_at_sunset_for_every_audience(ctx, business_ids, engine):
    """The light the owner wrote in the setting is every variant's; an audience's own light
    (Families by day, Night owls at night) is for spots whose setting says none, or says day
    (as the brief's suggested setting does)."""
    business = business_ids[1]
    places = ids(library.geographies(ctx, business), "Manhattan")
    people = ids(library.audiences(ctx, business), "Families", "Night owls")
    sunset = spot_with_photo(ctx, business, cup())
    with ctx.tenant(business) as tenant:
        tenant.campaigns.spot(sunset).copy = {**BRIEF, "setting": "Mission Peak at sunset"}
    plain = spot_with_photo(ctx, business, cup())
    with ctx.tenant(business) as tenant:
        tenant.campaigns.spot(plain).copy = {**BRIEF, "setting": "a street during the day"}
    for spot, lights in ((sunset, {"at golden hour"}), (plain, {"during the day", "at night"})):
        plan = plan_matrix(ctx, engine, business, [spot], places, people, preset="mini-sd")
        assert plan.backgrounds == len(lights)
        run = bulk.start(ctx, engine, business, plan)
        with ctx.tenant(business) as tenant:
            variants = [v for v in tenant.variants.list(spot) if v.extra_params.get("run") == run]
            prompts = {stored_request(GenerationParams.of(v)).prompt for v in variants}
        assert len(variants) == 2
        assert {next(light for light in lights if light in p) for p in prompts} == lights


@pytest.mark.backends
def test_a_killed_bulk_run_finishes_when_started_again(tmp_path, settings):
    ctx = AppContext.open(settings)
    try:
        from app.services import businesses

        business = businesses.create(ctx, "Harbor Coffee").id
        spot = spot_with_photo(ctx, business, cup())
    finally:
        ctx.close()
    args = [str(SPOTFORGE), "bulk", "-b", str(business), "--spot", str(spot)]
    for name in ("Miami", "Denver", "Seattle", "Chicago"):
        args += ["-g", name]
    for name in ("Young runners", "Retirees", "Night owls"):
        args += ["-a", name]
    env = spotforge_env(settings.data_dir, settings.database_url)

    first = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_ready(settings, business, spot, at_least=3, proc=first)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    ready = ready_count(settings, business, spot)  # what the killed process left
    assert 3 <= ready < 12

    second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout.strip().splitlines()[-1])
    assert (report["variants"], report["ready"], report["failed"]) == (12, 12, 0)
    assert report["made_now"] == 12 - ready  # the rerun made only what the kill left
    ctx = AppContext.open(settings)
    try:
        with ctx.tenant(business) as tenant:
            variants = tenant.variants.of_run(report["run"])
            assert len(variants) == 12  # none duplicated
            assert len(tenant.variants.list(spot)) == 13  # and one base, the parent of them all
            keys = {v.extra_params["matrix_key"] for v in variants}
            assert len(keys) == 12
            for variant in variants:
                assert len(tenant.variants.renders(variant.id)) == 1  # none made twice
    finally:
        ctx.close()


def ready_count(settings, business, spot) -> int:
    ctx = AppContext.open(settings)
    try:
        with ctx.tenant(business) as tenant:
            made = [v for v in tenant.variants.list(spot) if v.run]
            return sum(v.status is VariantStatus.READY for v in made)
    finally:
        ctx.close()


def wait_for_ready(settings, business, spot, *, at_least: int, proc) -> None:
    """Until the run has `at_least` variants ready, read every 50 ms on one connection: workers
    make several frames a second, so a slow poll would see the run almost done."""
    ctx = AppContext.open(settings)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            with ctx.tenant(business) as tenant:
                made = [v for v in tenant.variants.list(spot) if v.run]
                if sum(v.status is VariantStatus.READY for v in made) >= at_least:
                    return
            time.sleep(0.05)
        raise AssertionError("the bulk run made too few variants in time")
    finally:
        ctx.close()
