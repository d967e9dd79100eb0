"""A business's own words in the page: always shown as typed, never read as markup.

Gradio renders Markdown components and toast messages (gr.Info, gr.Error) as HTML, so anything
a user typed goes through `md` (inside Markdown) or `plain` (a whole message) first.
"""

from __future__ import annotations

import html
import re

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
