"""In-process diffusion engine: models, requests, scheduler, acceleration recipes.

It knows images, videos, prompts and seeds; it never knows a campaign.

Names are imported from their modules on first use (PEP 562): a caller of a light part
(the segmenter, the request types) does not pay for importing torch and diffusers, which
was half the time of a preview render from the command line.
"""

from importlib import import_module

_HOMES = {
    "Engine": "engine.engine",
    "Cancelled": "engine.errors",
    "EngineError": "engine.errors",
    "InvalidRequest": "engine.errors",
    "ModelUnavailable": "engine.errors",
    "QueueFull": "engine.errors",
    "Event": "engine.handle",
    "Handle": "engine.handle",
    "SceneJudge": "engine.judging",
    "Layout": "engine.layouts",
    "Seen": "engine.judging",
    "scene_judge": "engine.judging",
    "preset_for": "engine.loading",
    "with_defaults": "engine.loading",
    "REQUEST_TYPES": "engine.requests",
    "ImageToImage": "engine.requests",
    "ImageToVideo": "engine.requests",
    "Inpaint": "engine.requests",
    "Priority": "engine.requests",
    "ReferenceToVideo": "engine.requests",
    "Request": "engine.requests",
    "Task": "engine.requests",
    "TextToImage": "engine.requests",
    "TextToVideo": "engine.requests",
    "Result": "engine.runner",
    "ENGINE_VERSION": "engine.version",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
