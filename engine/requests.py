"""Typed requests, one class per task. A request says what to make; the engine fills in the
preset's defaults and records the exact values used in the result."""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from PIL import Image

from engine.errors import InvalidRequest

MAX_PROMPT_CHARS = 2000


class Task(enum.StrEnum):
    TEXT_TO_IMAGE = "text-to-image"
    IMAGE_TO_IMAGE = "image-to-image"
    INPAINT = "inpaint"
    TEXT_TO_VIDEO = "text-to-video"
    IMAGE_TO_VIDEO = "image-to-video"
    REFERENCE_TO_VIDEO = "reference-to-video"

    @property
    def is_video(self) -> bool:
        return self in (Task.TEXT_TO_VIDEO, Task.IMAGE_TO_VIDEO, Task.REFERENCE_TO_VIDEO)


class Priority(enum.IntEnum):
    """Higher runs first. Waiting raises a request's rank, so bulk work is never starved."""

    BULK = 0
    INTERACTIVE = 10


@dataclass(frozen=True, kw_only=True)
class Request:
    task: ClassVar[Task]
    preset: str
    prompt: str
    negative_prompt: str = ""
    seed: int = 0
    steps: int | None = None  # None: the preset's default
    guidance: float | None = None
    width: int | None = None
    height: int | None = None
    recipe: str = "exact"
    priority: Priority = Priority.INTERACTIVE

    def __post_init__(self) -> None:
        if not self.prompt.strip():
            raise InvalidRequest("the prompt is empty")
        for name in ("prompt", "negative_prompt"):
            if len(getattr(self, name)) > MAX_PROMPT_CHARS:
                raise InvalidRequest(
                    f"the {name.replace('_', ' ')} is too long: {len(getattr(self, name))} "
                    f"characters, at most {MAX_PROMPT_CHARS}"
                )
        if not 0 <= self.seed < 2**63:
            raise InvalidRequest(f"the seed must be between 0 and 2**63-1, not {self.seed}")
        if self.steps is not None and not 1 <= self.steps <= 500:
            raise InvalidRequest(f"steps must be between 1 and 500, not {self.steps}")
        if self.guidance is not None and not 0 <= self.guidance <= 50:
            raise InvalidRequest(f"guidance must be between 0 and 50, not {self.guidance}")
        for name in ("width", "height"):
            value = getattr(self, name)
            if value is not None and not 64 <= value <= 4096:
                raise InvalidRequest(f"{name} must be between 64 and 4096 pixels, not {value}")

    def inputs(self) -> dict[str, Image.Image]:
        """The images this request conditions on, by parameter name."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if isinstance(getattr(self, f.name), Image.Image)
        }

    def scalars(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not isinstance(getattr(self, f.name), Image.Image)
        }


@dataclass(frozen=True, kw_only=True)
class TextToImage(Request):
    """`layout`: a built-in place's scene to start from (`engine.layouts`: 'PLACE | LIGHT |
    WEATHER', drawn at the seed), for a preset that draws layouts; '' draws from noise."""

    task: ClassVar[Task] = Task.TEXT_TO_IMAGE
    layout: str = ""


@dataclass(frozen=True, kw_only=True)
class ImageToImage(Request):
    task: ClassVar[Task] = Task.IMAGE_TO_IMAGE
    image: Image.Image
    strength: float = 0.6

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_strength(self.strength)


@dataclass(frozen=True, kw_only=True)
class Inpaint(Request):
    """Repaint where `mask` is white; keep where it is black."""

    task: ClassVar[Task] = Task.INPAINT
    image: Image.Image
    mask: Image.Image
    strength: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_strength(self.strength)
        if self.mask.size != self.image.size:
            raise InvalidRequest(
                f"the mask is {self.mask.size[0]}x{self.mask.size[1]} but the image is "
                f"{self.image.size[0]}x{self.image.size[1]}; they must match"
            )


@dataclass(frozen=True, kw_only=True)
class _Video(Request):
    num_frames: int | None = None  # None: the preset's default
    fps: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_frames is not None and not 1 <= self.num_frames <= 1025:
            raise InvalidRequest(f"num_frames must be between 1 and 1025, not {self.num_frames}")


@dataclass(frozen=True, kw_only=True)
class TextToVideo(_Video):
    task: ClassVar[Task] = Task.TEXT_TO_VIDEO


@dataclass(frozen=True, kw_only=True)
class ImageToVideo(_Video):
    """A clip whose first frame is `image`."""

    task: ClassVar[Task] = Task.IMAGE_TO_VIDEO
    image: Image.Image


@dataclass(frozen=True, kw_only=True)
class ReferenceToVideo(_Video):
    """A clip featuring the subject of `reference`.

    How: the subject is cut out of the reference (its alpha channel, or the salient-object
    model), composed at `subject_scale` of the frame height, centred on `background` (or a
    neutral backdrop), and that first frame drives image-to-video with the prompt.
    """

    task: ClassVar[Task] = Task.REFERENCE_TO_VIDEO
    reference: Image.Image
    background: Image.Image | None = None
    subject_scale: float = 0.6

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.1 <= self.subject_scale <= 1.0:
            raise InvalidRequest(
                f"subject_scale must be between 0.1 and 1, not {self.subject_scale}"
            )


REQUEST_TYPES: dict[Task, type[Request]] = {
    cls.task: cls
    for cls in (TextToImage, ImageToImage, Inpaint, TextToVideo, ImageToVideo, ReferenceToVideo)
}


def _check_strength(strength: float) -> None:
    if not 0 < strength <= 1:
        raise InvalidRequest(f"strength must be in (0, 1], not {strength}")
