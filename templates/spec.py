"""Spot templates: the schema of the TOML files in templates/catalog, and loading them.

A template is data: ordered scenes with timings, the visual each needs, text slots with
character limits, motion, transitions, and an audio bed. A malformed file fails at load with
a message naming the file and the field.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from templates.errors import BriefError

CATALOG = Path(__file__).parent / "catalog"

SceneKind = Literal["establishing", "hero", "feature", "storefront", "offer", "end_card"]
# Where a scene's picture comes from: a generated background, the product composed on one, a
# card drawn from the brand colours, or a generated clip.
VisualSource = Literal["background", "product", "brand", "clip"]
BriefField = Literal[
    "business_name",
    "product_name",
    "headline",
    "body",
    "offer",
    "cta_text",
    "tagline",
    "phone",
    "cta_url",
]


# The screen shapes a spot is made in, each with its master's size; a preview is the same shape
# at a third of it (640x360, 360x640, 360x360). One storyboard makes all three: the same
# timing and sound, its copy and product laid out anew for each (templates/layout.py).
SHAPES = {"16:9": (1920, 1080), "9:16": (1080, 1920), "1:1": (1080, 1080)}
Shape = Literal["16:9", "9:16", "1:1"]

# Every end card names the business and says how to reach it (the phone when one is given).
END_CARD_FIELDS = frozenset({"business_name", "cta_url", "phone"})


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TextSlot(Strict):
    slot: str
    source: BriefField  # which field of the brief fills it
    max_chars: int = Field(gt=0, le=200)
    role: Literal["headline", "body", "offer", "cta", "tagline", "caption", "name", "web", "phone"]
    # On an end card, text stacks down its left column in this order; "contact" lines (web
    # address, phone) sit under the QR code in the right column.
    position: Literal["top", "center", "lower_third", "bottom", "contact"] = "lower_third"
    required: bool = True


class Visual(Strict):
    source: VisualSource
    # For generated visuals: a prompt with {product}, {business}, {setting} placeholders.
    prompt: str = ""


class Motion(Strict):
    type: Literal["zoom", "pan", "parallax", "still"] = "zoom"
    zoom_from: float = Field(1.0, ge=1.0, le=2.0)
    zoom_to: float = Field(1.08, ge=1.0, le=2.0)
    pan: Literal["left", "right", "up", "down"] = "right"


class Transition(Strict):
    type: Literal["cut", "crossfade"] = "cut"
    duration: float = Field(0.0, ge=0.0, le=2.0)


class SceneSpec(Strict):
    kind: SceneKind
    duration: float = Field(gt=0.5, le=30)
    visual: Visual
    motion: Motion = Motion()
    transition: Transition = Transition()  # into this scene from the previous one
    text: list[TextSlot] = []
    logo: bool = False
    qr: bool = False  # a QR code of the call-to-action URL (TV is not clickable)


class AudioBed(Strict):
    style: Literal["upbeat", "calm", "warm", "bright"] = "upbeat"
    bpm: int = Field(110, ge=50, le=180)


class Template(Strict):
    id: str
    name: str
    version: str
    description: str
    use_case: str
    duration: Literal[15, 30]
    audio_bed: AudioBed = AudioBed()
    scenes: list[SceneSpec] = Field(min_length=2)
    # A sample business (a brief's fields) its thumbnail is drawn with, over the pictures in
    # templates/samples: each template shown in its own layout with copy that suits its use.
    sample: dict[str, Any]

    @model_validator(mode="after")
    def _timing(self) -> Template:
        total = sum(s.duration for s in self.scenes)
        if abs(total - self.duration) > 1e-6:
            raise ValueError(
                f"scene durations add up to {total:g} s, but the spot lasts {self.duration} s"
            )
        if self.scenes[0].transition.type != "cut":
            raise ValueError("the first scene cannot have a transition into it")
        for i, scene in enumerate(self.scenes):
            if scene.transition.type == "crossfade" and not 0 < scene.transition.duration < min(
                scene.duration, self.scenes[i - 1].duration
            ):
                raise ValueError(
                    f"scenes[{i}].transition: a crossfade must be shorter than both scenes it joins"
                )
            sources = {slot.source for slot in scene.text}
            if scene.kind == "end_card" and (missing := END_CARD_FIELDS - sources):
                # The business on its own ad: who it is and how to reach it, on every template.
                raise ValueError(
                    f"scenes[{i}].text: an end card shows {', '.join(sorted(missing))}"
                )
            if scene.kind != "end_card" and any(s.position == "contact" for s in scene.text):
                raise ValueError(f"scenes[{i}].text: only an end card has contact lines")
        return self

    @property
    def shows(self) -> frozenset[str]:
        """The brief's fields this template puts on screen."""
        return frozenset(slot.source for scene in self.scenes for slot in scene.text)


class TemplateError(ValueError):
    """A template file that is malformed: a fault of ours, not the user's."""


class UnknownTemplate(BriefError):
    """A template id that is not in the catalogue."""


def parse_template(text: str, origin: str) -> Template:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TemplateError(f"{origin}: not valid TOML: {exc}") from exc
    try:
        return Template.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'template'}: {err['msg']}"
            for err in exc.errors()
        )
        raise TemplateError(f"{origin}: {problems}") from None


@cache
def load_template(template_id: str) -> Template:
    if template_id not in template_ids():  # never a path: "../x" names no template
        raise UnknownTemplate(
            f"there is no template {template_id!r}; choose one of: {', '.join(template_ids())}"
        )
    path = CATALOG / f"{template_id}.toml"
    return parse_template(path.read_text(), path.name)


def template_ids() -> list[str]:
    return sorted(p.stem for p in CATALOG.glob("*.toml"))


def all_templates() -> list[Template]:
    return [load_template(t) for t in template_ids()]
