"""Templates as data: the catalogue loads, and a malformed file names its field."""

from __future__ import annotations

import pytest

from templates.spec import (
    CATALOG,
    TemplateError,
    UnknownTemplate,
    all_templates,
    load_template,
    parse_template,
)


def test_five_templates_for_real_uses():
    templates = {t.id: t for t in all_templates()}
    assert set(templates) == {
        "product-hero",
        "storefront",
        "seasonal-sale",
        "service-business",
        "online-shop",
    }
    for t in templates.values():
        assert t.duration in (15, 30)
        assert sum(s.duration for s in t.scenes) == pytest.approx(t.duration)
        assert t.scenes[-1].kind == "end_card" and t.scenes[-1].qr  # TV is not clickable
        end = {slot.source: slot for slot in t.scenes[-1].text}
        assert {"business_name", "cta_url", "phone"} <= set(end)  # who, and how to reach them
        assert end["business_name"].max_chars >= 120  # any name an account may have
    assert {t.duration for t in templates.values()} == {15, 30}


def broken(replace: str, by: str) -> str:
    text = (CATALOG / "product-hero.toml").read_text()
    assert replace in text
    return text.replace(replace, by, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (broken("duration = 15\n", "duration = 20\n"), "duration: Input should be 15 or 30"),
        (
            broken("duration = 3.5\n", "duration = 4.5\n"),
            "scene durations add up to 16 s, but the spot lasts 15 s",
        ),
        (broken('kind = "hero"', 'kind = "hero-shot"'), "scenes.1.kind: Input should be"),
        (
            broken("max_chars = 42", "max_chars = -1"),
            "scenes.0.text.0.max_chars: Input should be greater than 0",
        ),
        (broken('source = "headline"', 'source = "headlines"'), "scenes.0.text.0.source"),
        (broken('name = "Product hero"\n', ""), "name: Field required"),
        (
            broken('version = "2"', 'version = "2"\ncolour = "red"'),
            "colour: Extra inputs are not permitted",
        ),
        (broken("[[scenes]]", "[[scenes]"), "not valid TOML"),
        # Every end card names the business and says how to reach it.
        (
            broken('source = "business_name"', 'source = "tagline"'),
            "scenes.3..text: an end card shows business_name",
        ),
        (
            broken('source = "phone"', 'source = "tagline"'),
            "scenes.3..text: an end card shows phone",
        ),
        (
            broken('position = "lower_third"', 'position = "contact"'),
            "scenes.0..text: only an end card has contact lines",
        ),
    ],
)
def test_malformed_template_names_the_field(text, message):
    with pytest.raises(TemplateError, match="product-hero.toml: .*" + message.replace("(", ".")):
        parse_template(text, "product-hero.toml")


def test_unknown_template():
    with pytest.raises(UnknownTemplate, match="no template 'jingle'; choose one of: online-shop"):
        load_template("jingle")
    with pytest.raises(UnknownTemplate):  # never read as a path
        load_template("../catalog/product-hero")
