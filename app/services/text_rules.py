"""What a business may type: the one owner of every text field's limit and of which characters
a field refuses. The page's boxes take their `max_length` from here and every use case checks
again on the server, so an API client meets the same rules as the page.
"""

from __future__ import annotations

import unicodedata

from app.services.errors import UserError
from templates.storyboard import FIELD_WORDS

# field -> (what the page calls it, most characters)
FIELDS: dict[str, tuple[str, int]] = {
    "campaign_name": ("campaign name", 120),
    "objective": ("objective", 500),
    **{
        field: (FIELD_WORDS[field], most)
        for field, most in {
            "business_name": 120,
            "product_name": 80,
            "headline": 120,
            "body": 300,
            "offer": 120,
            "cta_text": 60,
            "cta_url": 120,
            "phone": 40,
            "tagline": 120,
            "setting": 200,
            "voiceover": 500,  # past what a 30 s spot has room to say
        }.items()
    },
}
# Control (Cc), format (Cf: zero-width spaces and joiners, direction overrides), surrogate (Cs),
# private-use (Co) and unassigned (Cn) characters draw nothing on screen, or something that is
# not what the text says; a line of copy never needs them.
INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn"}


def limit(field: str) -> int:
    return FIELDS[field][1]


def clean(field: str, value: str | None) -> str:
    """The text as it will be stored and shown: NFC, trimmed; refused with a sentence naming the
    field when it is too long or holds characters that do not show."""
    label, most = FIELDS[field]
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UserError(f"The {label} must be text.")
    text = unicodedata.normalize("NFC", value).strip()
    hidden = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in INVISIBLE})
    if hidden:
        raise UserError(
            f"The {label} has characters that do not show on screen ({', '.join(hidden[:3])}); "
            "type it again without them."
        )
    if len(text) > most:
        raise UserError(f"The {label} has {len(text)} characters; the limit is {most}.")
    return text


def clean_all(values: dict[str, str | None]) -> dict[str, str]:
    """`clean` for each field given."""
    return {field: clean(field, value) for field, value in values.items()}
