"""Tolerances, skips and inputs shared by the kernel tests."""

import pytest
import torch

# The interpreter's tl.dot multiplies bf16 operands as their raw uint16 storage (Triton 3.9), so
# bf16 results of kernels built on tl.dot are meaningless under it; they need a GPU.
BF16_DOT_UNSUPPORTED = pytest.mark.skip(
    reason="TRITON_INTERPRET's tl.dot mishandles bf16 operands (Triton 3.9); needs a GPU"
)

# (atol, rtol) of a kernel against its reference. Both compute in fp32 and round once to the
# output dtype, so about one ulp of that dtype (attention also rounds P to fp16 before P·V).
TOLERANCES = {
    torch.float32: (1e-5, 1e-5),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1e-2, 1e-2),
}

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
DOT_DTYPES = [
    torch.float32,
    torch.float16,
    pytest.param(torch.bfloat16, marks=BF16_DOT_UNSUPPORTED),
]


def assert_close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Same dtype and shape, and equal within the dtype's TOLERANCES entry."""
    atol, rtol = TOLERANCES[expected.dtype]
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol)


# Attention shapes (B, H, Nq, Nk, D): whole tiles, ragged tails, Nq != Nk both ways, a 77-token
# text context, Nk below one tile, and head dims 16-128 including 40 (padded to 64 in the kernel).
ATTENTION_SHAPES = [
    (1, 2, 32, 32, 64),
    (2, 1, 37, 37, 64),
    (1, 2, 40, 23, 128),
    (2, 1, 19, 77, 32),
    (1, 1, 21, 21, 40),
    (1, 1, 17, 9, 16),
]


def qkv(shape, dtype, seed=0):
    """q, k, v ~ N(0, 1) for a (B, H, Nq, Nk, D) shape, drawn in that order from `seed`."""
    batch, heads, n_q, n_k, head_dim = shape
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, n_q, head_dim, generator=g)
    k = torch.randn(batch, heads, n_k, head_dim, generator=g)
    v = torch.randn(batch, heads, n_k, head_dim, generator=g)
    return q.to(dtype), k.to(dtype), v.to(dtype)
