"""What a business may type: the one owner of every text field's limit and of which characters
a field refuses. The page's boxes take their `max_length` from here and every use case checks
again on the server, so an API client meets the same rules as the page.
"""

from __future__ import annotations

import unicodedata

from app.services.errors import UserError

# field -> (what the page calls it, most characters)
FIELDS: dict[str, tuple[str, int]] = {
    "business_name": ("business name", 120),
    "campaign_name": ("campaign name", 120),
    "objective": ("objective", 500),
    "product_name": ("product", 80),
    "headline": ("headline", 120),
    "body": ("body", 300),
    "offer": ("offer", 120),
    "cta_text": ("call to action", 60),
    "cta_url": ("web address", 120),
    "phone": ("phone", 40),
    "tagline": ("tagline", 120),
    "setting": ("setting", 200),
    "voiceover": ("voice-over", 500),  # past what a 30 s spot has room to say
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
