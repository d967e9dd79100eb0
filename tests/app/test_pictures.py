"""Your pictures: a business's own photos and clips in its library, chosen as where its spot, a
scene or a place is set; rendered from full resolution, cropped and graded, the same every
time; another business's picture is never reachable."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from gradio_client import handle_file
from PIL import Image
from skimage import data
from sqlalchemy import text

from app.config import Settings
from app.services import UserError, bulk, library, pictures, renders, spots
from app.services.matrix import plan_matrix
from app.services.pictures import Backdrop
from app.services.review import review_spot
from app.services.review.reading import _normalised, _ocr
from engine import Engine
from storage import NotFound
from templates.export import frames_at
from tests.app.conftest import SPOTFORGE, spotforge_env
from tests.app.test_api import client, sign_up
from tests.app.test_spots import COPY, SCRIPT
from tests.storage.rows import all_rows

PHONE = "555-0142"
GRADIENT = ((31, 58, 95), (242, 177, 52))  # the brand's two colours, left to right


@pytest.fixture
def settings(tmp_path, database_url) -> Settings:
    # A broadcast final is ~35 MB: the store takes it (the suite's default limit is 5 MB).
    return Settings(
        data_dir=tmp_path / "var", database_url=database_url, max_asset_bytes=60_000_000
    )


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


@pytest.fixture
def files(tmp_path):
    """A plain two-colour gradient PNG, a 2400x1600 shop photo (JPEG) and a product photo."""
    x = np.linspace(0, 1, 1920)[None, :, None]
    left, right = (np.array(c, float) for c in GRADIENT)
    gradient = np.broadcast_to(left * (1 - x) + right * x, (1080, 1920, 3)).astype(np.uint8)
    Image.fromarray(gradient).save(tmp_path / "gradient.png")
    shop = Image.fromarray(data.astronaut()).resize((2400, 2400), Image.Resampling.LANCZOS)
    shop.crop((0, 400, 2400, 2000)).save(tmp_path / "shopfront.jpg", quality=92)
    Image.fromarray(data.coffee()).save(tmp_path / "espresso.png")
    return tmp_path


def _clip(path, seconds: float, size: str = "320x180"):
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
         f"testsrc=size={size}:rate=30:duration={seconds}",
         "-c:v", "libx264", "-pix_fmt", "yuv420p", str(path)],
        check=True,
    )  # fmt: skip
    return path


def _generated(ctx) -> int:
    """Backgrounds generated and stored (each kept once in the generation cache)."""
    with ctx.db.session() as session:
        query = "SELECT count(*) FROM assets WHERE original_name LIKE 'background-%'"
        return session.execute(text(query)).scalar()


def _form(files, **changes) -> spots.BriefForm:
    fields = {
        "campaign_name": "Espresso week",
        "template_id": "product-hero",
        "copy": {**COPY, "phone": PHONE, "setting": "street with buildings during the day"},
        "colors": ["#1F3A5F", "#F2B134"],
        "product_photos": [files / "espresso.png"],
    }
    return spots.BriefForm(**{**fields, **changes})


def test_photos_and_clips_go_to_the_library_named_by_their_files(ctx, business_ids, files):
    business = business_ids[0]
    photo = pictures.upload(ctx, business, files / "shopfront.jpg")
    clip = pictures.upload(ctx, business, _clip(files / "walk-in.mp4", 2.0))
    assert [(p.name, p.kind) for p in pictures.pictures(ctx, business)] == [
        ("shopfront.jpg", "photo"), ("walk-in.mp4", "clip"),
    ]  # fmt: skip
    assert photo.caption == "shopfront.jpg · photo, 2400×1600"
    assert clip.caption == "walk-in.mp4 · clip, 2.0 s, 320×180"
    assert pictures.pictures(ctx, business_ids[1]) == []  # the other business has none
    # Only what the owner uploaded there: a spot's renders and product photos are not listed.
    spots.create_spot(ctx, business, _form(files))
    assert len(pictures.pictures(ctx, business)) == 2


def test_what_is_not_a_picture_is_refused_with_a_sentence_and_nothing_kept(
    ctx, business_ids, files, font_bytes
):
    business = business_ids[0]
    before = all_rows(ctx.db)
    (files / "brand.ttf").write_bytes(font_bytes)
    (files / "broken.mp4").write_bytes(_clip(files / "ok.mp4", 2.0).read_bytes()[:1500])
    _clip(files / "long.mp4", 61.0, "64x36")
    (files / "notes.txt").write_text("not a picture at all")
    refusals = {
        "brand.ttf": "Upload a photo (JPEG, PNG or WebP) or a short clip (MP4 or MOV).",
        "broken.mp4": "This video cannot be read; export it again as MP4.",
        "long.mp4": "This clip is 61 s long; upload one of at most 60 s (a scene shows a few "
        "seconds of it).",
        "notes.txt": "This file type is not recognised; upload a PNG, JPEG or WebP image, an "
        "MP4, MOV or WebM video, WAV, MP3 or M4A audio, or a TTF or OTF font.",
    }
    for name, sentence in refusals.items():
        with pytest.raises(Exception) as refused:
            pictures.upload(ctx, business, files / name)
        assert str(refused.value) == sentence
    (files / "huge.png").write_bytes(b"\x89PNG" + bytes(61_000_000))
    with pytest.raises(Exception, match="too large"):
        pictures.upload(ctx, business, files / "huge.png")
    assert all_rows(ctx.db) == before


def test_a_business_cannot_set_anything_in_another_s_picture(ctx, business_ids, files, engine):
    """Business B sending A's picture id (in a brief, for a scene, for a place) is told it is
    not found, exactly as for an id nobody has; a render or product photo of its own is not
    one of its pictures either."""
    a, b = business_ids
    theirs = pictures.upload(ctx, a, files / "shopfront.jpg").asset_id
    with pytest.raises(NotFound) as refused:
        spots.create_spot(ctx, b, _form(files, background=Backdrop(theirs)))
    with pytest.raises(NotFound) as missing:
        spots.create_spot(ctx, b, _form(files, background=Backdrop(theirs + 999)))
    assert str(refused.value).replace(str(theirs), "#") == str(missing.value).replace(
        str(theirs + 999), "#"
    )
    assert "not found" in str(refused.value)
    view = spots.create_spot(ctx, b, _form(files))
    with pytest.raises(NotFound):
        spots.set_scene_picture(ctx, engine, b, view.id, 1, Backdrop(theirs))
    with pytest.raises(NotFound):
        library.set_geography_background(ctx, b, "Manhattan", Backdrop(theirs))
    with pytest.raises(NotFound):  # B's own product photo is not in its pictures
        spots.create_spot(ctx, b, _form(files, background=Backdrop(view.product_asset_ids[0])))
    assert library.geographies(ctx, b)[0].background is None


def test_a_picture_variant_renders_the_same_again_and_generates_nothing(
    ctx, business_ids, files, engine
):
    """The base records the picture and its focus; its preview made twice is the same file,
    and no background was generated or looked up for it. A place set in the owner's picture
    makes its variants' key frames from it, graded to each audience's light, and review calls
    its background match not applicable rather than failing it."""
    business = business_ids[0]
    shop = pictures.upload(ctx, business, files / "shopfront.jpg").asset_id
    view = spots.create_spot(ctx, business, _form(files, background=Backdrop(shop, (0.5, 0.0))))
    base = spots.base_variant(ctx, engine, business, view.id, preset="mini-sd", recipe="fast")
    with ctx.tenant(business) as tenant:
        extra = tenant.variants.get(base).extra_params
    assert extra["background"] == {"asset_id": shop, "focus": [0.5, 0.0]}
    first, again = (renders.render_variant(ctx, engine, business, base, "preview") for _ in "12")
    assert first.qc_passed, first.qc_report
    assert first.path.read_bytes() == again.path.read_bytes()
    assert _generated(ctx) == 0

    library.set_geography_background(ctx, business, "Manhattan", Backdrop(shop, (0.5, 1.0)))
    manhattan = next(g for g in library.geographies(ctx, business) if g.name == "Manhattan")
    assert manhattan.background == Backdrop(shop, (0.5, 1.0)) and not manhattan.builtin
    people = [a for a in library.audiences(ctx, business) if a.time_of_day in ("day", "night")]
    day = next(a for a in people if a.time_of_day == "day")
    night = next(a for a in people if a.time_of_day == "night")
    plan = plan_matrix(ctx, engine, business, [view.id], [manhattan.id], [day.id, night.id],
                       preset="mini-sd")  # fmt: skip
    run = bulk.start(ctx, engine, business, plan)
    report = bulk.work(ctx, engine, business, run)
    assert (report.ready, report.backgrounds.asked) == (2, 0)  # nothing asked of the engine
    with ctx.tenant(business) as tenant:
        made = tenant.variants.list(view.id)
        lit = {v.extra_params.get("light"): v for v in made if v.geography_id is not None}
        frames = tenant.variants.frames([v.id for v in lit.values()])
        stored = {k: np.asarray(Image.open(tenant.assets.path(frames[v.id])), float)
                  for k, v in lit.items()}  # fmt: skip
    assert set(lit) == {"day", "night"}
    assert stored["night"].mean() < 0.8 * stored["day"].mean()  # the same shop, at night
    again_frame = bulk.rerender_frame(ctx, engine, business, lit["night"].id)
    assert np.array_equal(np.asarray(again_frame, float), stored["night"])
    assert _generated(ctx) == 0
    reviewed = review_spot(ctx, engine, business, view.id, checks=["background_match"])
    verdicts = {v.id: v.checks["background_match"] for v in reviewed.variants}
    match = verdicts[lit["night"].id]
    assert match.passed is None and match.why.startswith("Not applicable: it is set in your own")


def test_a_spot_with_a_voice_over_the_owner_s_photo_and_a_gradient_passes_broadcast_qc(
    ctx, business_ids, files, engine, tmp_path
):
    """The issue's done-when: a brief with a voice-over, set in the owner's uploaded two-colour
    gradient (through `spotforge spot create`, as a script sends it), one scene set in the
    owner's shop photo; its broadcast final passes QC (no duplicated frame among its checks),
    the photo is there at full resolution, and its end card reads the business's name, web
    address and phone."""
    business = business_ids[0]
    brief = files / "brief.json"
    brief.write_text(json.dumps({
        **COPY, "phone": PHONE, "voiceover": SCRIPT,
        "background": {"file": "gradient.png", "focus": [0.5, 0.5]},
    }))  # fmt: skip
    made = subprocess.run(
        [str(SPOTFORGE), "spot", "create", "-b", str(business), "--campaign", "Own",
         "--brief", str(brief), "--photo", str(files / "espresso.png")],
        env={**spotforge_env(ctx.settings.data_dir, ctx.settings.database_url),
             "SPOTFORGE_MAX_ASSET_BYTES": str(ctx.settings.max_asset_bytes)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    spot_id = json.loads(made.stdout)["spot_id"]
    shop = pictures.upload(ctx, business, files / "shopfront.jpg").asset_id
    assert [p.name for p in pictures.pictures(ctx, business)] == ["gradient.png", "shopfront.jpg"]
    base = spots.set_scene_picture(ctx, engine, business, spot_id, 1, Backdrop(shop, (0.5, 0.3)))
    final = renders.render_variant(ctx, engine, business, base, "final")
    report = final.qc_report
    assert final.qc_passed, json.dumps(report)[:2000]
    rules = {r["name"]: r["passed"] for r in report["rules"]}
    assert rules["no duplicated frames"] is True
    scenes = spots.storyboard(ctx, engine, business, spot_id)
    opening, shop_scene, end = (scenes[0], scenes[1], scenes[-1])
    pictured = frames_at(final.path, [opening.start + 0.2, shop_scene.start + 1.5,
                                      end.start + end.duration - 0.3])  # fmt: skip
    pictured[1].save(tmp_path / "shop-scene-1080p.png")  # looked at, 1:1, while writing this
    sky = np.asarray(pictured[0], float)[60:120].mean(0)  # above the copy: the gradient
    blocks = sky.reshape(12, 160, 3).mean(1)  # its colour across the frame, in 12 steps
    assert (np.diff(blocks[:, 0]) > 5).all() and (np.diff(blocks[:, 2]) < 0).all()
    assert blocks[0, 2] > blocks[0, 0] + 30 and blocks[-1, 0] > blocks[-1, 2] + 100  # blue, gold
    assert np.asarray(pictured[1], float).std() > 40  # the photo, not a flat card
    read = _normalised(" ".join(_ocr()(np.asarray(pictured[2])).txts or ()))
    for wanted in ("Trailhead Running", COPY["cta_url"], PHONE):
        assert _normalised(wanted) in read, (wanted, read)
    assert end.copy["business"] == "Trailhead Running" and end.copy["phone"] == PHONE


def test_the_brief_s_background_is_checked_before_anything_is_stored(ctx, business_ids, files):
    business = business_ids[0]
    before = all_rows(ctx.db)
    for given, sentence in (
        ({"file": "a.png", "asset": 3}, 'names one picture: its "file" or its "asset"'),
        ({"asset": 1, "focus": [2, 0]}, "The focus point is [x, y], each from 0"),
        ({"asset": 1, "focus": "middle"}, "The focus point is one of: top left"),
        ({"where": "x"}, 'is like {"file": "shop.jpg", "focus": [0, 1]}'),
    ):
        with pytest.raises(UserError, match=re.escape(sentence)):
            spots.brief_form("x", "product-hero", {**COPY, "background": given}, [files])
    chosen = {"file": "notes.txt", "focus": "bottom left"}
    form = spots.brief_form("x", "product-hero", {**COPY, "background": chosen}, [files],
                            background_file=files / "notes.txt")  # fmt: skip
    assert form.background_focus == (0.0, 1.0)
    (files / "notes.txt").write_text("not a picture")
    with pytest.raises(Exception, match="not recognised"):
        spots.create_spot(ctx, business, _form(files, background_file=files / "notes.txt"))
    assert all_rows(ctx.db) == before


def test_an_owner_adds_a_picture_and_sets_the_brief_in_it_through_the_api(app_server, files):
    """The page's path, by gradio_client: add a photo in the Library, see it listed by its
    name, choose it as where the brief is set (kept in frame at the left), and the storyboard
    is drawn over it at once; a file that is not a picture gets its sentence."""
    with app_server() as url:
        api = client(url, sign_up(url, "Harbor Coffee", "owner@harbor.test"))
        assert api.predict(api_name="/pictures")[0] == []
        shown, where, _place, _scene, note = api.predict(
            handle_file(str(files / "gradient.png")), api_name="/add_picture"
        )
        assert note == "Added gradient.png to your pictures."
        assert [item["caption"] for item in shown] == ["gradient.png · photo, 1920×1080"]
        name, picture = where["choices"][-1]
        assert name == "gradient.png"
        (files / "notes.png").write_text("a text file named as a picture")
        with pytest.raises(Exception, match="This file type is not recognised"):
            api.predict(handle_file(str(files / "notes.png")), api_name="/add_picture")
        _spot, board, _scenes = api.predict(
            campaign_name="Set in my picture", template_id="product-hero",
            product_photos=[handle_file(str(files / "espresso.png"))],
            **{k: v for k, v in COPY.items() if k != "setting"},
            background=picture, focus="left", api_name="/create_spot",
        )  # fmt: skip
        opening = np.asarray(Image.open(board[0]["image"]).convert("RGB"), float)
        # Drawn over the gradient at once (no background to choose): its blue at the left.
        assert np.abs(opening[10:40, 5:40].mean((0, 1)) - GRADIENT[0]).max() < 30


def test_spotforge_picture_add_sets_a_place_in_the_owner_s_photo(ctx, business_ids, files):
    def spotforge(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(SPOTFORGE), "picture", *args, "-b", str(business_ids[0])],
            env=spotforge_env(ctx.settings.data_dir, ctx.settings.database_url),
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    added = spotforge("add", str(files / "shopfront.jpg"), "--geography", "Manhattan",
                      "--focus", "0.5,1")  # fmt: skip
    assert added.returncode == 0, added.stderr
    made = json.loads(added.stdout)
    assert made["name"] == "shopfront.jpg" and made["kind"] == "photo"
    manhattan = next(g for g in library.geographies(ctx, business_ids[0]) if g.name == "Manhattan")
    assert manhattan.background == Backdrop(made["asset"], (0.5, 1.0))
    assert spotforge("list").stdout == f"{made['asset']}\tshopfront.jpg · photo, 2400×1600\n"
    wrong = spotforge("add", str(files / "espresso.png"), "--focus", "middle")
    assert wrong.returncode != 0 and "The focus point is one of: top left" in wrong.stderr
