"""The brief's copy and palette adapted to an audience, by rules a business can read.

- Tone sets the punctuation and the lead-in of the headline (energetic ends with "!", calm and
  reassuring never shout).
- Offer emphasis puts the audience's reason to buy in front of the offer ("Best value: 20 %
  off"), from a fixed phrase per emphasis.
- The call to action takes the audience's wording; the brief's URL and phone stay, since TV is
  not clickable and they are how a viewer acts.
- Palette: the brand's primary colour stays first; the audience's first hint becomes the accent.
- Given the template, an adapted line that would not fit it falls back to the brief's own
  words (offer first, then call to action, then headline): a variant never fails on copy the
  business did not write.

Nothing is invented about the product: every fact (name, offer, URL, phone) comes from the brief.
"""

from __future__ import annotations

from app.services.library import AudienceView
from templates.spec import Template
from templates.storyboard import Brand, Brief, CopyError, build_storyboard

EMPHASIS = {
    "performance": "Built for your best run",
    "value": "Best value",
    "comfort": "Comfort first",
    "time": "Save hours",
    "durability": "Built to last",
    "experience": "Made for tonight",
    "safety": "Safe and sound",
    "quality": "Quality you can feel",
}
LOUD_TONES = {"energetic", "playful", "bold", "adventurous"}
QUIET_TONES = {"calm", "reassuring", "gentle", "warm"}


def adapt(brief: Brief, audience: AudienceView, template: Template | None = None) -> Brief:
    """The brief as this audience should hear and see it (fitted to `template` if given)."""
    changes: dict[str, object] = {"headline": _headline(brief.headline, audience.tone)}
    lead = EMPHASIS.get(audience.offer_emphasis)
    if brief.offer and lead:
        changes["offer"] = f"{lead}: {brief.offer}"
    if audience.call_to_action:
        changes["cta_text"] = audience.call_to_action
    if audience.palette_hints:
        primary = brief.brand.colors[0]
        changes["brand"] = Brand(
            **{**brief.brand.model_dump(), "colors": [primary, audience.palette_hints[0]]}
        )
    adapted = brief.model_copy(update=changes)
    if template is None:
        return adapted
    for field in ("offer", "cta_text", "headline", None):
        try:
            build_storyboard(template, adapted)
            return adapted
        except CopyError:
            if field is not None:
                adapted = adapted.model_copy(update={field: getattr(brief, field)})
    return adapted  # the brief's own copy does not fit either: rendering will say why


def _headline(headline: str, tone: str) -> str:
    text = headline.strip().rstrip("!.")
    if not text:
        return headline
    if tone in LOUD_TONES:
        return f"{text}!"
    if tone in QUIET_TONES:
        return f"{text}."
    return headline.strip()
