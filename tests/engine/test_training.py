"""Training mini-sd and mini-dit: seeded, resumable after a kill, guarded against mixing plans."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from engine.training.model import tokenizer
from engine.training.train import Plan, read_losses, train

# A plan small enough for a test: every stage runs, the UNet stage long enough to kill.
SMALL = Plan(
    images=48,
    vae_steps=4,
    vae_batch=2,
    vae_crop=32,
    vae_whole_steps=2,
    vae_whole_batch=2,
    unet_steps=40,
    unet_batch=4,
    unet_tune_steps=3,
    decoder_steps=2,
    decoder_batch=2,
    warmup=2,
    checkpoint_every=5,
)
TRAIN = """
import json, sys
from pathlib import Path
from engine.training.train import Plan, train
train(Plan(**json.loads(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3]), threads=1)
"""


def run_training(plan: Plan, work, out) -> subprocess.Popen:
    work.mkdir(parents=True, exist_ok=True)
    with (work.parent / f"{work.name}.log").open("a") as log:  # progress bars, errors
        return subprocess.Popen(
            [sys.executable, "-c", TRAIN, json.dumps(asdict(plan)), str(work), str(out)],
            stdout=log,
            stderr=log,
        )


def log(tmp_path, name: str) -> str:
    return (tmp_path / f"{name}.log").read_text()


def unet_weights(out) -> dict[str, torch.Tensor]:
    return load_file(out / "unet" / "diffusion_pytorch_model.safetensors")


def test_a_killed_run_resumes_to_the_same_weights(tmp_path):
    straight = run_training(SMALL, tmp_path / "a", tmp_path / "a-out")
    killed = run_training(SMALL, tmp_path / "b", tmp_path / "b-out")
    checkpoint = tmp_path / "b" / "unet.ckpt"
    deadline = time.monotonic() + 300
    while not checkpoint.exists():
        assert killed.poll() is None and time.monotonic() < deadline, log(tmp_path, "b")
        time.sleep(0.05)
    os.kill(killed.pid, signal.SIGKILL)  # mid-way through the UNet stage
    killed.wait()
    assert not (tmp_path / "b-out").exists()
    resumed = run_training(SMALL, tmp_path / "b", tmp_path / "b-out")
    for process, name in ((straight, "a"), (resumed, "b")):
        assert process.wait(timeout=600) == 0, log(tmp_path, name)
    a, b = unet_weights(tmp_path / "a-out"), unet_weights(tmp_path / "b-out")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    steps = [row[0] for row in read_losses(tmp_path / "b", "unet")]
    assert steps == list(range(SMALL.unet_steps))  # logged once each, none lost to the kill


def test_a_work_directory_keeps_its_plan(tmp_path):
    tiny = Plan(
        images=8,
        vae_steps=1,
        vae_whole_steps=1,
        unet_steps=1,
        unet_tune_steps=1,
        unet_batch=2,
        vae_crop=32,
        decoder_steps=1,
        decoder_batch=2,
    )
    train(tiny, tmp_path / "w", tmp_path / "out", threads=1)
    with pytest.raises(ValueError, match="different plan \\(seed differ\\)"):
        train(Plan(**{**asdict(tiny), "seed": 1}), tmp_path / "w", tmp_path / "out")


def test_the_tokenizer_reads_words_not_case_or_punctuation():
    tok = tokenizer()
    plain = tok("city skyline at night cloudy").input_ids
    assert tok("City Skyline at NIGHT, cloudy!").input_ids == plain
    assert tok.unk_token_id not in plain
    assert tok("skyline of Tokyo").input_ids.count(tok.unk_token_id) == 2


def test_mini_dit_trains_on_mini_sds_autoencoder_into_a_plain_sd3_pipeline(tmp_path):
    from diffusers import StableDiffusion3Pipeline

    from engine.loading import BUNDLED_DIR
    from engine.training.train import train_dit

    plan = Plan(images=16, dit_steps=4, dit_batch=2, warmup=1, checkpoint_every=2)
    out = train_dit(plan, tmp_path / "w", tmp_path / "out", BUNDLED_DIR / "mini-sd", threads=1)
    assert [row[0] for row in read_losses(tmp_path / "w", "dit")] == [0, 1, 2, 3]
    weights = load_file(out / "transformer" / "diffusion_pytorch_model.safetensors")
    pipe = StableDiffusion3Pipeline.from_pretrained(
        out, text_encoder_3=None, tokenizer_3=None, torch_dtype=torch.float32
    )
    image = pipe("lake at night", num_inference_steps=2, max_sequence_length=0).images[0]
    assert image.size == (128, 128)
    # The autoencoder is mini-sd's, untouched but for SD3's (zero) latent shift.
    vae = load_file(out / "vae" / "diffusion_pytorch_model.safetensors")
    base = load_file(BUNDLED_DIR / "mini-sd" / "vae" / "diffusion_pytorch_model.safetensors")
    assert all(torch.equal(vae[k], base[k]) for k in base)
    # Rerun on the finished work directory: nothing is trained again, the same weights come out.
    train_dit(plan, tmp_path / "w", tmp_path / "out", BUNDLED_DIR / "mini-sd", threads=1)
    again = load_file(out / "transformer" / "diffusion_pytorch_model.safetensors")
    assert all(torch.equal(weights[k], again[k]) for k in weights)


def test_the_upscaler_trains_into_a_model_that_draws_1080p_from_a_base_picture(tmp_path):
    """Model v2's second stage: a base-size landmark picture in, a 1920x1080 one out, saved and
    loaded the diffusers way, resumable like every training here."""
    from engine.training import upscaler_card
    from engine.training.landmarks import TRAIN_SIZE, LandmarkParams, draw
    from engine.training.train_upscaler import UpscalerPlan, train_upscaler
    from engine.upscaling import SceneUpscaler, upscale

    plan = UpscalerPlan(scenes=2, crops_per_scene=4, batch=2, net_steps=3,
                        adversarial_steps=2, warmup=1, checkpoint_every=2)  # fmt: skip
    out = train_upscaler(plan, tmp_path / "w", tmp_path / "out", threads=1)
    assert [row[0] for row in read_losses(tmp_path / "w", "sr-net")] == [0, 1, 2]
    assert [row[0] for row in read_losses(tmp_path / "w", "sr-adversarial")] == [0, 1]
    model = SceneUpscaler.from_pretrained(out)
    base = draw(LandmarkParams("Manhattan", "night", "clear", 3), TRAIN_SIZE)
    image = upscale(model, base, (1920, 1080))
    assert image.size == (1920, 1080)
    assert upscale(model, base, (1920, 1080)).tobytes() == image.tobytes()  # one pass, no noise
    # Rerun on the finished work directory: nothing is trained again, the same weights come out.
    weights = load_file(out / "diffusion_pytorch_model.safetensors")
    train_upscaler(plan, tmp_path / "w", tmp_path / "out", threads=1)
    again = load_file(out / "diffusion_pytorch_model.safetensors")
    assert all(torch.equal(weights[k], again[k]) for k in weights)
    # The card's measure: detail lines and fidelity to the scene drawn at 1080p, both ways.
    found = upscaler_card.measure(model, upscaler_card.evaluation_params()[:1])
    assert all(0 < found[f"{kind}_lines"][0] <= 1080 for kind in ("enlarged", "upscaled"))
    # A bicubic enlargement keeps the scene's colours (with its channels swapped it reads 9.2 dB,
    # in grey 13.5); the 1080p drawing's fine detail, which no 256x144 picture holds, costs it
    # the rest (18.3 dB since a near meadow's blades stand out over their shade; over 20 before).
    assert found["enlarged_psnr"][0] > 16
    # Five steps from random weights add noise to the enlargement, and its fidelity says so.
    assert found["upscaled_psnr"][0] < found["enlarged_psnr"][0]


def test_training_inputs_are_blurred_and_noised_each_by_its_own_amount():
    """What makes the upscaler sharpen landmark-dit's soft pictures and not only drawings."""
    from engine.training.train_upscaler import UpscalerPlan, _degraded

    x = torch.zeros(4, 3, 32, 32)
    x[:, :, :, 16:] = 1.0  # a hard edge
    plain = _degraded(x, UpscalerPlan(blur=0.0, noise=0.0), torch.Generator().manual_seed(0))
    torch.testing.assert_close(plain, x)
    soft = _degraded(x, UpscalerPlan(blur=2.0, noise=0.0), torch.Generator().manual_seed(0))
    steepness = (soft[:, 0, 0, 16] - soft[:, 0, 0, 15]).tolist()
    assert all(s < 1.0 for s in steepness) and len(set(steepness)) == 4
    noisy = _degraded(x, UpscalerPlan(blur=0.0, noise=0.1), torch.Generator().manual_seed(0))
    spread = (noisy - x).std(dim=(1, 2, 3))
    assert 0 < float(spread.min()) < float(spread.max()) < 0.1


def test_the_adversarial_term_trains_each_player_against_the_other():
    """The decoder is pushed by the critic and the critic by the pictures, in one backward
    pass: the decoder's term must not train the critic to be fooled, nor the critic's term
    train the decoder."""
    from engine.training.adversarial import adversarial_loss, patch_critic

    torch.manual_seed(0)
    decoder, critic = torch.nn.Conv2d(4, 3, 3, padding=1), patch_critic()
    z, real = torch.randn(2, 4, 32, 32), torch.rand(2, 3, 32, 32) * 2 - 1

    def grads(with_adversary: bool):
        for module in (decoder, critic):
            module.zero_grad()
        fake = decoder(z)
        reconstruction = F.l1_loss(fake, real)
        if with_adversary:
            loss = adversarial_loss(critic, real, fake, reconstruction, decoder.weight, 0.5)
        else:  # the two terms each player should see alone
            judged = F.relu(1 - critic(real)).mean() + F.relu(1 + critic(fake.detach())).mean()
            loss = reconstruction + judged
        loss.backward()
        return decoder.weight.grad.clone(), [p.grad.clone() for p in critic.parameters()]

    decoder_both, critic_both = grads(True)
    decoder_alone, critic_alone = grads(False)
    for both, alone in zip(critic_both, critic_alone, strict=True):
        torch.testing.assert_close(both, alone)  # only its own hinge loss trains the critic
    assert not torch.allclose(decoder_both, decoder_alone)  # the critic does push the decoder


def test_landmark_dit_trains_on_named_places_into_a_plain_16_9_sd3_pipeline(tmp_path):
    """Model v2's first stage: captions that name a place, 256x144 pictures, drawn through
    diffusers' own SD3 pipeline on a DC autoencoder."""
    from diffusers import AutoencoderDC, StableDiffusion3Pipeline

    from engine.training import landmark_dit

    # The transformer under bfloat16 autocast: the plan option `precision_bench` times.
    plan = landmark_dit.LandmarkPlan(images=8, vae_steps=2, vae_batch=2, dit_steps=2,
                                     dit_tune_steps=1, dit_batch=2, warmup=1,
                                     checkpoint_every=2, dit_precision="bf16")  # fmt: skip
    out = landmark_dit.train(plan, tmp_path / "w", tmp_path / "out", threads=1)
    assert [row[0] for row in read_losses(tmp_path / "w", "dit")] == [0, 1]
    # The warm restart follows, from where `dit` ended, with a fresh schedule.
    assert [row[0] for row in read_losses(tmp_path / "w", "dit-tune")] == [0]
    pipe = StableDiffusion3Pipeline.from_pretrained(
        out, text_encoder_3=None, tokenizer_3=None, torch_dtype=torch.float32
    )
    assert isinstance(pipe.vae, AutoencoderDC) and pipe.vae_scale_factor == 8
    # The place's words are the model's own; a word it never saw is not.
    ids = pipe.tokenizer("Mission Peak above the bay, at night. Unicorns").input_ids
    assert ids.count(pipe.tokenizer.unk_token_id) == 1 and len(ids) == 10
    run = dict(num_inference_steps=2, max_sequence_length=0, width=256, height=144)
    image = pipe("manhattan avenue with yellow cabs at night", **run).images[0]
    assert image.size == (256, 144)
    # Latents of unit variance: the scale fitted to the training scenes is saved with it.
    latents = pipe.vae.encode(torch.rand(1, 3, 144, 256) * 2 - 1).latent
    assert latents.shape == (1, 16, 18, 32) and pipe.vae.config.scaling_factor > 0


def test_landmark_dits_decoder_trains_on_alone_on_its_encoder(tmp_path):
    """The decoder stage: landmark-dit's decoder trained on, its encoder unchanged, so its
    transformer's latents mean what they meant; the preset still loads the diffusers way and
    draws; a rerun trains nothing again, and an autoencoder this stage already trained on is
    refused with a sentence; its card says what it keeps of a drawing."""
    import shutil

    from diffusers import StableDiffusion3Pipeline

    from engine.loading import BUNDLED_DIR
    from engine.training.landmark_decoder import DecoderPlan, train_decoder, write_decoder_card
    from engine.training.landmarks import LandmarkParams

    preset = tmp_path / "landmark-dit"
    shutil.copytree(BUNDLED_DIR / "landmark-dit", preset)
    (preset / "vae" / "README.md").unlink(missing_ok=True)  # as landmark-dit's training wrote it
    plan = DecoderPlan(images=4, decoder_steps=3, batch=2, crop=32, warmup=1, checkpoint_every=2)
    trained = train_decoder(plan, tmp_path / "w", preset, preset, threads=1)
    assert [row[0] for row in read_losses(tmp_path / "w", "dc-decoder")] == [0, 1, 2]
    before = load_file(BUNDLED_DIR / "landmark-dit" / "vae" / "diffusion_pytorch_model.safetensors")
    after = load_file(preset / "vae" / "diffusion_pytorch_model.safetensors")
    encoder = [k for k in before if k.startswith("encoder.")]
    assert encoder and all(torch.equal(before[k], after[k]) for k in encoder)
    assert not all(torch.equal(before[k], after[k]) for k in before if k.startswith("decoder."))
    config = json.loads((preset / "vae" / "config.json").read_text())
    base_config = json.loads((BUNDLED_DIR / "landmark-dit" / "vae" / "config.json").read_text())
    assert config["scaling_factor"] == base_config["scaling_factor"]  # the latents' scale kept
    pipe = StableDiffusion3Pipeline.from_pretrained(
        preset, text_encoder_3=None, tokenizer_3=None, torch_dtype=torch.float32
    )
    run = dict(num_inference_steps=2, max_sequence_length=0, width=256, height=144)
    assert pipe("manhattan avenue with yellow cabs at night", **run).images[0].size == (256, 144)
    held_out = [LandmarkParams("Manhattan", "night", "clear", 5)]
    summary = write_decoder_card(plan, tmp_path / "w", preset, trained, "test", held_out)
    card = (preset / "vae" / "README.md").read_text()
    assert "| its round trip |" in card and "Apache-2.0" in card
    assert 0 < summary["decoded_lines"] <= 1080 and summary["psnr"] > 20  # three small steps
    # Rerun with its work folder: nothing is trained again, the same weights come out.
    train_decoder(plan, tmp_path / "w", preset, preset, threads=1)
    again = load_file(preset / "vae" / "diffusion_pytorch_model.safetensors")
    assert all(torch.equal(after[k], again[k]) for k in after)
    # A fresh work folder on the decoder already trained on: it would be trained twice.
    with pytest.raises(ValueError, match="already trained on by this stage"):
        train_decoder(plan, tmp_path / "w2", preset, preset, threads=1)


def test_landmark_captions_name_the_place_in_every_form_but_the_empty_one():
    from engine.training import landmark_dit
    from engine.training.landmarks import SIGNATURES

    params = landmark_dit.scene(1)
    words = SIGNATURES[params.geography].words
    captions = {f: landmark_dit.caption(params, f) for f in landmark_dit.CAPTION_FORMS}
    assert captions.pop("empty") == ""
    assert all(words in c for c in captions.values())
    # Every combination of geography, light and weather equally often.
    combos = {(s.geography, s.time, s.weather) for s in map(landmark_dit.scene, range(162))}
    assert len(combos) == len(SIGNATURES) * 3 * 2
