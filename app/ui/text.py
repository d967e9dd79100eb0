"""A business's own words in the page: always shown as typed, never read as markup.

Gradio renders Markdown components and toast messages (gr.Info, gr.Error) as HTML, so anything
a user typed goes through `md` (inside Markdown) or `plain` (a whole message) first; a refusal
is made by `refused`, which does that and keeps it on screen long enough to read.
"""

from __future__ import annotations

import html
import re

import gradio as gr

# What makes Markdown of plain text: emphasis, code, links and images, tables, headings, quotes.
MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]#!|~>])")


def md(text: object) -> str:
    """Text for a Markdown component: HTML characters as entities, Markdown's own characters
    backslash-escaped, lines joined (a table cell or a line stays one)."""
    escaped = html.escape(str(text), quote=False).replace("\r", " ").replace("\n", " ")
    return MARKDOWN_PUNCTUATION.sub(r"\\\1", escaped)


def plain(text: object) -> str:
    """A message for a toast, which Gradio puts in the page as HTML (text, not an attribute:
    quotes stay quotes)."""
    return html.escape(str(text), quote=False)


# How long a refusal stays on screen: Gradio's 10 s, and time to read it for a customer who had
# looked away (at a slow upload, at the button below the fold) when it came: a customer missed a
# 35-word one that faded after 10 s. Not until it is closed: an error left up after the brief
# was corrected and sent reads as a second failure.
SHOWN_S, PER_WORD_S, LONGEST_S = 10.0, 0.75, 60.0


def refused(message: object) -> gr.Error:
    """What a request must change, as an error toast shown long enough to read."""
    text = plain(message)
    duration = min(LONGEST_S, SHOWN_S + PER_WORD_S * len(text.split()))
    return gr.Error(text, duration=duration, print_exception=False)
