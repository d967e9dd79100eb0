"""Backgrounds per geography, generated once and reused.

A background is an engine result like any other, cached per business by a hash of everything
that determines its pixels: model and revision, engine version, prompt, seed, steps, guidance,
size and recipe. Variants for different creatives, and for audiences whose light is the same,
ask for the same background and get the stored one. Each business draws its own: the seed a
background is made with mixes the business and the place into the run's seed, so two
businesses targeting Manhattan get two pictures, while a variant's stored seed re-renders it
bit for bit.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from app.services.library import AudienceView, GeographyView, background_prompt, geographies
from app.services.place_reading import drawn_place, draws_places, stated_light
from app.services.results_cache import Reuse, is_stored, key_of, stored
from engine import ENGINE_VERSION, Engine, Layout, TextToImage, preset_for, with_defaults
from storage import GenerationParams

if TYPE_CHECKING:
    from app.services.context import AppContext


@dataclass(frozen=True)
class Background:
    asset_id: int
    key: str
    prompt: str
    reused: bool
    warnings: tuple[str, ...] = ()


def background_request(
    geography: GeographyView,
    audience: AudienceView,
    *,
    business_id: int,
    preset: str,
    seed: int,
    recipe: str = "balanced",
    setting: str = "",
) -> TextToImage:
    """The background of `business_id`'s variants set in `geography` for `audience`, for a run
    (or a look) at `seed`, in `variant_light`."""
    light = variant_light(setting, audience.time_of_day)
    return place_request(
        geography, light, business_id=business_id, preset=preset, seed=seed, recipe=recipe
    )


def variant_light(setting: str, audience_light: str) -> str:
    """The light a variant is set in: golden hour or night where its spot's `setting` says so
    ("at sunset"), since the owner chose it; else its audience's own. A setting that says day
    leaves the audience theirs: day is every picture's light unless told otherwise, and the
    brief's own suggested setting says it ("street with buildings during the day")."""
    stated = stated_light(setting)
    return stated if stated in ("golden", "night") else audience_light


def place_request(
    geography: GeographyView, light: str, *, business_id: int, preset: str, seed: int, recipe: str
) -> TextToImage:
    """`business_id`'s picture of `geography` in `light` at `seed`: a built-in place drawn from
    its layout where the model draws layouts (`engine.layouts`), so its landmark stands in a
    composition of the business's own."""
    layout = Layout.of(geography.name, light, geography.weather)
    return TextToImage(
        preset=preset,
        prompt=background_prompt(geography, light),
        seed=background_seed(business_id, geography.name, seed),
        recipe=recipe,
        layout=layout.text if layout and draws_places(preset) else "",
        **final_size(preset),
    )


def final_size(preset: str) -> dict[str, int]:
    """The size to ask a background of: a final's, where the model has a learned upscaler that
    draws it (landmark-dit's), so every frame cut from it is crisp; else the model's own."""
    size = preset_for(preset).upscale_to
    return {} if size is None else {"width": size[0], "height": size[1]}


def background_seed(business_id: int, geography: str, seed: int) -> int:
    """The seed a business's background of `geography` is drawn with for a run at `seed`:
    stable, and different per business and place. Named by the geography's name, which a
    business's own copy of a built-in shares."""
    digest = hashlib.sha256(f"{business_id}\x1f{geography}\x1f{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: any engine's seed type holds it


def setting_request(
    ctx: AppContext, business_id: int, setting: str, *, preset: str, seed: int, recipe: str
) -> TextToImage:
    """The background of a spot as briefed, before any personalization: its `setting`, or the
    built-in place it names where the model draws places from their layouts (`place_reading`),
    as the business's variants there are drawn (its own copy of the place, if it keeps one)."""
    reading = drawn_place(preset, setting)
    if reading is None:
        return TextToImage(
            preset=preset,
            prompt=f"{setting.strip()}, photograph, no people",
            seed=seed,
            recipe=recipe,
            **final_size(preset),
        )
    place = next(g for g in geographies(ctx, business_id) if g.name == reading.geography)
    if reading.weather:
        place = replace(place, weather=reading.weather)
    return place_request(
        place, reading.light, business_id=business_id, preset=preset, seed=seed, recipe=recipe
    )


def stored_request(params: GenerationParams) -> TextToImage:
    """The request a variant's stored parameters name, every default spelled out."""
    return TextToImage(
        preset=params.model_id,
        prompt=params.prompt,
        negative_prompt=params.negative_prompt,
        seed=params.seed,
        steps=params.steps,
        guidance=params.guidance,
        width=params.width,
        height=params.height,
        recipe=params.recipe,
        layout=params.extra.get("layout", ""),
    )


def generation_key(request: TextToImage, revision: str) -> str:
    """Hash of everything that determines a text-to-image result (defaults resolved)."""
    preset = preset_for(request.preset)
    request = with_defaults(request, preset)
    return key_of(
        {
            "model_id": preset.id,
            "model_revision": revision,
            "engine_version": ENGINE_VERSION,
            "task": request.task.value,
            "prompt": request.prompt,
            "negative_prompt": request.negative_prompt or "",
            "seed": request.seed,
            "steps": request.steps,
            "guidance": request.guidance,
            "size": [request.width, request.height],
            "recipe": request.recipe,
            # Only where there is one: keys of pictures drawn from noise are as they were.
            **({"layout": request.layout} if request.layout else {}),
        }
    )


def background(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    request: TextToImage,
    *,
    tally: Reuse | None = None,
    reuse: bool = True,
) -> Background:
    """The background a request names: from the cache, or generated and stored."""
    return backgrounds(ctx, engine, business_id, [request], tally=tally, reuse=reuse)[0]


def backgrounds(
    ctx: AppContext,
    engine: Engine,
    business_id: int,
    requests: list[TextToImage],
    *,
    tally: Reuse | None = None,
    reuse: bool = True,
) -> list[Background]:
    """The backgrounds several requests name, in their order. Those not stored yet are all
    submitted to the engine before any is waited for, so it runs compatible ones as one batch;
    the same background asked twice is made once."""
    keys = [generation_key(r, engine.revision(r.preset)) for r in requests]
    missing: dict[str, TextToImage] = {}
    for key, request in zip(keys, requests, strict=True):
        if key not in missing and not (reuse and is_stored(ctx, business_id, key)):
            missing[key] = request
    making = dict(zip(missing, engine.submit_all(list(missing.values())), strict=True))
    made = []
    try:
        for key, request in zip(keys, requests, strict=True):
            handle = making.pop(key, None)

            def generate() -> tuple[bytes, dict]:
                generated = (handle or engine.submit(request)).result()  # noqa: B023 (called now)
                png = io.BytesIO()
                generated.images[0].save(png, format="PNG")
                params = {**generated.params, "warnings": generated.warnings,
                          "batch_size": generated.timings.get("batch_size", 1)}  # fmt: skip
                return png.getvalue(), params

            name = f"background-{key[:12]}.png"
            kept = stored(ctx, business_id, key, name, generate, reuse=reuse, tally=tally)
            warnings = tuple(kept.params.get("warnings", ()))
            made.append(Background(kept.asset_id, key, request.prompt, kept.reused, warnings))
    finally:
        for left in making.values():  # a failure above: nobody waits for these any more
            left.cancel()
    return made
