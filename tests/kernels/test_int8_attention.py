"""int8 attention: the quantisation kernel and the attention kernel against the torch
reference of the same quantised algorithm (tight), and that algorithm against exact attention
(the error budget stated in the module docstring)."""

import pytest
import torch
import torch.nn.functional as F

from kernels.attention import attention_reference
from kernels.int8_attention import (
    int8_attention,
    int8_attention_reference,
    int8_attention_triton,
    quantize_per_block_reference,
    quantize_per_block_triton,
)
from tests.kernels.helpers import ATTENTION_SHAPES, DOT_DTYPES, DTYPES, assert_close, qkv


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subtract_mean", [False, True])
@pytest.mark.parametrize(("n_tokens", "block"), [(32, 16), (37, 16), (9, 16), (50, 32)])
def test_quantize_kernel_is_bit_exact(n_tokens, block, subtract_mean, dtype):
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(2, 3, n_tokens, 40, generator=g) * 4 + 1).to(dtype)
    mean = x.float().mean(dim=2) if subtract_mean else None
    x_int8, scales = quantize_per_block_triton(x, block, 0.7, mean)
    ref_int8, ref_scales = quantize_per_block_reference(x, block, 0.7, mean)
    assert scales.shape == (2, 3, -(-n_tokens // block))
    assert torch.equal(x_int8, ref_int8)
    assert torch.equal(scales, ref_scales)


def test_quantize_reference_rounds_to_nearest_within_the_block_scale():
    x = torch.randn(1, 2, 37, 16, generator=torch.Generator().manual_seed(0))
    x_int8, scales = quantize_per_block_reference(x, 16)
    per_token = scales.repeat_interleave(16, dim=-1)[..., :37, None]
    assert x_int8.abs().max() == 127
    assert ((x_int8.float() * per_token - x).abs() <= per_token / 2 + 1e-7).all()


def test_quantize_all_zero_block_stays_finite():
    x_int8, scales = quantize_per_block_triton(torch.zeros(1, 1, 16, 32), 16)
    assert not x_int8.any()
    assert torch.isfinite(scales).all()


@pytest.mark.parametrize("dtype", DOT_DTYPES)
@pytest.mark.parametrize("shape", ATTENTION_SHAPES)
def test_kernel_matches_quantised_reference(shape, dtype):
    q, k, v = qkv(shape, dtype)
    k = k + 3  # a shared offset, which smoothing must remove
    out = int8_attention_triton(q, k, v, block_m=16, block_n=16)
    assert_close(out, int8_attention_reference(q, k, v, block_m=16, block_n=16))


def test_kernel_with_default_blocks_and_scale():
    q, k, v = qkv((1, 2, 70, 77, 64), torch.float16)
    assert_close(int8_attention_triton(q, k, v, 0.2), int8_attention_reference(q, k, v, 0.2))


def test_dispatcher_uses_quantised_reference_on_cpu():
    q, k, v = qkv((1, 2, 19, 23, 64), torch.float16)
    assert torch.equal(int8_attention(q, k, v), int8_attention_reference(q, k, v))


def _peaked(q, k, v):
    return q * 3, k, v


def _k_outlier(q, k, v):
    k = k.clone()
    k[..., 3] += 20
    return q, k, v


def _q_outlier(q, k, v):
    q = q.clone()
    q[..., 5] *= 10
    return q, k, v


# (inputs, min cosine, max |error| / max |exact|): the module docstring's measured figures are
# 0.99992 / 1.2 %, 0.99968 / 3.2 %, 0.99992 / 1.2 % and 0.99851 / 8.6 %.
ERROR_BUDGET = [
    pytest.param(lambda q, k, v: (q, k, v), 0.999, 0.03, id="normal"),
    pytest.param(_peaked, 0.999, 0.06, id="peaked"),
    pytest.param(_k_outlier, 0.999, 0.03, id="k-outlier-channel"),
    pytest.param(_q_outlier, 0.998, 0.15, id="q-outlier-channel"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize(("make", "min_cosine", "max_rel_error"), ERROR_BUDGET)
def test_error_against_exact_attention(make, min_cosine, max_rel_error, dtype):
    q, k, v = (t.to(dtype) for t in make(*qkv((1, 4, 1024, 1024, 64), torch.float32)))
    exact = attention_reference(q.float(), k.float(), v.float())
    approx = int8_attention_reference(q, k, v).float()
    assert F.cosine_similarity(approx.flatten(), exact.flatten(), dim=0) >= min_cosine
    assert (approx - exact).abs().max() <= max_rel_error * exact.abs().max()
