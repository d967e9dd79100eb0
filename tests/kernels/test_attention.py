"""Fused attention kernel against the fp32 reference, under the Triton interpreter."""

import importlib

import pytest
import torch

from kernels.attention import attention, attention_reference, attention_triton
from tests.kernels.helpers import ATTENTION_SHAPES, DOT_DTYPES, assert_close, qkv

# `kernels.attention` the attribute is the dispatcher that kernels/__init__ re-exports.
attention_module = importlib.import_module("kernels.attention")


@pytest.mark.parametrize("dtype", DOT_DTYPES)
@pytest.mark.parametrize("shape", ATTENTION_SHAPES)
def test_kernel_matches_reference(shape, dtype):
    q, k, v = qkv(shape, dtype)
    out = attention_triton(q, k, v, block_m=16, block_n=16)
    assert_close(out, attention_reference(q, k, v))


@pytest.mark.parametrize("dtype", DOT_DTYPES)
@pytest.mark.parametrize("shape", [(1, 2, 37, 37, 64), (1, 1, 20, 45, 32), (1, 1, 40, 24, 32)])
def test_causal_matches_reference(shape, dtype):
    q, k, v = qkv(shape, dtype)
    out = attention_triton(q, k, v, causal=True, block_m=16, block_n=16)
    assert_close(out, attention_reference(q, k, v, causal=True))


def test_default_blocks_explicit_scale_and_strided_inputs():
    """Default tiles (one partial query tile here) and [B, N, H, D] activations viewed as
    [B, H, N, D] without a copy, as diffusers lays them out."""
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, n, 2, 64, generator=g).transpose(1, 2) for n in (33, 70, 70))
    out = attention_triton(q, k, v, scale=0.3)
    assert out.is_contiguous()
    assert_close(out, attention_reference(q, k, v, scale=0.3))


def test_dispatcher_uses_reference_on_cpu():
    q, k, v = qkv((1, 2, 19, 23, 64), torch.float16)
    assert torch.equal(attention(q, k, v), attention_reference(q, k, v))


@pytest.mark.parametrize(("head_dim", "uses_triton"), [(64, True), (512, False)])
def test_dispatcher_on_gpu_tensors(monkeypatch, head_dim, uses_triton):
    """Where Triton is usable, head dims up to 256 take the kernel, larger ones the reference."""
    calls = []
    monkeypatch.setattr(attention_module, "triton_usable", lambda *tensors: True)
    monkeypatch.setattr(attention_module, "attention_triton", lambda *a: calls.append(a) or a[0])
    q, k, v = qkv((1, 1, 4, 4, head_dim), torch.float32)
    attention(q, k, v)
    assert bool(calls) == uses_triton


def test_mismatched_shapes_are_rejected():
    q, k, v = qkv((1, 2, 8, 8, 32), torch.float32)
    with pytest.raises(ValueError, match="disagree"):
        attention_triton(q, k[:, :1], v[:, :1])
