"""Fused GroupNorm + SiLU, the pair that opens every UNet resnet block.

Eager PyTorch writes the normalised tensor and reads it back for the SiLU; here one program per
(sample, group) reads its contiguous slice of x three times (mean, then centred variance, then
normalise, affine and SiLU) and writes once. Statistics are fp32 and two-pass, so a large mean
cannot cancel the variance as a one-pass sum of squares would. The price of keeping a group's
statistics inside one program is parallelism: N x num_groups programs (64 for a batch of 2 with
32 groups), fewer than the SMs of a large GPU; `kernels.bench` measures whether it still pays.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.library import triton_op, wrap_triton

from kernels._triton import HAS_TRITON, tl, triton, triton_usable


@triton.jit
def _group_norm_silu_kernel(
    X,
    Weight,
    Bias,
    Y,
    group_size,
    spatial,
    channels_per_group,
    num_groups,
    eps,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    group = pid % num_groups
    # x is contiguous [N, C, S]: group g of sample n is the slice starting at pid * group_size.
    base = pid.to(tl.int64) * group_size
    offs = tl.arange(0, BLOCK)

    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, group_size, BLOCK):
        idx = start + offs
        total += tl.load(X + base + idx, mask=idx < group_size, other=0.0).to(tl.float32)
    mean = tl.sum(total, 0) / group_size

    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, group_size, BLOCK):
        idx = start + offs
        mask = idx < group_size
        x = tl.load(X + base + idx, mask=mask, other=0.0).to(tl.float32)
        centred = tl.where(mask, x - mean, 0.0)
        total += centred * centred
    rstd = tl.rsqrt(tl.sum(total, 0) / group_size + eps)

    for start in range(0, group_size, BLOCK):
        idx = start + offs
        mask = idx < group_size
        x = tl.load(X + base + idx, mask=mask, other=0.0).to(tl.float32)
        channel = group * channels_per_group + idx // spatial
        w = tl.load(Weight + channel, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(Bias + channel, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        y = y * tl.sigmoid(y)
        tl.store(Y + base + idx, y.to(Y.dtype.element_ty), mask=mask)


def _check(x: torch.Tensor, num_groups: int, weight: torch.Tensor, bias: torch.Tensor) -> None:
    if x.dim() < 2 or x.shape[1] % num_groups:
        raise ValueError(f"x {tuple(x.shape)} must be [N, C, *] with C divisible by {num_groups}")
    if weight.shape != (x.shape[1],) or bias.shape != (x.shape[1],):
        raise ValueError(f"weight and bias must be [{x.shape[1]}]")


def _launch(
    x: torch.Tensor,
    num_groups: int,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float,
    block: int,
) -> torch.Tensor:
    x = x.contiguous()
    batch, channels = x.shape[:2]
    spatial = x[0, 0].numel()
    group_size = channels // num_groups * spatial
    block = block or min(4096, triton.next_power_of_2(group_size))
    y = torch.empty_like(x)
    wrap_triton(_group_norm_silu_kernel)[(batch * num_groups,)](
        x,
        weight,
        bias,
        y,
        group_size,
        spatial,
        channels // num_groups,
        num_groups,
        eps,
        BLOCK=block,
        num_warps=8 if block >= 2048 else 4,
    )
    return y


# An operator torch.compile sees into (and a CUDA graph captures) like any built-in one.
_op = triton_op("spotforge::group_norm_silu", _launch, mutates_args=()) if HAS_TRITON else None


def group_norm_silu_triton(
    x: torch.Tensor,
    num_groups: int,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    block: int | None = None,
) -> torch.Tensor:
    """Launch one program per (sample, group); x is made contiguous (NCHW) first. `block` is
    the number of elements a program handles per step; tests pass a small one."""
    _check(x, num_groups, weight, bias)
    return _op(x, num_groups, weight, bias, eps, block or 0)


def group_norm_silu_reference(
    x: torch.Tensor,
    num_groups: int,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
) -> torch.Tensor:
    """silu(group_norm(x)) computed in fp32 and cast back to x's dtype."""
    _check(x, num_groups, weight, bias)
    y = F.group_norm(x.float(), num_groups, weight.float(), bias.float(), eps)
    return F.silu(y).to(x.dtype)


def group_norm_silu(
    x: torch.Tensor,
    num_groups: int,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
) -> torch.Tensor:
    """silu(GroupNorm(num_groups, C, eps, affine)(x)) for x [N, C, *]; weight and bias are [C].
    The output has x's dtype and shape. Triton on GPU tensors, the fp32 reference elsewhere."""
    if triton_usable(x, weight, bias):
        return group_norm_silu_triton(x, num_groups, weight, bias, eps)
    return group_norm_silu_reference(x, num_groups, weight, bias, eps)
