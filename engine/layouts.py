"""Pictures of a built-in place drawn from its layout: the procedural scene of that place
(`engine.training.landmarks`) at the request's seed, noised part of the way and denoised by the
model from there, as SDEdit does (Meng et al., 2021, "Guided Image Synthesis and Editing with
Stochastic Differential Equations").

Why: landmark-dit, drawing from noise, must decide where Mission Peak or the Space Needle
stands, and it draws what the average of its training scenes has there: the colours and the
horizon of the place, no landmark (docs/benchmarks.md, "Why landmark-dit draws no landmark").
Started from a layout, the composition is the scene generator's (a different one for every
seed, so for every business) and the model draws the rest of the schedule, its own rendering
of it; both judges then name every place (its card). A layout is named by text
(`Layout.text`), so a variant's lineage records it and re-renders it bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

from engine.errors import InvalidRequest
from engine.training.landmarks import SIGNATURES, LandmarkParams, Scene, draw_scene
from engine.training.scenes import TIMES, WEATHER

SEPARATOR = " | "


@dataclass(frozen=True)
class Layout:
    geography: str  # a built-in geography, as engine.training.landmarks names it
    light: str  # day, golden or night
    weather: str  # clear or cloudy

    @classmethod
    def of(cls, geography: str, light: str, weather: str) -> Layout | None:
        """The layout of a place in a light, or None where the scene generator has none (a
        business's own place); weather other than the generator's two is drawn clear."""
        if geography not in SIGNATURES or light not in TIMES:
            return None
        return cls(geography, light, weather if weather in WEATHER else "clear")

    @classmethod
    def parse(cls, text: str) -> Layout:
        parts = text.split(SEPARATOR)
        layout = cls.of(*parts) if len(parts) == 3 else None
        if layout is None or layout.weather != parts[2]:
            raise InvalidRequest(
                f"unknown layout {text!r}: it is 'PLACE{SEPARATOR}LIGHT{SEPARATOR}WEATHER', "
                f"a built-in place, one of {', '.join(TIMES)}, and one of {', '.join(WEATHER)}"
            )
        return layout

    @property
    def text(self) -> str:
        return SEPARATOR.join((self.geography, self.light, self.weather))

    def draw(self, seed: int, size: tuple[int, int]) -> Image.Image:
        """The scene at `size`: its composition and detail picked by `seed`."""
        return self.draw_scene(seed, size).image

    def draw_scene(self, seed: int, size: tuple[int, int]) -> Scene:
        """The scene at `size`, and where its sun or moon is seen."""
        return draw_scene(LandmarkParams(self.geography, self.light, self.weather, seed), size)


def schedule(steps: int, strength: float) -> list[float]:
    """The last `strength` of a `steps`-step rectified-flow schedule (sigma 1 down to 1/steps,
    as SD3's pipeline spaces it): the noise levels a layout is denoised through."""
    full = np.linspace(1.0, 1.0 / steps, steps)
    return [float(s) for s in full[steps - max(1, round(steps * strength)) :]]


def from_layouts(pipe, layouts: list[Image.Image], generators, steps: int, strength: float):
    """The pipeline arguments that start each picture from its layout: encoded by the
    pipeline's autoencoder and noised, with its own generator, to the first noise level of the
    last `strength` of the schedule (rectified flow: sigma x noise + (1 - sigma) x picture),
    and that part of the schedule, which the pipeline then runs."""
    sigmas = schedule(steps, strength)
    vae = pipe.vae
    pixels = torch.stack([torch.from_numpy(np.array(im.convert("RGB"))) for im in layouts])
    pixels = (pixels.permute(0, 3, 1, 2).float() / 127.5 - 1).to(vae.device, vae.dtype)
    encoded = vae.encode(pixels)
    latents = encoded.latent if hasattr(encoded, "latent") else encoded.latent_dist.mode()
    shift = getattr(vae.config, "shift_factor", None) or 0.0
    latents = (latents - shift) * vae.config.scaling_factor
    noise = torch.stack([torch.randn(latents.shape[1:], generator=g) for g in generators])
    noise = noise.to(latents.device, latents.dtype)
    return {"latents": sigmas[0] * noise + (1 - sigmas[0]) * latents, "sigmas": sigmas}
