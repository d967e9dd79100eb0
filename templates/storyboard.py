"""Template + brief -> storyboard: ordered, timed scenes with their copy filled in, each naming
the visual it needs. Rendering those visuals is the caller's job (templates never call the
engine)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from templates.audio import STYLES
from templates.errors import BriefError
from templates.spec import Motion, SceneSpec, Template, TextSlot, Transition

HEX = re.compile(r"^#[0-9A-Fa-f]{6}$")
UPLOADED = "upload"  # a brief's music: the business's own track, stored beside the brief


class Brand(BaseModel):
    model_config = ConfigDict(frozen=True)
    colors: list[str] = Field(default_factory=lambda: ["#1F3A5F", "#F2B134"])  # primary first
    heading_font: Path | None = None  # TTF/OTF; DejaVu when absent
    body_font: Path | None = None
    logo: Path | None = None  # PNG with transparency works best

    @field_validator("colors")
    @classmethod
    def _hex(cls, colors: list[str]) -> list[str]:
        if not colors:
            raise ValueError("at least one brand colour is needed")
        for c in colors:
            if not HEX.match(c):
                raise ValueError(f"colours look like #1A2B3C, not {c!r}")
        return colors


class Brief(BaseModel):
    """What the business tells us about the spot."""

    model_config = ConfigDict(frozen=True)
    business_name: str
    product_name: str = ""
    headline: str = ""
    body: str = ""
    offer: str = ""
    cta_text: str = ""
    cta_url: str = ""  # shown as text and as a QR code
    phone: str = ""
    tagline: str = ""
    setting: str = "a sunny main street"  # where visuals are set; personalization replaces it
    voiceover: str = ""  # spoken over the scenes (templates.mix)
    music: str = ""  # a built-in style (audio.STYLES), UPLOADED, or "": the template's own bed
    brand: Brand = Brand()

    @field_validator("music")
    @classmethod
    def _music(cls, music: str) -> str:
        if music not in ("", UPLOADED, *STYLES):
            styles = ", ".join(f"{name} ({style.label})" for name, style in STYLES.items())
            raise ValueError(f"the music is one of {styles}, or {UPLOADED} (your own track)")
        return music


class VisualNeed(BaseModel):
    model_config = ConfigDict(frozen=True)
    source: str  # background | product | brand | clip
    prompt: str = ""


class Scene(BaseModel):
    model_config = ConfigDict(frozen=True)
    index: int  # its place in the spot
    origin: int  # its place in the template (a storyboard may reorder the scenes)
    kind: str
    start: float
    duration: float
    visual: VisualNeed
    motion: Motion
    transition: Transition
    copy_text: dict[str, str]  # slot -> text
    slots: list[TextSlot]
    logo: bool
    qr_url: str | None

    @property
    def title(self) -> str:
        return scene_title(self.kind)


def scene_title(kind: str) -> str:
    """A scene's kind in words, as a customer reads it ("end_card" is "End card")."""
    return kind.replace("_", " ").capitalize()


class Storyboard(BaseModel):
    model_config = ConfigDict(frozen=True)
    template_id: str
    template_version: str
    duration: int
    audio_style: str
    audio_bpm: int
    brief: Brief
    scenes: list[Scene]


class CopyError(BriefError):
    """Copy that does not fit the template: too long, or missing where required."""


def build_storyboard(
    template: Template, brief: Brief, order: Sequence[int] | None = None
) -> Storyboard:
    """`order` puts the template's scenes (0-based) in another order, each once. The scene that
    opens the spot then cuts in, and a crossfade longer than a new neighbour becomes a cut."""
    specs = _ordered(template, order)
    problems: list[str] = []
    scenes: list[Scene] = []
    start = 0.0
    for index, (origin, spec) in enumerate(specs):
        copy = _fill(spec, brief, index, problems)
        transition = spec.transition
        before = specs[index - 1][1].duration if index else 0.0
        if transition.type == "crossfade" and not transition.duration < min(spec.duration, before):
            transition = Transition()
        if spec.qr and not brief.cta_url:
            problems.append(
                f"scene {index + 1} ({scene_title(spec.kind)}) shows a QR code: give a "
                f"{FIELD_WORDS['cta_url']}"
            )
        scenes.append(
            Scene(
                index=index,
                origin=origin,
                kind=spec.kind,
                start=round(start, 6),
                duration=spec.duration,
                visual=VisualNeed(
                    source=spec.visual.source,
                    prompt=spec.visual.prompt.format(
                        product=brief.product_name or brief.business_name,
                        business=brief.business_name,
                        setting=brief.setting,
                    ),
                ),
                motion=spec.motion,
                transition=transition,
                copy_text=copy,
                slots=spec.text,
                logo=spec.logo,
                qr_url=brief.cta_url if spec.qr else None,
            )
        )
        start += spec.duration
    if problems:
        raise CopyError("; ".join(problems))
    style, bpm = template.audio_bed.style, template.audio_bed.bpm
    if brief.music in STYLES:  # a style the brief chooses plays at its own tempo
        style, bpm = brief.music, STYLES[brief.music].bpm
    return Storyboard(
        template_id=template.id,
        template_version=template.version,
        duration=template.duration,
        audio_style=style,
        audio_bpm=bpm,
        brief=brief,
        scenes=scenes,
    )


def _ordered(template: Template, order: Sequence[int] | None) -> list[tuple[int, SceneSpec]]:
    count = len(template.scenes)
    if order is None:
        return list(enumerate(template.scenes))
    if sorted(order) != list(range(count)):
        raise BriefError(
            f"a scene order names each of the {count} scenes once, "
            f"1 to {count}; got {[i + 1 for i in order]}"
        )
    return [(i, template.scenes[i]) for i in order]


def _fill(spec: SceneSpec, brief: Brief, index: int, problems: list[str]) -> dict[str, str]:
    copy = {}
    for slot in spec.text:
        text = on_screen(slot.source, getattr(brief, slot.source))
        where = f"scene {index + 1} ({scene_title(spec.kind)}), {FIELD_WORDS[slot.source]}"
        if not text:
            if slot.required:
                problems.append(f"{where}: fill it in, this template shows it")
            continue
        if len(text) > slot.max_chars:
            problems.append(
                f"{where}: {len(text)} characters, the limit is {slot.max_chars} ({text!r})"
            )
        copy[slot.slot] = text
    return copy


# The brief's fields in words, as an owner reads them in a message.
FIELD_WORDS = {
    "business_name": "business name",
    "product_name": "product",
    "headline": "headline",
    "body": "body",
    "offer": "offer",
    "cta_text": "call to action",
    "cta_url": "web address",
    "phone": "phone",
    "tagline": "tagline",
    "setting": "setting",
    "voiceover": "voice-over",
}
# The brief's fields a viewer reads (its setting is what the pictures show, not words).
ON_SCREEN = ("product_name", "headline", "body", "offer", "cta_text", "cta_url", "phone", "tagline")


def on_screen(field: str, value: object) -> str:
    """A brief field's words as a scene shows them (and as their room is counted): spaces
    collapsed, a web address as it is printed."""
    text = " ".join(unicodedata.normalize("NFC", str(value)).split())
    return web_address(text) if field == "cta_url" else text


def too_long(template: Template, fields: dict[str, str]) -> list[tuple[str, int, int]]:
    """The fields whose words are longer than the template has room for on screen, each as
    (field, characters, room): what building its storyboard would refuse."""
    room = limits(template)
    lengths = {f: len(on_screen(f, v)) for f, v in fields.items() if f in room}
    return [(f, n, room[f]) for f, n in lengths.items() if n > room[f]]


def limits(template: Template) -> dict[str, int]:
    """The most characters each field the template shows may have: its shortest line's room
    (a headline on two scenes fits the smaller)."""
    room: dict[str, int] = {}
    for spec in template.scenes:
        for slot in spec.text:
            room[slot.source] = min(room.get(slot.source, slot.max_chars), slot.max_chars)
    return room


def left_out(template: Template, brief: Brief) -> list[str]:
    """The brief's fields that carry words this template has no place for (none are dropped
    without the business being told)."""
    return [f for f in ON_SCREEN if str(getattr(brief, f)).strip() and f not in template.shows]


def web_address(url: str) -> str:
    """A web address as a viewer reads it on screen: no scheme, no trailing slash. The QR code
    keeps the whole address."""
    return re.sub(r"^https?://", "", url.strip(), flags=re.IGNORECASE).rstrip("/")
