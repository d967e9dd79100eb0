"""Every task on the offline presets, through the engine, compared with plain diffusers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine import (
    ImageToImage,
    ImageToVideo,
    Inpaint,
    ReferenceToVideo,
    Task,
    TextToImage,
    TextToVideo,
)
from engine.loading import load
from engine.reference import first_frame
from engine.runner import image_sha256
from tests.engine.conftest import centre_mask

STAGES = {
    "text_encoding",
    "image_encoding",
    "denoising",
    "decoding",
    "upscaling",
    "total",
    "batch_size",
}


def requests(photo):
    small = photo.resize((256, 256))
    return [
        TextToImage(preset="tiny-sd", prompt="a red running shoe on a trail", seed=1),
        ImageToImage(preset="tiny-sd", prompt="the shoe at sunset", image=photo, seed=2),
        Inpaint(preset="tiny-sd", prompt="a rock", image=small, mask=centre_mask(256, 256)),
        TextToImage(preset="tiny-flux", prompt="a city skyline at night", seed=3),
        ImageToImage(preset="tiny-flux", prompt="golden hour", image=small, strength=0.8),
        Inpaint(preset="tiny-flux", prompt="sky", image=small, mask=centre_mask(256, 256)),
        TextToVideo(preset="tiny-wan", prompt="waves on a beach", seed=4),
        ImageToVideo(preset="tiny-wan-i2v", prompt="steam rising", image=photo, seed=5),
        ReferenceToVideo(preset="tiny-wan-i2v", prompt="cup on a table", reference=photo),
    ]


@pytest.mark.parametrize(
    "index",
    range(9),
    ids=[
        "sd-t2i",
        "sd-i2i",
        "sd-inpaint",
        "flux-t2i",
        "flux-i2i",
        "flux-inpaint",
        "wan-t2v",
        "wan-i2v",
        "wan-r2v",
    ],
)
def test_task_output_timings_and_params(engine, photo, index):
    request = requests(photo)[index]
    result = engine.generate(request, timeout=120)
    preset = load(request.preset, engine.model_dir, engine.device).preset
    if request.task.is_video:
        assert len(result.images) == preset.num_frames and result.fps == preset.fps
        assert result.params["num_frames"] == preset.num_frames
    else:
        assert len(result.images) == 1 and result.fps is None
    assert all(im.size == (preset.width, preset.height) for im in result.images)
    assert set(result.timings) == STAGES
    assert result.timings["denoising"] > 0 and result.timings["decoding"] > 0
    if request.task in (Task.IMAGE_TO_IMAGE, Task.INPAINT):
        assert result.timings["image_encoding"] > 0
    p = result.params
    assert (p["model_id"], p["task"], p["seed"], p["prompt"]) == (
        request.preset,
        request.task.value,
        request.seed,
        request.prompt,
    )
    assert (p["steps"], p["guidance"], p["width"], p["height"]) == (
        preset.steps,
        preset.guidance,
        preset.width,
        preset.height,
    )
    assert p["model_revision"] == "offline-1" and p["engine_version"] and p["dtype"] == "float32"
    assert p["inputs_sha256"] == {n: image_sha256(i) for n, i in request.inputs().items()}
    pixels = np.asarray(result.images[0], dtype=np.float32)
    assert pixels.std() > 1  # an image, not a flat fill


def test_same_seed_same_bits_other_seed_other_image(engine):
    request = TextToImage(preset="tiny-sd", prompt="desert at noon", seed=11)
    a, b = engine.generate(request), engine.generate(request)
    assert a.images[0].tobytes() == b.images[0].tobytes()
    other = engine.generate(TextToImage(preset="tiny-sd", prompt="desert at noon", seed=12))
    assert other.images[0].tobytes() != a.images[0].tobytes()


@pytest.mark.parametrize("preset", ["tiny-sd", "tiny-flux"])
def test_engine_equals_plain_diffusers(engine, preset):
    """No acceleration yet: the engine's output is the plain pipeline's, bit for bit."""
    request = TextToImage(preset=preset, prompt="snowy peaks", seed=21, negative_prompt="")
    model = load(preset, engine.model_dir, engine.device)
    p = model.preset
    plain = model.pipeline(Task.TEXT_TO_IMAGE)(
        prompt="snowy peaks",
        num_inference_steps=p.steps,
        guidance_scale=p.guidance,
        height=p.height,
        width=p.width,
        generator=torch.Generator().manual_seed(21),
    ).images[0]
    assert engine.generate(request).images[0].tobytes() == plain.tobytes()


def test_reference_to_video_starts_from_the_reference_subject(engine, photo):
    request = ReferenceToVideo(
        preset="tiny-wan-i2v", prompt="cup", reference=photo, subject_scale=0.8
    )
    frame = np.asarray(first_frame(request, engine.segmenter, 128, 128), dtype=np.int32)
    # The espresso cup's dark red saucer fills the lower middle; the corners are the backdrop.
    centre = frame[80:100, 54:74].reshape(-1, 3).mean(axis=0)
    assert centre[0] > centre[2] + 40, "the red cup is not in the middle of the first frame"
    corner = frame[2:10, 2:10].reshape(-1, 3).mean(axis=0)
    assert np.abs(corner - corner.mean()).max() < 6 and corner.mean() > 180  # neutral, light
