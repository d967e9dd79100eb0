"""A spot from a brief: refused with a reason when something is wrong, its storyboard, its
scenes reordered or one redrawn, each edit a new base variant in its lineage."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from PIL import Image
from skimage import data

from app.services import UserError, businesses, library, renders, spots, variants
from app.services.demo import BRIEF
from app.services.errors import UploadRefused
from app.services.spots import brief_of
from engine import Engine
from storage import Business, NotFound
from templates.audio import pcm
from templates.errors import BriefError
from templates.export import frames_at, scene_stills
from templates.mix import VoiceOverTooLong
from templates.spec import load_template
from templates.storyboard import UPLOADED, CopyError, build_storyboard
from tests.app.test_cli import spotforge
from tests.storage.rows import all_rows

COPY = {k: v for k, v in BRIEF.items() if k != "business_name"}
SCRIPT = "Fresh espresso, roasted on the harbor every morning. Twenty percent off this week."
TOO_LONG = (
    r"^The voice-over runs \d+\.\d s; a 15 s spot has room for about 12 s\. Shorten it or "
    r"choose the 30 s spot\.$"
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "espresso.png"
    Image.fromarray(data.coffee()).save(path)
    return path


def track(path, seconds: float = 4.0, sound: str = "sine=frequency=440"):
    """A real audio file made by ffmpeg (its kind from the name's extension)."""
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"{sound}:duration={seconds}",
         "-ac", "2", str(path)],
        check=True,
    )  # fmt: skip
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


def test_a_brief_with_a_problem_is_refused_and_stores_nothing(
    ctx, business_ids, photo, tmp_path, font_bytes
):
    business = business_ids[0]
    text = tmp_path / "notes.png"
    text.write_text("not a picture")
    font = tmp_path / "brand.ttf"
    font.write_bytes(font_bytes)
    too_long = {**COPY, "offer": "An unbelievable forty percent off every single bag"}
    jingle = track(tmp_path / "jingle.wav")
    broken = tmp_path / "broken.wav"
    broken.write_bytes(jingle.read_bytes()[:60])  # a WAV header and no sound
    for changes, error, match in (
        ({"product_photos": []}, UserError, "Add a photo of your product"),
        ({"copy": too_long}, CopyError, "offer: 50 characters, the limit is 32"),
        ({"colors": ["navy"]}, UserError, "colours look like #1A2B3C"),
        (
            {"product_photos": [text]},
            UploadRefused,
            f"Your product photo \\({text.name}\\) was not taken. This file type is not recognised",
        ),
        ({"template_id": "nope"}, BriefError, "nope"),
        ({"template_id": "../../pyproject"}, BriefError, "no template"),
        # A photo that is fine, then a file that is not what its role needs: nothing is kept.
        ({"logo": font}, UserError, f"Your logo \\({font.name}\\) was not taken. It must be a PNG"),
        ({"heading_font": photo}, UserError, "Your heading font .* must be a TTF or OTF font"),
        ({"campaign_name": "x" * 121}, UserError, "campaign name has 121 characters"),
        ({"campaign_name": "\u200b\u200c"}, UserError, "do not show on screen"),
        ({"copy": {**COPY, "headline": "Fresh\x00 espresso"}}, UserError, "headline has"),
        ({"copy": {**COPY, "body": "x" * 301}}, UserError, "body has 301 characters"),
        ({"copy": {**COPY, "offer": "\u202eff0 %02"}}, UserError, "U\\+202E"),
        # Fits its character limit, but one word wider than the screen can show.
        ({"copy": {**COPY, "cta_url": "x" * 50 + ".com"}}, BriefError, "url: .* does not fit"),
        # Spoken, it runs past what the spot has room for.
        ({"voiceover": " ".join([SCRIPT] * 3)}, VoiceOverTooLong, TOO_LONG),
        ({"voiceover": "x" * 501}, UserError, "voice-over has 501 characters"),
        ({"music": "disco"}, UserError, "the music is one of"),
        ({"music": UPLOADED}, UserError, "Upload your music track"),
        ({"music_file": jingle}, UserError, "choose Upload your own under Music"),
        ({"music": UPLOADED, "music_file": broken}, UploadRefused, "audio file cannot be read"),
        ({"music": UPLOADED, "music_file": photo}, UserError, r"music track .* must be WAV"),
        (
            {
                "music": UPLOADED,
                "music_file": track(tmp_path / "hush.wav", sound="anullsrc=r=48000"),
            },
            UploadRefused,
            "hush.wav is silent",
        ),
    ):
        with pytest.raises(error, match=match):
            spots.create_spot(ctx, business, form(photo, **changes))
    with ctx.tenant(business) as tenant:
        assert tenant.campaigns.list() == [] and tenant.assets.list() == []
    stored = [p for p in ctx.assets.root.rglob("*") if p.is_file()]
    assert stored == []  # not a photo, not a temporary part


def test_reorder_and_redraw_make_new_bases(ctx, business_ids, photo, engine):
    business = business_ids[0]
    spot = spots.create_spot(ctx, business, form(photo)).id
    first = spots.choose_background(ctx, engine, business, spot, 1)
    cards = spots.storyboard(ctx, engine, business, spot)
    assert [c.title for c in cards] == ["Establishing", "Hero", "Offer", "End card"]
    assert cards[2].copy == {"offer": BRIEF["offer"]}

    reordered = spots.reorder_scenes(ctx, engine, business, spot, [0, 2, 1, 3])
    cards = spots.storyboard(ctx, engine, business, spot)
    assert [c.title for c in cards] == ["Establishing", "Offer", "Hero", "End card"]
    with pytest.raises(UserError, match="names each of the 4 scenes once"):
        spots.reorder_scenes(ctx, engine, business, spot, [0, 0, 1, 3])
    with pytest.raises(UserError, match="brand card"):
        spots.regenerate_scene(ctx, engine, business, spot, 3)

    before = renders.render_variant(ctx, engine, business, reordered, "preview")
    redrawn = spots.regenerate_scene(ctx, engine, business, spot, 0)
    after = renders.render_variant(ctx, engine, business, redrawn, "preview")
    assert before.qc_passed and after.qc_passed
    with ctx.tenant(business) as tenant:
        lineage = [v.id for v in tenant.variants.ancestors(redrawn)]
        assert lineage == [reordered, first]  # each edit under the one it changed
        assert tenant.variants.get(redrawn).extra_params["scene_seeds"] == {"0": 2}
    # The gallery, the side-by-side's choices and the tree tell the versions apart.
    captions = {c.id: c.caption for c in variants.cards(ctx, business, spot)}
    assert captions == {
        first: "as briefed · everyone, an earlier version",
        reordered: "as briefed · everyone, an earlier version",
        redrawn: "as briefed · everyone",
    }
    assert variants.card(ctx, business, first).caption == captions[first]
    _, rows = variants.lineage(ctx, business, spots.spot_view(ctx, business, spot).campaign_id)
    texts = {r.variant_id: r.text for r in rows}
    assert texts[redrawn] == "as briefed · everyone (ready)"
    assert texts[first] == "as briefed · everyone, an earlier version (planned)"  # never rendered
    # Only the redrawn scene changed: the opening differs, the offer (scene 2 now) does not.
    times = [1.75, 5.0]
    old, new = (
        [np.asarray(f, dtype=np.float32) for f in frames_at(r.path, times)] for r in (before, after)
    )
    assert np.abs(old[0] - new[0]).mean() > 8
    assert np.abs(old[1] - new[1]).mean() < 3


def test_reading_a_spot_its_campaigns_and_the_library_changes_nothing(ctx, business_ids, photo):
    business = business_ids[0]
    spot = spots.create_spot(ctx, business, form(photo))
    before = all_rows(ctx.db)
    assert spots.spot_view(ctx, business, spot.id) == spot
    assert library.geographies(ctx, business) and library.audiences(ctx, business)
    assert [c.id for c in businesses.list_campaigns(ctx, business)] == [spot.campaign_id]
    assert businesses.newest_spot(ctx, business, spot.campaign_id) == spot.id
    assert len(businesses.list_all(ctx)) == 2
    assert all_rows(ctx.db) == before


def test_a_brief_sent_again_from_an_open_spot_takes_its_photo_and_only_its_own(
    ctx, business_ids, photo
):
    """A returning owner's brief, the spot's words on the page and no photo added: the new spot
    is made with the open spot's product photo; under the open spot's campaign name, it is
    that campaign's next version. Another business naming that spot finds nothing and stores
    nothing."""
    owner, other = business_ids
    first = spots.create_spot(ctx, owner, form(photo, objective="Morning commuters"))
    again = spots.create_spot(
        ctx, owner, form(photo, campaign_name="Espresso week, again", product_photos=[],
                         photos_of=first.id)
    )  # fmt: skip
    assert again.campaign_id != first.campaign_id
    assert again.product_asset_ids == first.product_asset_ids
    assert again.campaign_name == "Espresso week, again"
    # A photo added replaces the open spot's.
    other_photo = photo.with_name("cup.png")
    Image.fromarray(np.asarray(Image.open(photo))[::-1]).save(other_photo)
    added = spots.create_spot(ctx, owner, form(other_photo, photos_of=first.id))
    assert added.product_asset_ids and added.product_asset_ids != first.product_asset_ids
    # Sent again under the open spot's name, it is that spot's next version, in its campaign:
    # the Library's "Open" and a return land on it.
    assert (added.campaign_id, added.campaign_name) == (first.campaign_id, "Espresso week")
    assert added.objective == "Morning commuters"  # a brief with none keeps the campaign's
    newest = spots.create_spot(ctx, owner, form(photo, photos_of=added.id, objective="Students"))
    assert (newest.campaign_id, newest.objective) == (first.campaign_id, "Students")
    assert businesses.newest_spot(ctx, owner, first.campaign_id) == newest.id
    assert businesses.last_spot(ctx, owner) == newest.id
    # A new brief that happens to take a name in use is a campaign the Library tells apart.
    assert spots.create_spot(ctx, owner, form(photo)).campaign_name == "Espresso week (2)"
    longest = "x" * 120
    names = [spots.create_spot(ctx, owner, form(photo, campaign_name=longest)).campaign_name
             for _ in range(2)]  # fmt: skip
    assert names == [longest, "x" * 116 + " (2)"]
    before = all_rows(ctx.db)
    for photos in ([], [photo]):  # with a photo of its own too: found before anything is stored
        with pytest.raises(NotFound, match="not found"):
            spots.create_spot(ctx, other, form(photo, product_photos=photos, photos_of=first.id))
    assert all_rows(ctx.db) == before
    with ctx.tenant(other) as tenant:
        assert tenant.campaigns.list() == []


def test_the_end_card_names_the_business_it_belongs_to(ctx, business_ids, photo, engine):
    """The name on the spot is the business's own (never typed again, never another's), and
    each variant stores it with the rest of its copy: what was approved is what airs."""
    business = business_ids[0]
    with ctx.db.session() as session:
        name = session.get(Business, business).name
    view = spots.create_spot(ctx, business, form(photo, copy={**COPY, "business_name": "Other"}))
    assert view.brief.business_name == name == "Trailhead Running"
    base = spots.choose_background(ctx, engine, business, view.id, 0)
    with ctx.tenant(business) as tenant:
        stored = tenant.variants.get(base).extra_params["copy"]
    assert stored["business_name"] == name
    # The owner renames the business after the preview was approved (a blank or invisible
    # name is refused and changes nothing; another business is not touched).
    for bad in ("  ", "\u200b"):
        with pytest.raises(UserError):
            businesses.rename(ctx, business, bad)
    assert businesses.rename(ctx, business, " Trailhead Running & Walking ").name == (
        "Trailhead Running & Walking"
    )
    with ctx.db.session() as session:
        assert session.get(Business, business_ids[1]).name != "Trailhead Running & Walking"
    end = build_storyboard(load_template(view.template_id), brief_of(stored)).scenes[-1]
    assert end.copy_text["business"] == name  # the variant airs as approved
    assert end.copy_text["url"] == COPY["cta_url"]
    renamed = spots.create_spot(ctx, business, form(photo))  # a new spot: the new name
    assert renamed.brief.business_name == "Trailhead Running & Walking"


def test_the_brief_says_what_a_template_will_not_show(ctx, business_ids, photo):
    business = business_ids[0]
    # Product hero has no line for the body copy, and there is no logo yet: both are said.
    view = spots.create_spot(ctx, business, form(photo))
    assert view.notes == (
        "Product hero does not show what you wrote under Body: it stays in your brief but will "
        "not be on screen in this spot. App or online-shop promo, Service business and "
        "Storefront or restaurant show it.",
        "No logo yet: the end card names your business in text. Add your logo to show it too.",
    )
    assert view.brief.body == COPY["body"]  # kept, as the note says
    assert spots.spot_view(ctx, business, view.id).notes == view.notes  # and said again later
    # A template that shows every field, with a logo: nothing to say.
    shown = spots.create_spot(ctx, business, form(photo, template_id="online-shop", logo=photo))
    assert shown.notes == ()
    assert "It does not show the Body field." in spots.template_note("product-hero")
    assert "does not show" not in spots.template_note("online-shop")
    # The room it says is the room the storyboard keeps: a headline one character longer is
    # refused, one that fits is not.
    note = spots.template_note("product-hero")
    assert "Room on screen, in characters: product 36, headline 42, offer 32" in note
    fits = brief_of({**BRIEF, "headline": "x" * 42})
    build_storyboard(load_template("product-hero"), fits)
    with pytest.raises(CopyError, match="headline: 43 characters, the limit is 42"):
        build_storyboard(load_template("product-hero"), brief_of({**BRIEF, "headline": "x" * 43}))
    # The page says so as it is typed, counting as the storyboard does (spaces collapsed, a web
    # address as printed); a field the template does not show is not counted.
    assert spots.copy_note("product-hero", {"headline": "x" * 42, "body": "y" * 300}) == ""
    typed = {"headline": "x" * 40 + "   yz", "cta_url": "https://www." + "a" * 50 + ".com/"}
    assert spots.copy_note("product-hero", typed) == (
        "⚠ Headline: 43 characters, and Product hero has room for 42 on screen. Shorten it, or "
        "pick a template with more room."
    )


def test_a_voice_over_and_an_uploaded_track_are_what_the_variant_renders(
    ctx, business_ids, photo, engine, tmp_path
):
    """The script and the music are part of the variant: its preview speaks the script over
    the business's own track, and renders the same again."""
    business = business_ids[0]
    jingle = track(tmp_path / "jingle.wav")  # 4 s: looped under the 15 s spot
    assert spots.voiceover_note(SCRIPT, 15).startswith("Voice-over: about ")
    assert spots.voiceover_note(" ".join([SCRIPT] * 3), 15).startswith("⚠ The voice-over runs")
    made = form(photo, voiceover=f"{SCRIPT}\n", music=UPLOADED, music_file=jingle)
    view = spots.create_spot(ctx, business, made)
    base = spots.choose_background(ctx, engine, business, view.id, 0)
    with ctx.tenant(business) as tenant:
        extra = tenant.variants.get(base).extra_params
        stored = tenant.assets.get(extra["brand_assets"]["music_file"])
        assert stored.media_type == "audio/wav" and stored.duration_s == pytest.approx(4.0)
    assert extra["copy"]["voiceover"] == SCRIPT and extra["copy"]["music"] == UPLOADED
    first, again = (renders.render_variant(ctx, engine, business, base, "preview") for _ in "12")
    assert first.qc_passed, first.qc_report
    heard = pcm(first.path)
    assert np.array_equal(heard, pcm(again.path))  # the same voice, the same mix
    # The end card's last seconds are the track alone: its 440 Hz, the bed ducked no more.
    tail = heard[round(13.2 * 48000) : round(13.8 * 48000), 0]
    assert np.argmax(np.abs(np.fft.rfft(tail))) * 48000 / len(tail) == pytest.approx(440, abs=5)


def test_a_brief_file_s_voice_over_and_music_go_through_spot_create(
    ctx, business_ids, photo, tmp_path
):
    # "music_file" is found beside the brief; given without a "music", the track is what plays.
    track(tmp_path / "jingle.wav")
    brief = tmp_path / "brief.json"
    brief.write_text(json.dumps({**BRIEF, "voiceover": SCRIPT, "music_file": "jingle.wav"}))
    made = spotforge(tmp_path, "spot", "create", "-b", str(business_ids[0]), "--campaign", "VO",
                     "--brief", str(brief), "--photo", str(photo))  # fmt: skip
    assert made.returncode == 0, made.stderr
    with ctx.tenant(business_ids[0]) as tenant:
        spot = tenant.campaigns.spot(json.loads(made.stdout)["spot_id"])
        assert spot.copy["voiceover"] == SCRIPT and spot.copy["music"] == UPLOADED
        assert tenant.assets.get(spot.copy["brand_assets"]["music_file"]).media_type == "audio/wav"
    # A built-in style, by its name.
    chosen = spots.brief_form("VO", "product-hero", {**BRIEF, "music": "calm"}, [photo])
    assert (chosen.music, chosen.music_file) == ("calm", None)


def test_the_storyboard_shows_the_product_in_its_scenes_before_a_background_is_chosen(
    ctx, business_ids, photo, engine
):
    business = business_ids[0]
    spot = spots.create_spot(ctx, business, form(photo)).id
    view = spots.spot_view(ctx, business, spot)
    board = build_storyboard(load_template(view.template_id), view.brief)
    plain = scene_stills(board, {}, spots.BOARD)  # brand cards, nothing on them
    cards = spots.storyboard(ctx, engine, business, spot)
    product_scenes = [s.index for s in board.scenes if s.visual.source == "product"]
    assert product_scenes
    for scene, card, card_alone in zip(board.scenes, cards, plain, strict=True):
        moved = np.abs(np.asarray(card.still, float) - np.asarray(card_alone, float)).mean()
        if scene.index in product_scenes:
            assert moved > 5, scene.title  # the espresso cup stands on the card
        else:
            assert moved == 0, scene.title
