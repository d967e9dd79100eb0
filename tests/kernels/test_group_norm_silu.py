"""Fused GroupNorm + SiLU against silu(group_norm()) in fp32, under the Triton interpreter."""

import pytest
import torch

from kernels.group_norm_silu import (
    group_norm_silu,
    group_norm_silu_reference,
    group_norm_silu_triton,
)
from tests.kernels.helpers import DTYPES, assert_close

# (x shape, groups, elements per program step): images, a sequence, plain [N, C] and a video
# tensor; group sizes that are and are not multiples of the step.
CASES = [
    ((2, 12, 5, 7), 4, 16),
    ((1, 32, 8, 8), 8, 64),
    ((2, 6, 10), 3, 16),
    ((3, 8), 2, 16),
    ((1, 4, 3, 3, 3), 2, 16),
]


def inputs(shape, dtype):
    g = torch.Generator().manual_seed(0)
    # An offset mean checks that the variance is centred, not E[x²] - E[x]².
    x = torch.randn(shape, generator=g) * 3 + 10
    weight, bias = torch.randn(2, shape[1], generator=g)
    return x.to(dtype), weight.to(dtype), bias.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "groups", "block"), CASES)
def test_kernel_matches_reference(shape, groups, block, dtype):
    x, weight, bias = inputs(shape, dtype)
    out = group_norm_silu_triton(x, groups, weight, bias, block=block)
    assert out.shape == x.shape
    assert_close(out, group_norm_silu_reference(x, groups, weight, bias))


def test_default_block_channels_last_input_and_eps():
    x, weight, bias = inputs((2, 8, 6, 6), torch.float16)
    x = x.to(memory_format=torch.channels_last)
    out = group_norm_silu_triton(x, 4, weight, bias, eps=1e-3)
    assert_close(out, group_norm_silu_reference(x, 4, weight, bias, eps=1e-3))


def test_dispatcher_uses_reference_on_cpu():
    x, weight, bias = inputs((2, 12, 5, 7), torch.bfloat16)
    assert torch.equal(
        group_norm_silu(x, 4, weight, bias), group_norm_silu_reference(x, 4, weight, bias)
    )


def test_groups_must_divide_channels():
    x, weight, bias = inputs((1, 6, 4), torch.float32)
    with pytest.raises(ValueError, match="divisible"):
        group_norm_silu_triton(x, 4, weight, bias)
