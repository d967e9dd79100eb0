"""What a business types is text: checked on the server by the same rules the page shows, and
never read as Markdown or HTML wherever the page shows it."""

from __future__ import annotations

import html
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from app.services import UserError, text_rules
from app.ui.text import md, plain, refused

# Markdown with raw HTML allowed and GitHub's tables: more permissive than Gradio's Markdown.
RENDER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "[click](javascript:alert(1))",
    "![x](http://evil.test/x.png)",
    "**bold** _it_ `code` # heading | table |",
    "&lt;escaped&gt; &amp; <b>b</b>",
    "> quote\n- list\n1. item",
]


@pytest.mark.parametrize("typed", HOSTILE)
def test_hostile_copy_is_shown_exactly_as_typed(typed):
    html = RENDER.render(md(typed)).strip()
    assert html.startswith("<p>") and html.endswith("</p>")
    inner = html[3:-4]
    assert "<" not in inner  # no element but the paragraph
    assert _text_of(inner) == typed.replace("\n", " ")


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=80))
def test_any_text_renders_as_that_text_and_nothing_else(typed):
    html = RENDER.render(f"Campaign: {md(typed)}").strip()
    assert html.startswith("<p>") and html.endswith("</p>")
    inner = html[3:-4]
    assert "<" not in inner  # no element: every "<" the user typed is an entity
    assert _text_of(inner) == f"Campaign: {typed}".strip()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(text_rules.FIELDS)), st.text(max_size=600))
def test_every_field_is_checked_on_the_server(field, typed):
    try:
        kept = text_rules.clean(field, typed)
    except UserError as refused:
        message = str(refused)
        assert message.endswith(".") and len(message) < 200
        assert typed.strip() == "" or typed not in message or len(typed) < 2
        return
    assert len(kept) <= text_rules.limit(field)
    assert kept == unicodedata.normalize("NFC", kept) == kept.strip()
    assert all(unicodedata.category(c) not in text_rules.INVISIBLE for c in kept)


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("\u200b\u200b\u200b", "do not show on screen"),  # only zero-width spaces
        ("Sale\u202etxt.exe", "U+202E"),  # a right-to-left override
        ("Line\x07bell", "U+0007"),
        ("x" * 121, "121 characters; the limit is 120"),
    ],
)
def test_invisible_control_and_long_copy_is_refused(typed, why):
    with pytest.raises(UserError, match=why.replace("+", r"\+")):
        text_rules.clean("headline", typed)


def test_a_message_for_a_toast_is_not_html():
    assert plain('There is no place called "<b>x</b>".') == (
        'There is no place called "&lt;b&gt;x&lt;/b&gt;".'
    )


def _text_of(inner_html: str) -> str:
    return html.unescape(inner_html)


def test_a_refusal_is_escaped_and_stays_long_enough_to_read():
    upload = "Your product photo (<b>x</b>.png) was not taken. " + "word " * 30
    error = refused(upload)
    assert "<b>" not in error.message and "&lt;b&gt;" in error.message
    assert error.duration >= 30  # 38 words: a customer missed one that faded after 10 s
    assert refused("Pick a background first.").duration < 15
    assert refused("word " * 500).duration == 60  # an apology is never stuck on screen
