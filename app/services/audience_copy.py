"""What Spotforge proposes to say to each audience, and what the owner decides airs.

The owner's words are theirs: nothing proposed airs unless they accept it.

- Proposals touch the headline and the offer alone (SLOTS). The call to action, web address,
  phone, business and product names, body and tagline are never proposed: they are how a
  viewer acts and what the business promises. An audience's `call_to_action` is not used
  either: a slogan in the place of the owner's own ("Run with us" for "Order online") would
  tell the viewer something the business did not say.
- Tone proposes the headline's punctuation (energetic ends with "!", calm and reassuring
  never shout); offer emphasis proposes the audience's reason to buy in front of the offer
  ("Best value: 20 % off"), from a fixed phrase per emphasis, or its shorter one ("Value:")
  where the template's offer has less room.
- Given the template, a proposed line that would not fit it is not proposed: the owner's
  words stand.
- The owner accepts a proposal or writes a line of their own, per audience and slot (`decide`);
  the lines are stored with the spot (`spots.audience_lines`), checked as the brief was, and a
  run airs them (`aired`). An audience without any airs the owner's own words.
- Palette is not words: the brand's primary colour stays first and the audience's first hint
  becomes the accent, without asking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.services import library, spots
from app.services.errors import UserError
from app.services.library import AudienceView
from app.services.matrix import pick
from app.services.text_rules import clean
from templates.errors import BriefError
from templates.spec import Template, load_template
from templates.storyboard import Brand, Brief, CopyError, build_storyboard

if TYPE_CHECKING:
    from app.services.context import AppContext

SLOTS = ("headline", "offer")  # the only lines proposed, and chosen per audience

# Each emphasis's lead, then a shorter one for a template whose offer has less room.
EMPHASIS = {
    "performance": ("Made to perform", "Go faster"),
    "value": ("Best value", "Value"),
    "comfort": ("Comfort first", "Comfort"),
    "time": ("Save hours", "Quick"),
    "durability": ("Built to last", "Tough"),
    "experience": ("Made for tonight", "Tonight"),
    "safety": ("Safe and sound", "Safe"),
    "quality": ("Quality you can feel", "Quality"),
}
LOUD_TONES = {"energetic", "playful", "bold", "adventurous"}
QUIET_TONES = {"calm", "reassuring", "gentle", "warm"}


@dataclass(frozen=True)
class Proposal:
    slot: str  # one of SLOTS
    yours: str  # the owner's words
    proposed: str  # the rules' line for the audience; the owner's words when none fits


def proposals(
    brief: Brief, audience: AudienceView, template: Template | None = None
) -> list[Proposal]:
    """A proposal for each of SLOTS the brief has words in (fitted to `template` if given)."""
    rules = {
        "headline": [_headline(brief.headline, audience.tone)],
        "offer": _offers(brief.offer, audience.offer_emphasis),
    }
    found = []
    for slot in SLOTS:
        yours = getattr(brief, slot)
        if not yours:
            continue  # nothing of the owner's to propose from
        fitting = (
            line
            for line in rules[slot]
            if template is None or _fits(template, brief.model_copy(update={slot: line}))
        )
        found.append(Proposal(slot, yours, next(fitting, yours)))
    return found


def aired(brief: Brief, audience: AudienceView, lines: dict[str, str]) -> Brief:
    """The brief as it airs for this audience: the lines its owner chose (`decide`) in the
    place of theirs, and the audience's accent colour."""
    changes: dict[str, object] = {slot: lines[slot] for slot in SLOTS if slot in lines}
    if audience.palette_hints:
        primary = brief.brand.colors[0]
        changes["brand"] = Brand(
            **{**brief.brand.model_dump(), "colors": [primary, audience.palette_hints[0]]}
        )
    return brief.model_copy(update=changes)


@dataclass(frozen=True)
class Line:
    """One slot of one audience's words: the owner's, the proposal, and what airs."""

    audience_id: int
    audience: str
    slot: str
    yours: str
    proposed: str
    airs: str


def lines(ctx: AppContext, business_id: int, spot_id: int, audience_ids: list[int]) -> list[Line]:
    """Per audience (in the order given) and slot: the owner's words, the proposal, and what
    airs (the owner's words unless they chose another line)."""
    chosen = pick(library.audiences(ctx, business_id), audience_ids, "audience")
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
    brief, template = spots.brief_of(spot.copy), load_template(spot.template_id)
    decided = spots.audience_lines(spot.copy)
    return [
        Line(a.id, a.name, p.slot, p.yours, p.proposed, decided.get(a.id, {}).get(p.slot, p.yours))
        for a in chosen
        for p in proposals(brief, a, template)
    ]


def decide(
    ctx: AppContext, business_id: int, spot_id: int, chosen: dict[int, dict[str, str | None]]
) -> None:
    """Store the lines the owner chose to air, per audience (by id) and slot; slots not given
    keep their choice. Each line is checked as the brief's were: the field's limit, no
    characters that do not show, and it fits the template and the screen. A blank line, or the
    owner's own words, is no choice: their words air. One line refused stores nothing, and the
    sentence says for which audience."""
    audiences = pick(library.audiences(ctx, business_id), list(chosen), "audience")
    with ctx.tenant(business_id) as tenant:
        spot = tenant.campaigns.spot(spot_id)
        brief, template = spots.brief_of(spot.copy), load_template(spot.template_id)
        stored = spots.audience_lines(spot.copy)
        for audience in audiences:
            try:
                mine = {**stored.get(audience.id, {}), **_choice(brief, chosen[audience.id])}
                mine = {slot: text for slot, text in mine.items() if text}
                if mine:
                    spots.check_copy(tenant, template, brief.model_copy(update=mine), spot.copy)
            except (UserError, BriefError) as exc:
                raise UserError(f"For {audience.name}: {exc}") from None
            stored[audience.id] = mine
        kept = {str(a): mine for a, mine in stored.items() if mine}
        spot.copy = {**spot.copy, spots.AUDIENCE_LINES: kept}


def _choice(brief: Brief, given: dict[str, str | None]) -> dict[str, str]:
    """The lines given, cleaned; "" where the owner's own words air."""
    unknown = sorted(map(str, set(given) - set(SLOTS)))
    if unknown:
        raise UserError(
            f"Only the {' and the '.join(SLOTS)} are chosen per audience, not {', '.join(unknown)}."
        )
    cleaned = {slot: clean(slot, text) for slot, text in given.items()}
    return {slot: "" if text == getattr(brief, slot) else text for slot, text in cleaned.items()}


def _fits(template: Template, brief: Brief) -> bool:
    try:
        build_storyboard(template, brief)
        return True
    except CopyError:
        return False


def _offers(offer: str, emphasis: str) -> list[str]:
    """The offer with the emphasis's lead in front, longest first."""
    return [f"{lead}: {offer}" for lead in EMPHASIS.get(emphasis, ())] or [offer]


def _headline(headline: str, tone: str) -> str:
    text = headline.strip().rstrip("!.")
    if not text:
        return headline
    if tone in LOUD_TONES:
        return f"{text}!"
    if tone in QUIET_TONES:
        return f"{text}."
    return headline.strip()
