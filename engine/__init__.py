"""In-process diffusion engine: models, requests, scheduler, acceleration recipes.

It knows images, videos, prompts and seeds; it never knows a campaign.
"""

from engine.engine import Engine
from engine.errors import Cancelled, EngineError, InvalidRequest, ModelUnavailable, QueueFull
from engine.handle import Event, Handle
from engine.judging import SceneJudge, Seen, scene_judge
from engine.loading import preset_for, with_defaults
from engine.requests import (
    REQUEST_TYPES,
    ImageToImage,
    ImageToVideo,
    Inpaint,
    Priority,
    ReferenceToVideo,
    Request,
    Task,
    TextToImage,
    TextToVideo,
)
from engine.runner import Result
from engine.version import ENGINE_VERSION

__all__ = [
    "ENGINE_VERSION",
    "REQUEST_TYPES",
    "Cancelled",
    "Engine",
    "EngineError",
    "Event",
    "Handle",
    "ImageToImage",
    "ImageToVideo",
    "Inpaint",
    "InvalidRequest",
    "ModelUnavailable",
    "Priority",
    "QueueFull",
    "ReferenceToVideo",
    "Request",
    "Result",
    "SceneJudge",
    "Seen",
    "Task",
    "TextToImage",
    "TextToVideo",
    "preset_for",
    "scene_judge",
    "with_defaults",
]
