"""Fused LayerNorm (no affine) + adaptive modulation, the adaLN-Zero input of every DiT block
(Peebles & Xie 2023, https://arxiv.org/abs/2212.09748): y = norm(x) * (1 + scale) + shift, with
shift and scale per sample, broadcast over tokens.

Eager PyTorch runs this as four kernels with three intermediate tensors; here one program per
token row reads x once, keeps the whole row in registers (two-pass fp32 mean and variance), reads
its sample's shift and scale rows and writes y once. Shift and scale may be strided views (the
usual `emb.chunk(6, dim=1)` of a DiT) and a different dtype from x.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.library import triton_op, wrap_triton

from kernels._triton import HAS_TRITON, tl, triton, triton_usable

MAX_CHANNELS = 65536


@triton.jit
def _layer_norm_modulation_kernel(
    X,
    Shift,
    Scale,
    Y,
    n_tokens,
    n_channels,
    stride_shift_b,
    stride_shift_c,
    stride_scale_b,
    stride_scale_c,
    eps,
    BLOCK_C: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    sample = row // n_tokens
    cols = tl.arange(0, BLOCK_C)
    mask = cols < n_channels

    x = tl.load(X + row * n_channels + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / n_channels
    centred = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(centred * centred, 0) / n_channels + eps)
    shift = tl.load(Shift + sample * stride_shift_b + cols * stride_shift_c, mask=mask, other=0.0)
    scale = tl.load(Scale + sample * stride_scale_b + cols * stride_scale_c, mask=mask, other=0.0)
    y = centred * rstd * (1.0 + scale.to(tl.float32)) + shift.to(tl.float32)
    tl.store(Y + row * n_channels + cols, y.to(Y.dtype.element_ty), mask=mask)


def _as_rows(x: torch.Tensor, mod: torch.Tensor, name: str) -> torch.Tensor:
    """shift/scale as a [B, C] view; [B, C] and [B, 1, C] are accepted."""
    batch, _, channels = x.shape
    if mod.shape not in ((batch, channels), (batch, 1, channels)):
        raise ValueError(f"{name} {tuple(mod.shape)} must be [{batch}, {channels}] or [B, 1, C]")
    return mod.reshape(batch, channels)


def _checked_rows(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor):
    if x.dim() != 3:
        raise ValueError(f"x must be [B, N, C], got {tuple(x.shape)}")
    return _as_rows(x, shift, "shift"), _as_rows(x, scale, "scale")


def _launch(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float) -> torch.Tensor:
    batch, tokens, channels = x.shape
    x = x.contiguous()
    y = torch.empty_like(x)
    block_c = triton.next_power_of_2(channels)
    wrap_triton(_layer_norm_modulation_kernel)[(batch * tokens,)](
        x,
        shift,
        scale,
        y,
        tokens,
        channels,
        *shift.stride(),
        *scale.stride(),
        eps,
        BLOCK_C=block_c,
        num_warps=min(16, max(4, block_c // 512)),
    )
    return y


# An operator torch.compile sees into (and a CUDA graph captures) like any built-in one.
_op = (
    triton_op("spotforge::layer_norm_modulation", _launch, mutates_args=()) if HAS_TRITON else None
)


def layer_norm_modulation_triton(
    x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """Launch one program per token row of x [B, N, C] (made contiguous); C <= 65536."""
    shift, scale = _checked_rows(x, shift, scale)
    if x.shape[-1] > MAX_CHANNELS:
        raise ValueError(f"{x.shape[-1]} channels > {MAX_CHANNELS}")
    return _op(x, shift, scale, eps)


def layer_norm_modulation_reference(
    x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """The same formula in fp32 torch, cast back to x's dtype."""
    shift, scale = _checked_rows(x, shift, scale)
    normed = F.layer_norm(x.float(), x.shape[-1:], eps=eps)
    return (normed * (1 + scale.float()[:, None]) + shift.float()[:, None]).to(x.dtype)


def layer_norm_modulation(
    x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor, eps: float = 1e-6
) -> torch.Tensor:
    """LayerNorm(C, eps, no affine)(x) * (1 + scale) + shift for x [B, N, C] and shift, scale
    [B, C] or [B, 1, C]; the output has x's dtype. Triton on GPU tensors (C <= 65536), the fp32
    reference elsewhere."""
    if triton_usable(x, shift, scale) and x.shape[-1] <= MAX_CHANNELS:
        return layer_norm_modulation_triton(x, shift, scale, eps)
    return layer_norm_modulation_reference(x, shift, scale, eps)
