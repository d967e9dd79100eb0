"""Template + brief -> storyboard."""

from __future__ import annotations

import pytest

from templates.errors import BriefError
from templates.spec import load_template
from templates.storyboard import CopyError, build_storyboard, left_out


def test_storyboard_fills_copy_timing_and_visual_needs(brief):
    board = build_storyboard(load_template("storefront"), brief)
    assert [s.kind for s in board.scenes] == [
        "establishing",
        "storefront",
        "feature",
        "offer",
        "end_card",
    ]
    assert [s.start for s in board.scenes] == [0, 6, 13, 20, 25]
    assert board.scenes[0].copy_text == {"business": "Harbor Coffee Co."}
    assert board.scenes[3].copy_text == {"offer": "20% off all beans"}
    assert board.scenes[0].visual.prompt == (
        "a foggy San Francisco pier at dawn, street life, golden hour"
    )
    assert board.scenes[-1].qr_url == "https://harborcoffee.com/tv"
    assert board.scenes[-1].logo and board.duration == 30


def test_scenes_in_another_order(brief):
    template = load_template("storefront")
    board = build_storyboard(template, brief, order=[0, 3, 1, 2, 4])
    assert [s.kind for s in board.scenes] == [
        "establishing",
        "offer",
        "storefront",
        "feature",
        "end_card",
    ]
    assert [s.origin for s in board.scenes] == [0, 3, 1, 2, 4]
    assert [s.start for s in board.scenes] == [0, 6, 11, 18, 25]  # retimed, same length
    assert board.scenes[1].copy_text == {"offer": "20% off all beans"}
    # Whatever the order, the opening scene cuts in and every crossfade fits its neighbours.
    opened = build_storyboard(template, brief, order=[4, 0, 1, 2, 3])
    assert opened.scenes[0].transition.type == "cut"
    for before, scene in zip(opened.scenes, opened.scenes[1:], strict=False):
        if scene.transition.type == "crossfade":
            assert scene.transition.duration < min(before.duration, scene.duration)
    with pytest.raises(BriefError, match="names each of the 5 scenes once"):
        build_storyboard(template, brief, order=[0, 0, 1, 2, 3])


def test_copy_that_does_not_fit_names_the_slot(brief):
    long = brief.model_copy(
        update={"offer": "An unbelievable forty percent off every single bag", "cta_url": ""}
    )
    with pytest.raises(CopyError) as error:
        build_storyboard(load_template("product-hero"), long)
    message = str(error.value)
    assert "scene 3 (Offer), offer: 50 characters, the limit is 32" in message
    assert "scene 4 (End card) shows a QR code: give a web address" in message


def test_end_card_copy_and_what_a_template_leaves_out(brief):
    board = build_storyboard(load_template("product-hero"), brief)
    assert board.scenes[-1].copy_text == {
        "business": "Harbor Coffee Co.",
        "cta": "Order at harborcoffee.com",
        "tagline": "Small batch. Big flavour.",
        "url": "harborcoffee.com/tv",  # the address as read on screen; the QR code keeps it all
        "phone": "(415) 555-0134",
    }
    assert board.scenes[-1].qr_url == "https://harborcoffee.com/tv"
    # Product hero has no body line: it is reported, not silently dropped.
    assert left_out(load_template("product-hero"), brief) == ["body"]
    assert left_out(load_template("service-business"), brief) == ["product_name"]
    assert left_out(load_template("online-shop"), brief) == []  # it shows every field
    assert left_out(load_template("product-hero"), brief.model_copy(update={"body": " "})) == []
    no_phone = build_storyboard(
        load_template("product-hero"), brief.model_copy(update={"phone": ""})
    )
    assert "phone" not in no_phone.scenes[-1].copy_text


def test_missing_required_copy(brief):
    with pytest.raises(
        CopyError, match="scene 1 \\(Establishing\\), headline: fill it in, this template shows it"
    ):
        build_storyboard(load_template("product-hero"), brief.model_copy(update={"headline": ""}))


def test_render_command(tmp_path, brief, photos):
    """The whole path a user takes from the command line, in the preview tier."""
    import json

    from tests.app.test_cli import spotforge

    brief_file = tmp_path / "brief.json"
    brief_file.write_text(brief.model_dump_json())
    photos["backdrop"].save(tmp_path / "street.jpg")
    photos["product"].save(tmp_path / "cup.jpg")
    out = tmp_path / "spot.mp4"
    run = spotforge(
        tmp_path,
        "render",
        "--template",
        "online-shop",
        "--brief",
        str(brief_file),
        "--background",
        str(tmp_path / "street.jpg"),
        "--product",
        str(tmp_path / "cup.jpg"),
        "--tier",
        "preview",
        "-o",
        str(out),
    )
    assert run.returncode == 0, run.stderr
    assert "PASS" in run.stdout.splitlines()[-2]
    assert json.loads(out.with_suffix(".qc.json").read_text())["passed"]
    bad_brief = tmp_path / "bad.json"
    bad_brief.write_text(json.dumps({"business_name": "X", "offer": "y" * 80}))
    bad = spotforge(
        tmp_path,
        "render",
        "--template",
        "online-shop",
        "--brief",
        str(bad_brief),
        "--background",
        str(tmp_path / "street.jpg"),
        "--product",
        str(tmp_path / "cup.jpg"),
        "-o",
        str(out),
    )
    assert bad.returncode == 1 and "offer: 80 characters, the limit is 32" in bad.stderr


def test_render_command_reports_unusable_inputs(tmp_path, brief, photos):
    from tests.app.test_cli import spotforge

    brief_file = tmp_path / "brief.json"
    # Fits the slot's character limit, but one unbreakable word wider than the screen.
    brief_file.write_text(brief.model_copy(update={"body": "W" * 70}).model_dump_json())
    photos["backdrop"].save(tmp_path / "street.jpg")
    (tmp_path / "song.mp3").write_bytes(b"not audio")
    common = [
        "render",
        "--template",
        "online-shop",
        "--background",
        str(tmp_path / "street.jpg"),
        "--product",
        str(tmp_path / "street.jpg"),
        "--tier",
        "preview",
        "-o",
        str(tmp_path / "spot.mp4"),
    ]
    wide = spotforge(tmp_path, *common, "--brief", str(brief_file))
    assert wide.returncode == 1 and "does not fit on screen" in wide.stderr
    brief_file.write_text(brief.model_dump_json())
    song = spotforge(
        tmp_path, *common, "--brief", str(brief_file), "--audio", str(tmp_path / "song.mp3")
    )
    assert song.returncode == 1 and "cannot read the audio in song.mp3" in song.stderr
    missing = spotforge(tmp_path, *common, "--brief", str(tmp_path / "none.json"))
    assert missing.returncode == 1 and "none.json" in missing.stderr
    assert "Traceback" not in wide.stderr + song.stderr + missing.stderr
