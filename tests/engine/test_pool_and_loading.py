"""Model pool eviction, and loading: offline, from a saved folder, and the failure messages."""

from __future__ import annotations

import pytest
import torch
from PIL import Image

from engine import Inpaint, InvalidRequest, ModelUnavailable, Task, TextToImage, TextToVideo
from engine.loading import REVISION_FILE, load
from engine.pool import ModelPool
from engine.presets import get_preset
from engine.runner import resolve

CPU = torch.device("cpu")


def test_pool_evicts_least_recently_used(tmp_path):
    loads = []

    def loader(preset_id):
        loads.append(preset_id)
        return load(preset_id, tmp_path, CPU)

    sizes = {p: load(p, tmp_path, CPU).nbytes for p in ("tiny-sd", "tiny-flux", "tiny-wan")}
    # Room for the two largest together, not for all three.
    budget = sorted(sizes.values())[-1] + sorted(sizes.values())[-2] + 1
    pool = ModelPool(loader, CPU, budget_bytes=budget)
    pool.get("tiny-sd")
    pool.get("tiny-flux")
    pool.get("tiny-sd")  # now tiny-flux is the least recently used
    pool.get("tiny-wan")
    assert pool.resident == ["tiny-sd", "tiny-wan"]
    assert pool.get("tiny-sd") is pool.get("tiny-sd")  # resident: no reload
    pool.get("tiny-flux")  # dropped earlier (on CPU there is nowhere to offload): loads again
    assert loads == ["tiny-sd", "tiny-flux", "tiny-wan", "tiny-flux"]
    assert "tiny-sd" not in pool.resident or "tiny-wan" not in pool.resident


def test_model_larger_than_budget(tmp_path):
    pool = ModelPool(lambda p: load(p, tmp_path, CPU), CPU, budget_bytes=1000)
    with pytest.raises(ModelUnavailable, match=r"tiny-sd needs .* GiB, more than the engine's"):
        pool.get("tiny-sd")


def test_saved_pipeline_loads_from_a_folder_with_the_same_output(tmp_path, engine):
    built = load("tiny-sd", tmp_path, CPU)
    folder = tmp_path / "my-model"
    built.base.save_pretrained(folder, safe_serialization=True)
    (folder / REVISION_FILE).write_text("0123abcd\n")
    # A folder's defaults are its family's (sd-turbo's), so the test states every value.
    request = dict(prompt="lake at dawn", seed=5, steps=4, guidance=5.0, width=256, height=256)
    from_folder = engine.generate(TextToImage(preset=str(folder), **request))
    builtin = engine.generate(TextToImage(preset="tiny-sd", **request))
    assert from_folder.images[0].tobytes() == builtin.images[0].tobytes()
    assert from_folder.params["model_revision"] == "0123abcd"


def test_pickled_weights_are_refused(tmp_path):
    built = load("tiny-sd", tmp_path, CPU)
    folder = tmp_path / "pickled"
    built.base.save_pretrained(folder)
    weights = folder / "unet" / "diffusion_pytorch_model.safetensors"
    weights.unlink()  # the UNet only as a pickle, as many old checkpoints ship
    torch.save(built.base.unet.state_dict(), weights.with_suffix(".bin"))
    with pytest.raises(ModelUnavailable, match=r"cannot load .*safetensors"):
        load(str(folder), tmp_path, CPU)


def test_missing_hub_model_names_the_fix(tmp_path):
    with pytest.raises(ModelUnavailable) as error:
        load("flux-schnell", tmp_path, CPU)
    message = str(error.value)
    assert "flux-schnell (black-forest-labs/FLUX.1-schnell" in message
    assert "spotforge models pull flux-schnell" in message and "tiny-sd" in message


def test_unknown_preset_and_unsupported_task(engine):
    with pytest.raises(ModelUnavailable, match="unknown model preset 'sd-9'; known: sd-turbo"):
        engine.submit(TextToImage(preset="sd-9", prompt="x"))
    with pytest.raises(
        ModelUnavailable,
        match="tiny-sd cannot do text-to-video; it does: text-to-image, image-to-image, inpaint",
    ):
        engine.submit(TextToVideo(preset="tiny-sd", prompt="x"))


def test_every_preset_records_licence_and_tasks():
    from engine.presets import PRESETS

    for preset in PRESETS.values():
        assert preset.licence and preset.tasks
    assert get_preset("flux-schnell").licence == "Apache-2.0"
    assert {t for p in PRESETS.values() if p.offline for t in p.tasks} == set(Task)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (dict(prompt="   "), "the prompt is empty"),
        (dict(prompt="x" * 2001), "the prompt is too long: 2001 characters, at most 2000"),
        (dict(prompt="x", width=250), "multiples of 16; got 250x256"),
        (dict(prompt="x", width=8), "width must be between 64 and 4096 pixels, not 8"),
        (dict(prompt="x", steps=0), "steps must be between 1 and 500, not 0"),
        (dict(prompt="x", seed=-1), "the seed must be between 0 and 2\\*\\*63-1"),
    ],
)
def test_invalid_requests(fields, message):
    with pytest.raises(InvalidRequest, match=message):
        resolve(TextToImage(preset="tiny-sd", **fields), get_preset("tiny-sd"))


def test_video_frame_count_and_mask_size(photo):
    with pytest.raises(InvalidRequest, match="num_frames must be 4k\\+1"):
        resolve(TextToVideo(preset="tiny-wan", prompt="x", num_frames=10), get_preset("tiny-wan"))
    with pytest.raises(InvalidRequest, match="the mask is 10x10 but the image is 451x300"):
        Inpaint(
            preset="tiny-sd",
            prompt="x",
            image=photo.resize((451, 300)),
            mask=Image.new("L", (10, 10)),
        )


def test_prompt_longer_than_the_model_reads(engine):
    long_prompt = "a very long description of a mountain trail " * 3  # > 77 byte tokens
    handle = engine.submit(TextToImage(preset="tiny-sd", prompt=long_prompt))
    with pytest.raises(
        InvalidRequest,
        match=r"the prompt is too long for tiny-sd: 1\d\d tokens, "
        "it reads at most 77",
    ):
        handle.result(timeout=60)
