"""Our Triton kernels swapped into real diffusers models (run by Triton's interpreter here): the
swapped models compute what the originals compute, and every swap is undone afterwards."""

from __future__ import annotations

import pytest
import torch

from engine.acceleration.kernel_swaps import KernelSet, kernels_applied
from engine.loading import load
from engine.requests import Task


@pytest.fixture(scope="module")
def mini_sd(tmp_path_factory):
    return load("mini-sd", tmp_path_factory.mktemp("models"), torch.device("cpu")).pipeline(
        Task.TEXT_TO_IMAGE
    )


def unet_inputs(pipe, batch: int = 2):
    g = torch.Generator().manual_seed(0)
    latents = torch.randn(batch, 4, 16, 16, generator=g)
    ids = pipe.tokenizer(["lake at night"] * batch, padding="max_length", return_tensors="pt")
    states = pipe.text_encoder(ids.input_ids)[0]
    return latents, torch.tensor([500, 20]), states


@pytest.mark.parametrize("triton", [True, False], ids=["triton", "dispatcher"])
def test_the_unet_with_kernels_matches_plain_diffusers(mini_sd, triton):
    latents, t, states = unet_inputs(mini_sd)
    unet = mini_sd.unet
    with torch.inference_mode():
        plain = unet(latents, t, states).sample
        with kernels_applied(unet, triton=triton) as swapped:
            fused = unet(latents, t, states).sample
    assert swapped >= 10  # every resnet and attention of the UNet
    torch.testing.assert_close(fused, plain, rtol=1e-4, atol=1e-4)


def test_the_vae_decoder_with_fused_norms_matches(mini_sd):
    latents = torch.randn(1, 4, 8, 8, generator=torch.Generator().manual_seed(1))
    vae = mini_sd.vae
    with torch.inference_mode():
        plain = vae.decode(latents).sample
        with kernels_applied(vae.decoder, KernelSet(attention=False), triton=True) as swapped:
            fused = vae.decode(latents).sample
    assert swapped > 0
    torch.testing.assert_close(fused, plain, rtol=1e-4, atol=1e-4)


def test_int8_attention_stays_close_but_is_not_exact(mini_sd):
    latents, t, states = unet_inputs(mini_sd)
    with torch.inference_mode():
        plain = mini_sd.unet(latents, t, states).sample
        with kernels_applied(mini_sd.unet, KernelSet(group_norm_silu=False, int8=True)):
            quantised = mini_sd.unet(latents, t, states).sample
    error = (quantised - plain).norm() / plain.norm()
    assert 0 < error < 0.02


def test_swaps_are_undone_after_an_error(mini_sd):
    unet = mini_sd.unet
    before = {name: type(m) for name, m in unet.named_modules()}
    processors = unet.attn_processors
    with pytest.raises(RuntimeError, match="boom"), kernels_applied(unet):
        assert {name: type(m) for name, m in unet.named_modules()} != before
        raise RuntimeError("boom")
    assert {name: type(m) for name, m in unet.named_modules()} == before
    assert unet.attn_processors == processors


def test_flux_blocks_take_the_fused_modulation(tmp_path):
    transformer = (
        load("tiny-flux", tmp_path, torch.device("cpu")).pipeline(Task.TEXT_TO_IMAGE).transformer
    )
    g = torch.Generator().manual_seed(0)
    cfg = transformer.config
    tokens, text = 16, 8
    inputs = dict(
        hidden_states=torch.randn(1, tokens, cfg.in_channels, generator=g),
        encoder_hidden_states=torch.randn(1, text, cfg.joint_attention_dim, generator=g),
        pooled_projections=torch.randn(1, cfg.pooled_projection_dim, generator=g),
        timestep=torch.tensor([0.5]),
        img_ids=torch.zeros(tokens, 3),
        txt_ids=torch.zeros(text, 3),
        guidance=torch.tensor([3.5]) if cfg.guidance_embeds else None,
    )
    with torch.inference_mode():
        plain = transformer(**inputs).sample
        with kernels_applied(transformer, triton=True) as swapped:
            fused = transformer(**inputs).sample
    # Double-stream blocks have two adaLN-Zero norms (image and text), single-stream blocks one.
    double, single = transformer.transformer_blocks, transformer.single_transformer_blocks
    assert swapped == 2 * len(double) + len(single)
    torch.testing.assert_close(fused, plain, rtol=1e-4, atol=1e-4)
