"""An order bought in shapes for destinations, QC'd against each, signed and delivered as one
zip; the files reached only by their business.

`test_a_bought_order_in_three_shapes_arrives_as_one_verified_zip` is issue 18's done-when: a
2-variant order in 16:9, 9:16 and 1:1 rendered by the app's worker (6 finals), opened as the
customer would, every master read by a fresh C2PA reader and run through every destination's
QC. The other tests keep to fake finals and a 1 s clip."""

from __future__ import annotations

import json
import subprocess
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import c2pa
import pytest

from app.config import Settings
from app.services import (
    AppContext,
    UserError,
    accounts,
    bulk,
    delivery,
    library,
    orders,
    renders,
)
from app.services import provenance as signing
from app.services.matrix import plan_matrix
from app.services.worker import Worker
from app.ui.studio import Studio
from engine import Engine
from storage import JobQueue
from storage.errors import NotFound
from storage.models import VariantStatus
from templates import provenance, qc
from templates.qc_specs import SPECS
from tests.app.conftest import SPOTFORGE, spotforge_env
from tests.app.test_api import PASSWORD
from tests.app.test_bulk import cup, ids, spot_with_photo
from tests.samples import png_bytes
from tests.storage.test_crud import PARAMS

pytestmark = pytest.mark.long  # minutes of work: started first (tests/conftest.py)

SHAPES = ("16:9", "9:16", "1:1")
# Every destination the three shapes serve between them; Roku is one more check on the 16:9
# master beside the broadcast spec it is made by.
BOUGHT = ("broadcast", "roku", "social-vertical", "social-square")


def _variants(ctx, business: int, *, count: int, place: str, people: str) -> list[int]:
    """Ready variants of one 15 s spot, all for the same place and audience."""
    geography = ids(library.geographies(ctx, business), place)[0]
    audience = ids(library.audiences(ctx, business), people)[0]
    with ctx.tenant(business) as tenant:
        campaign = tenant.campaigns.create("Spring <Sale>")
        spot = tenant.campaigns.create_spot(
            campaign.id, template_id="product-hero", template_version="1", duration_s=15
        )
        made = [
            tenant.variants.create(spot.id, PARAMS, geography_id=geography, audience_id=audience)
            for _ in range(count)
        ]
        for v in made:
            tenant.variants.set_status(v.id, VariantStatus.READY)
        return [v.id for v in made]


def _fake_finals(ctx, business: int) -> None:
    """What a worker does with each waiting final, without the engine: a render that passed
    the check of its shape, then done."""
    queue = JobQueue(ctx.db)
    while (job := queue.lease("worker", kinds=(renders.KIND,))) is not None:
        variant_id, shape = job.payload["variant_id"], job.payload["shape"]
        with ctx.tenant(business) as tenant:
            asset = tenant.assets.add(png_bytes((variant_id, 9, 9)), f"final-{variant_id}.mp4")
            tenant.variants.add_render(
                variant_id, tier="final", asset_id=asset.id, shape=shape,
                qc_report={"passed": True},
            )  # fmt: skip
        queue.complete(job.id, "worker")
        orders.settle(ctx, business, variant_id)


def test_an_order_is_bought_only_for_destinations_its_shapes_serve(ctx, business_ids):
    business = business_ids[0]
    variant_ids = _variants(ctx, business, count=1, place="Miami", people="Families")
    for shapes, destinations, said in (
        (("16:9",), ("social-vertical",), "takes a 9:16 master, and this order has none"),
        (("1:1",), ("broadcast",), "takes a 16:9 master"),
        # A master no chosen destination takes would be sold with nothing to check it against.
        (("16:9", "9:16"), ("broadcast",), "No destination chosen takes a 9:16 master: add so"),
        (("4:3",), ("broadcast",), "There is no shape '4:3'"),
        (("16:9",), ("youtube",), "There is no destination 'youtube'"),
        (("16:9",), ("preview",), "There is no destination 'preview'"),
        ((), ("broadcast",), "Choose at least one shape"),
        (("16:9",), (), "Choose at least one destination"),
    ):
        with pytest.raises(UserError, match=said):
            orders.quote(ctx, business, variant_ids, shapes=shapes, destinations=destinations)
    with ctx.tenant(business) as tenant:
        assert tenant.orders.list() == []  # nothing was made of a refused quote
    chosen = ("social-square", "broadcast", "social-vertical")
    order = orders.quote(ctx, business, variant_ids, shapes=SHAPES, destinations=chosen)
    assert order.shapes == SHAPES and order.destinations == chosen
    assert order.quote_cents == 4900 + 2 * orders.EXTRA_SHAPE_CENTS  # one spot, two more shapes
    assert orders.price_cents({1: (15, 2)}, shapes=3) == 4900 + 900 + 2 * 2 * 1500


def _spotforge(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SPOTFORGE), *args], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def test_the_command_line_quotes_shapes_and_destinations(ctx, business_ids):
    business = business_ids[0]
    [variant] = _variants(ctx, business, count=1, place="Miami", people="Retirees")
    env = spotforge_env(ctx.settings.data_dir, ctx.settings.database_url)
    quote = ["order", "quote", "-b", str(business), "-v", str(variant)]
    refused = _spotforge(env, *quote, "-d", "social-vertical")
    assert refused.returncode == 1
    assert "takes a 9:16 master, and this order has none" in refused.stderr
    quoted = _spotforge(env, *quote, "--shape", "16:9", "--shape", "9:16", "-d", "broadcast",
                        "-d", "social-vertical")  # fmt: skip
    assert quoted.returncode == 0, quoted.stderr
    assert "quoted\tUSD 64.00\t16:9, 9:16\tbroadcast, social-vertical" in quoted.stdout
    order = int(quoted.stdout.split()[1])
    early = _spotforge(env, "order", "package", str(order), "-b", str(business), "-o", "x.zip")
    assert early.returncode == 1 and "has no delivered files" in early.stderr


def test_a_delivered_order_names_its_files_and_another_business_reaches_none(
    ctx, business_ids, tmp_path
):
    business, rival = business_ids
    variant_ids = _variants(
        ctx, business, count=2, place="San Francisco Bay Area", people="Retirees"
    )  # the same words: told apart by their order
    quoted = orders.quote(ctx, business, variant_ids, shapes=("16:9", "9:16"),
                          destinations=("broadcast", "social-vertical"))  # fmt: skip
    assert orders.approve(ctx, business, quoted.id).status == "rendering"
    _fake_finals(ctx, business)
    order = orders.status(ctx, business, quoted.id)
    assert order.status == "delivered" and order.package_asset_id is not None
    assert [(d.variant_id, d.shape, d.verdicts) for d in order.deliveries] == [
        (v, shape, ((dest, True),))
        for v in variant_ids
        for shape, dest in (("16:9", "broadcast"), ("9:16", "social-vertical"))
    ]
    stem = "trailhead-running-spring-sale-san-francisco-bay-area-retirees"
    names = [n.name for n in delivery.names(ctx, business, order)]
    assert names == [
        f"{stem}-16x9-15s.mp4",
        f"{stem}-9x16-15s.mp4",
        f"{stem}-16x9-15s-2.mp4",
        f"{stem}-9x16-15s-2.mp4",
    ]
    package = delivery.package_path(ctx, business, order.id)
    assert package.filename == f"trailhead-running-order-{order.id}.zip"
    with zipfile.ZipFile(package.path) as archive:
        listed = archive.namelist()
        sheet = archive.read("spec-sheet.html").decode()
    assert listed == [
        *(part for n in names for part in (n, n.replace(".mp4", ".qc.json"))),
        "spec-sheet.html",
    ]
    assert "This spot contains AI-generated imagery." in sheet
    master = delivery.download(ctx, business, order.id, names[3])
    assert master.filename == names[3] and master.media_type == "video/mp4"
    # Settling again builds nothing more: the package is stored once.
    with ctx.tenant(business) as tenant:
        zips = [a.id for a in tenant.assets.list() if a.media_type == "application/zip"]
    orders.settle(ctx, business, variant_ids[0])
    with ctx.tenant(business) as tenant:
        assert [a.id for a in tenant.assets.list() if a.media_type == "application/zip"] == zips
    assert zips == [order.package_asset_id]

    # The command line writes the same package; another business's order is not found.
    env = spotforge_env(ctx.settings.data_dir, ctx.settings.database_url)
    written = _spotforge(env, "order", "package", str(order.id), "-b", str(business),
                         "-o", str(tmp_path))  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert (tmp_path / package.filename).read_bytes() == package.path.read_bytes()
    theirs = _spotforge(env, "order", "package", str(order.id), "-b", str(rival), "-o", "x.zip")
    assert theirs.returncode == 1 and "not found" in theirs.stderr

    # The other business: A's order by its id, A's files by their names, read as missing.
    for name in (package.filename, names[0]):
        with pytest.raises(NotFound):
            delivery.download(ctx, rival, order.id, name)
    with pytest.raises(UserError, match="no file named"):
        delivery.download(ctx, business, order.id, "spotforge.db")
    with pytest.raises(NotFound):
        orders.status(ctx, rival, order.id)
    with ctx.tenant(rival) as tenant:
        assert [a for a in tenant.assets.list() if a.media_type == "application/zip"] == []


def test_the_manifest_names_the_model_the_recipe_and_the_lineage(ctx, business_ids, tmp_path,
                                                                mp4_bytes):  # fmt: skip
    business = business_ids[0]
    parent, child = _variants(ctx, business, count=2, place="Denver", people="Students")
    with ctx.tenant(business) as tenant:
        tenant.variants.get(child).parent_id = parent
        preview = tenant.assets.add(mp4_bytes, "preview.mp4")
        shown = tenant.variants.add_render(child, tier="preview", asset_id=preview.id)
        shown_id, shown_sha = shown.id, preview.sha256
    master = tmp_path / "master.mp4"
    master.write_bytes(mp4_bytes)
    signing.sign_final(ctx, business, child, master, shape="9:16")

    with open(master, "rb") as stream, c2pa.Reader("video/mp4", stream) as reader:  # afresh
        assert reader.get_validation_state() in ("Valid", "Trusted")
    seen = signing.verify(ctx.settings, master)
    assert seen.matches and seen.trusted  # the development CA is this app's own
    made = seen.manifest["assertions"]
    actions = next(a for a in made if a["label"] == "c2pa.actions.v2")["data"]["actions"]
    assert actions[0]["digitalSourceType"] == provenance.SOURCE_TYPE
    assert provenance.SOURCE_TYPE.endswith("/compositeWithTrainedAlgorithmicMedia")
    assert provenance.assertion(seen, provenance.LINEAGE) == {
        "variant": child,
        "parent": parent,
        "spot": provenance.assertion(seen, provenance.LINEAGE)["spot"],
        "shape": "9:16",
        "approved_preview": {"render": shown_id, "sha256": shown_sha},
    }
    model = provenance.assertion(seen, provenance.MODEL)
    assert (model["preset"], model["revision"]) == (PARAMS.model_id, PARAMS.model_revision)
    assert model["licence"] and model["parameters"]["seed"] == PARAMS.seed
    recipe = provenance.assertion(seen, provenance.RECIPE)
    assert recipe == {"recipe": "exact", "template": "product-hero", "template_version": "1"}
    # The key is under the data dir, in a folder no route serves.
    key = signing.credentials(ctx.settings).key
    assert key.parent == ctx.settings.resolved_signing_dir
    assert ctx.settings.resolved_web_dir not in key.parents
    assert ctx.settings.resolved_asset_dir not in key.parents


def test_spotforge_verify_says_whether_a_file_matches_its_manifest(ctx, business_ids, tmp_path,
                                                                  mp4_bytes):  # fmt: skip
    business = business_ids[0]
    [variant] = _variants(ctx, business, count=1, place="Seattle", people="Families")
    master = tmp_path / "master.mp4"
    master.write_bytes(mp4_bytes)
    signing.sign_final(ctx, business, variant, master)
    env = spotforge_env(ctx.settings.data_dir, ctx.settings.database_url)

    def verify(path):
        return _spotforge(env, "verify", str(path))

    good = verify(master)
    assert good.returncode == 0, good.stderr
    assert good.stdout.splitlines()[-1].startswith("matches:")
    printed = json.loads(good.stdout[: good.stdout.rindex("}") + 1])
    assert printed["matches"] and printed["manifest"]["title"] == "master.mp4"
    data = bytearray(master.read_bytes())
    data[data.index(b"mdat") + 100] ^= 0x01  # one bit of the picture
    master.write_bytes(bytes(data))
    bad = verify(master)
    assert bad.returncode == 1
    assert "does not match" in bad.stdout and "bmffHash.mismatch" in bad.stdout


# The done-when ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def delivered(tmp_path_factory):
    """A bought order of one variant in three shapes, delivered by the app's worker: (ctx,
    business, order). Module-wide: its 3 finals are the costliest thing here (the names of
    several variants in one order are test_a_delivered_order_names_its_files...'s)."""
    root = tmp_path_factory.mktemp("delivered")
    ctx = AppContext.open(Settings(data_dir=root / "var", max_asset_bytes=200_000_000))
    accounts.sign_up(ctx, "Harbor Coffee", "owner@harbor.test", PASSWORD)
    token = accounts.sign_in(ctx, "owner@harbor.test", PASSWORD)
    business = accounts.account_for(ctx, token).business_id
    with Engine(model_dir=root / "models", device="cpu") as engine:
        spot = spot_with_photo(ctx, business, cup())
        geographies = ids(library.geographies(ctx, business), "San Francisco Bay Area")
        audiences = ids(library.audiences(ctx, business), "Young runners")
        plan = plan_matrix(ctx, engine, business, [spot], geographies, audiences,
                           preset="mini-sd")  # fmt: skip
        run = bulk.start(ctx, engine, business, plan)
        assert bulk.work(ctx, engine, business, run, lease_s=5).ready == 1
        with ctx.tenant(business) as tenant:
            variant_ids = [v.id for v in tenant.variants.of_run(run)]
        quoted = orders.quote(ctx, business, variant_ids, shapes=SHAPES, destinations=BOUGHT)
        orders.approve(ctx, business, quoted.id)
        worker = Worker(ctx, engine).start()  # the app's own, as `spotforge serve` runs it
        try:
            deadline = time.monotonic() + 1500
            while (order := orders.status(ctx, business, quoted.id)).status == "rendering":
                assert time.monotonic() < deadline, order
                time.sleep(2)
        finally:
            worker.stop(timeout=300)
    yield ctx, business, order, SimpleNamespace(headers={"authorization": f"Bearer {token}"},
                                                cookies={})  # fmt: skip
    ctx.close()


def test_a_bought_order_in_three_shapes_arrives_as_one_verified_zip(delivered, tmp_path):
    ctx, business, order, _ = delivered
    assert order.status == "delivered", order.deliveries
    assert len(order.deliveries) == 3 and all(d.qc_passed for d in order.deliveries)
    package = delivery.package_path(ctx, business, order.id)
    with zipfile.ZipFile(package.path) as archive:
        archive.extractall(tmp_path)
        listed = archive.namelist()
    stem = "harbor-coffee-espresso-week-san-francisco-bay-area"
    masters = [n for n in listed if n.endswith(".mp4")]
    assert sorted(masters) == sorted(
        f"{stem}-young-runners-{shape}-15s.mp4" for shape in ("16x9", "9x16", "1x1")
    )
    assert len(listed) == 2 * len(masters) + 1 and "spec-sheet.html" in listed
    for name in masters:
        path = tmp_path / name
        with open(path, "rb") as stream, c2pa.Reader("video/mp4", stream) as reader:  # fresh
            assert reader.get_validation_state() == "Valid"  # intact; its CA is ours alone
            manifest = json.loads(reader.json())
        active = manifest["manifests"][manifest["active_manifest"]]
        labels = {a["label"] for a in active["assertions"]}
        assert {provenance.LINEAGE, provenance.MODEL, provenance.RECIPE} <= labels
        shape = name.rsplit("-", 2)[1].replace("x", ":")
        applies = [d for d in BOUGHT if orders.applies(d, shape)]
        assert applies  # every master is bought for at least one destination
        report = json.loads((tmp_path / name.replace(".mp4", ".qc.json")).read_text())
        assert set(report["destinations"]) == set(applies) and report["passed"]
        for destination in applies:  # run afresh, on the file as delivered
            checked = qc.check(path, SPECS[destination])
            assert checked.passed, (name, destination, checked.failures())
    sheet = (tmp_path / "spec-sheet.html").read_text()
    assert "This spot contains AI-generated imagery." in sheet
    assert sheet.count('src="data:image/png;base64,') == 3
    for shown in ("LKFS", "dBTP", "Mbps", "1920x1080", "1080x1920", "1080x1080", "Roku: passes"):
        assert shown in sheet


def test_the_page_offers_the_zip_and_each_master_under_its_name(delivered):
    ctx, business, order, request = delivered
    studio = Studio(ctx, None)  # what the page's "Check order" answers
    text, files, links = studio.order_status(order.id, request)
    assert "delivered" in text and "Shapes: 16:9, 9:16, 1:1" in text
    served = [Path(f).name for f in files]
    names = [n.name for n in delivery.names(ctx, business, order)]
    assert served == [
        f"harbor-coffee-order-{order.id}.zip",
        *(part for n in names for part in (n, n.replace(".mp4", ".qc.json"))),
    ]
    assert all(ctx.responses.may_serve(studio.who(request), f) for f in files)  # this session's
    assert links.startswith("**This spot contains AI-generated imagery.**")
    assert f"(/download/order/{order.id}/harbor-coffee-order-{order.id}.zip)" in links
    for name in names:
        assert f"[{name}](/download/order/{order.id}/{name})" in links
    assert "passes Roku" in links and "passes social square (1:1)" in links
    package = delivery.package_path(ctx, business, order.id)
    assert Path(files[0]).read_bytes() == package.path.read_bytes()
