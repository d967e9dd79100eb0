"""Backgrounds per geography, generated once and reused.

A background is an engine result like any other, cached per business by a hash of everything
that determines its pixels: model and revision, engine version, prompt, seed, steps, guidance,
size and recipe. Variants for different creatives, and for audiences whose light is the same,
ask for the same background and get the stored one. `BackgroundRun` counts what was reused.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.services.library import AudienceView, GeographyView, background_prompt
from engine import Engine, TextToImage
from engine.loading import preset_for
from engine.version import ENGINE_VERSION

if TYPE_CHECKING:
    from app.services.context import AppContext


@dataclass(frozen=True)
class Background:
    asset_id: int
    key: str
    prompt: str
    reused: bool
    warnings: tuple[str, ...] = ()


@dataclass
class BackgroundRun:
    """Backgrounds asked for in one run, and how many of them were already made."""

    asked: int = 0
    reused: int = 0
    backgrounds: list[Background] = field(default_factory=list)

    @property
    def reuse_ratio(self) -> float:
        return self.reused / self.asked if self.asked else 0.0


def background_request(
    geography: GeographyView,
    audience: AudienceView,
    *,
    preset: str,
    seed: int,
    recipe: str = "balanced",
) -> TextToImage:
    return TextToImage(
        preset=preset, prompt=background_prompt(geography, audience), seed=seed, recipe=recipe
    )


def generation_key(request: TextToImage, revision: str) -> str:
    """Hash of everything that determines a text-to-image result (defaults resolved)."""
    preset = preset_for(request.preset)
    determined = {
        "model_id": preset.id,
        "model_revision": revision,
        "engine_version": ENGINE_VERSION,
        "task": request.task.value,
        "prompt": request.prompt,
        "negative_prompt": request.negative_prompt or "",
        "seed": request.seed,
        "steps": request.steps or preset.steps,
        "guidance": preset.guidance if request.guidance is None else request.guidance,
        "size": [request.width or preset.width, request.height or preset.height],
        "recipe": request.recipe,
    }
    return hashlib.sha256(json.dumps(determined, sort_keys=True).encode()).hexdigest()


def background(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    geography: GeographyView,
    audience: AudienceView,
    *,
    preset: str,
    seed: int,
    recipe: str = "balanced",
    run: BackgroundRun | None = None,
    reuse: bool = True,
) -> Background:
    """The background for a geography and audience: from the cache, or generated and stored.
    `reuse=False` generates it regardless (to measure what reuse saves)."""
    request = background_request(geography, audience, preset=preset, seed=seed, recipe=recipe)
    key = generation_key(request, engine.revision(preset))
    with ctx.tenant(business_id) as tenant:
        cached = tenant.generations.get(key) if reuse else None
        result = None if cached is None else Background(cached.asset_id, key, request.prompt, True)
    if result is None:
        began = time.perf_counter()
        generated = engine.generate(request)
        png = io.BytesIO()
        generated.images[0].save(png, format="PNG")
        with ctx.tenant(business_id) as tenant:
            asset = tenant.assets.add(png.getvalue(), f"background-{key[:12]}.png")
            params: dict[str, Any] = {**generated.params, "warnings": generated.warnings}
            row = tenant.generations.add(key, asset, params, time.perf_counter() - began)
            result = Background(row.asset_id, key, request.prompt, False, tuple(generated.warnings))
    if run is not None:
        run.asked += 1
        run.reused += result.reused
        run.backgrounds.append(result)
    return result
