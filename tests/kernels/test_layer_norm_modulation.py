"""Fused LayerNorm + adaLN modulation against the torch formula, under the Triton interpreter."""

import pytest
import torch

from kernels.layer_norm_modulation import (
    layer_norm_modulation,
    layer_norm_modulation_reference,
    layer_norm_modulation_triton,
)
from tests.kernels.helpers import DTYPES, assert_close


def inputs(batch, tokens, channels, dtype, mod_shape="BC"):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, tokens, channels, generator=g) * 2 + 5
    shift, scale = torch.randn(2, batch, channels, generator=g)
    if mod_shape == "B1C":
        shift, scale = shift[:, None], scale[:, None]
    return x.to(dtype), shift.to(dtype), scale.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mod_shape", ["BC", "B1C"])
@pytest.mark.parametrize(("batch", "tokens", "channels"), [(2, 9, 48), (1, 5, 100), (3, 1, 16)])
def test_kernel_matches_reference(batch, tokens, channels, mod_shape, dtype):
    x, shift, scale = inputs(batch, tokens, channels, dtype, mod_shape)
    out = layer_norm_modulation_triton(x, shift, scale)
    assert_close(out, layer_norm_modulation_reference(x, shift, scale))


def test_strided_fp32_modulation_of_half_activations():
    """A DiT's `emb.chunk(6, dim=1)` gives strided fp32 views next to fp16 activations."""
    x, _, _ = inputs(2, 7, 32, torch.float16)
    emb = torch.randn(2, 6 * 32, generator=torch.Generator().manual_seed(1))
    shift, scale = emb.chunk(6, dim=1)[:2]
    out = layer_norm_modulation_triton(x, shift, scale, eps=1e-5)
    assert out.dtype == torch.float16
    assert_close(out, layer_norm_modulation_reference(x, shift, scale, eps=1e-5))


def test_dispatcher_uses_reference_on_cpu():
    x, shift, scale = inputs(2, 9, 48, torch.float16, "B1C")
    assert torch.equal(
        layer_norm_modulation(x, shift, scale), layer_norm_modulation_reference(x, shift, scale)
    )


def test_modulation_shape_is_checked():
    x, shift, scale = inputs(2, 9, 48, torch.float32)
    with pytest.raises(ValueError, match="shift"):
        layer_norm_modulation_triton(x, shift[:1], scale)
