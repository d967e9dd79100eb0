"""Fused attention forward, flash-attention style.

One program owns BLOCK_M query rows of one (batch, head) and walks the keys in tiles of BLOCK_N,
keeping a running row max and row sum (online softmax: FlashAttention, Dao et al. 2022,
https://arxiv.org/abs/2205.14135, with the FlashAttention-2 loop order,
https://arxiv.org/abs/2307.08691). The Nq x Nk score matrix never leaves registers, so memory is
O(N) and K and V are read once per query tile. Diffusion needs the non-causal case, both self-
attention over latent tokens (Nq = Nk = 4096 at 64x64 latents) and cross-attention to a few text
tokens (Nk = 77); ragged tails are masked, so neither length has to be a multiple of a block.
Head dims that are not a power of two (40 and 80 in SD 1.5) are padded in registers and masked.

Scores are kept in base 2 (the softmax scale is multiplied by log2(e)) so each exponential is one
`exp2`. Accumulation is fp32 whatever the input dtype; P is cast to V's dtype for the P·V product,
as in the Triton tutorial kernel, which is the dominant error for fp16/bf16 (about one ulp of the
input dtype on the output).
"""

from __future__ import annotations

import math

import torch

from kernels._triton import tl, triton, triton_usable

LOG2E = 1.4426950408889634
MAX_HEAD_DIM = 256


@triton.jit
def _attention_fwd_kernel(
    Q,
    K,
    V,
    Out,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_vd,
    stride_ob,
    stride_oh,
    stride_om,
    stride_od,
    num_heads,
    n_q,
    n_k,
    head_dim,
    qk_scale,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
    CAUSAL: tl.constexpr,
    INPUT_PRECISION: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    # int64 so batch/head offsets of large activations cannot overflow.
    b = (pid_bh // num_heads).to(tl.int64)
    h = (pid_bh % num_heads).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < n_q
    d_ok = offs_d < head_dim

    q_ptrs = Q + b * stride_qb + h * stride_qh
    q_ptrs += offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=m_ok[:, None] & d_ok[None, :], other=0.0)
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    hi = n_k
    if CAUSAL:
        hi = tl.minimum(n_k, (pid_m + 1) * BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        n_ok = cols < n_k
        k_ptrs = k_base + cols[None, :] * stride_kn + offs_d[:, None] * stride_kd
        k_t = tl.load(k_ptrs, mask=n_ok[None, :] & d_ok[:, None], other=0.0)
        s = tl.dot(q, k_t, input_precision=INPUT_PRECISION) * qk_scale
        keep = n_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        # Every row keeps key 0 in the first tile, so m_new is finite from the first tile on.
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd
        v = tl.load(v_ptrs, mask=n_ok[:, None] & d_ok[None, :], other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=INPUT_PRECISION)
        m_i = m_new

    out = acc / l_i[:, None]
    o_ptrs = Out + b * stride_ob + h * stride_oh
    o_ptrs += offs_m[:, None] * stride_om + offs_d[None, :] * stride_od
    tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=m_ok[:, None] & d_ok[None, :])


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Raise ValueError unless q is [B,H,Nq,D] and k, v are [B,H,Nk,D], all of one dtype."""
    if q.dim() != 4 or k.shape != v.shape or k.dim() != 4:
        raise ValueError(f"expected q [B,H,Nq,D], k and v [B,H,Nk,D]; got {q.shape}, {k.shape}")
    if q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q {tuple(q.shape)} and k {tuple(k.shape)} disagree on B, H or D")
    if not q.dtype == k.dtype == v.dtype:
        raise ValueError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")


def default_scale(head_dim: int, scale: float | None) -> float:
    """The softmax scale: `scale`, or 1/sqrt(head_dim) when it is None."""
    return 1.0 / math.sqrt(head_dim) if scale is None else scale


def attention_triton(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float | None = None,
    causal: bool = False,
    block_m: int | None = None,
    block_n: int | None = None,
) -> torch.Tensor:
    """Launch the fused kernel. Any strides are accepted (e.g. [B,N,H,D] views transposed to
    [B,H,N,D]); the output is a new contiguous [B,H,Nq,D] tensor in q's dtype. The default
    blocks are untuned picks from the range the Triton tutorial autotunes over (`kernels.bench`
    is where to tune them); tests pass small ones to exercise tiling."""
    check_qkv(q, k, v)
    batch, heads, n_q, head_dim = q.shape
    n_k = k.shape[2]
    if head_dim > MAX_HEAD_DIM:
        raise ValueError(f"head dim {head_dim} > {MAX_HEAD_DIM}")
    block_d = max(16, triton.next_power_of_2(head_dim))
    block_m = block_m or (128 if block_d <= 128 else 64)
    block_n = block_n or (64 if block_d <= 128 else 32)
    out = torch.empty((batch, heads, n_q, head_dim), dtype=q.dtype, device=q.device)
    grid = (triton.cdiv(n_q, block_m), batch * heads)
    _attention_fwd_kernel[grid](
        q,
        k,
        v,
        out,
        *q.stride(),
        *k.stride(),
        *v.stride(),
        *out.stride(),
        heads,
        n_q,
        n_k,
        head_dim,
        default_scale(head_dim, scale) * LOG2E,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        BLOCK_D=block_d,
        CAUSAL=causal,
        # fp32 inputs get true fp32 products, not TF32: fp32 is the accuracy path, not the fast one.
        INPUT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        num_warps=4 if block_d <= 64 else 8,
        num_stages=3 if block_d <= 128 else 2,
    )
    return out


def attention_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """Exact attention in fp32, materialising the scores; the result is cast to q's dtype.
    Causal masking is top-left aligned (query i sees keys 0..i), as in
    `F.scaled_dot_product_attention(is_causal=True)`."""
    check_qkv(q, k, v)
    scores = (q.float() @ k.float().transpose(-2, -1)) * default_scale(q.shape[-1], scale)
    if causal:
        n_q, n_k = scores.shape[-2:]
        hidden = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    return (scores.softmax(-1) @ v.float()).to(q.dtype)


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """softmax(q·kᵀ·scale)·v for q [B,H,Nq,D], k and v [B,H,Nk,D]; scale defaults to 1/sqrt(D).

    The fused Triton kernel on GPU tensors with D <= 256, the fp32 reference otherwise."""
    if triton_usable(q, k, v) and q.shape[-1] <= MAX_HEAD_DIM:
        return attention_triton(q, k, v, scale, causal)
    return attention_reference(q, k, v, scale, causal)
