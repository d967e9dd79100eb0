"""Classifier-free guidance on the early steps only.

Guidance is unnecessary at low noise levels, once layout and colours are set (Kynkäänniemi et
al. 2024, "Applying Guidance in a Limited Interval Improves Sample and Distribution Quality in
Diffusion Models", https://arxiv.org/abs/2404.07724, who also drop it at the highest noise; we
keep it there because it fixes mini-sd's colours). After the first `fraction` of the steps,
each step evaluates only the conditional branch: half the denoiser batch. It is done the way
diffusers documents dynamic guidance, from the pipeline's step-end callback: the guidance scale
drops to 0 and every tensor the pipeline doubled for the two branches keeps its conditional
half (the second, as these pipelines concatenate [uncond, cond]).

Only the Stable Diffusion and SDXL pipelines are cut: others keep their branches apart (Wan
runs the model twice) or double tensors the callback cannot reach (LTX's attention masks). Our
transformer recipes cut none: on mini-dit (SD3) it cost 2-4 dB for under a tenth of the time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# Tensors these pipelines double for classifier-free guidance and read back from the callback.
DOUBLED = ("prompt_embeds", "add_text_embeds", "add_time_ids", "mask", "masked_image_latents")
PIPELINES = {
    f"StableDiffusion{xl}{task}Pipeline" for xl in ("", "XL") for task in ("", "Img2Img", "Inpaint")
}


@dataclass(frozen=True)
class GuidanceInterval:
    fraction: float  # of the steps, from the first, that run with guidance

    def tensor_inputs(self, pipe) -> list[str]:
        """The callback inputs the cut needs; empty where the pipeline cannot take it."""
        if type(pipe).__name__ not in PIPELINES:
            return []
        return [name for name in DOUBLED if name in pipe._callback_tensor_inputs]

    def step_end(self, pipe, step: int, callback_kwargs: dict[str, Any]) -> dict[str, Any]:
        cut = math.ceil(self.fraction * pipe.num_timesteps)
        if step + 1 == cut and pipe.do_classifier_free_guidance:
            pipe._guidance_scale = 0.0  # reset by the pipeline at its next call
            for name in DOUBLED:
                if callback_kwargs.get(name) is not None:
                    callback_kwargs[name] = callback_kwargs[name].chunk(2)[-1]
        return callback_kwargs
