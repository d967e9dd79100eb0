"""GPU benchmark of every Triton kernel against its torch reference and the eager torch baseline
(`F.scaled_dot_product_attention` for attention), at diffusion-sized shapes.

Run `python -m kernels.bench` on a CUDA machine: one JSON line per case, times in milliseconds
(median of `triton.testing.do_bench`), and `max_abs_err` of the kernel against its reference
(for int8 attention also against exact attention, with the cosine similarity). The references
compute in fp32 and materialise what the kernels fuse away, so they are the correctness yardstick;
`sdpa_ms` and `eager_ms` are the speed yardstick.
"""

from __future__ import annotations

import json
from functools import partial

import torch
import torch.nn.functional as F

from kernels._triton import HAS_TRITON, triton
from kernels.attention import attention_reference, attention_triton
from kernels.group_norm_silu import group_norm_silu_reference, group_norm_silu_triton
from kernels.int8_attention import int8_attention_reference, int8_attention_triton
from kernels.layer_norm_modulation import (
    layer_norm_modulation_reference,
    layer_norm_modulation_triton,
)

# (name, B, H, Nq, Nk, D). SD 1.5 at 512 px has 64x64 latents = 4096 tokens, 8 heads of 40
# (also run at 64, the common power of two); SDXL cross-attention has 10 heads of 64 over 77 text
# tokens; Flux/SD3-class DiTs have 24 heads of 128.
ATTENTION_SHAPES = [
    ("sd15-self", 2, 8, 4096, 4096, 40),
    ("sd15-self-d64", 2, 8, 4096, 4096, 64),
    ("sd15-cross", 2, 8, 4096, 77, 64),
    ("sdxl-cross", 2, 10, 4096, 77, 64),
    ("flux-self", 2, 24, 4096, 4096, 128),
]
# (name, N, C, H, W, groups): SD 1.5 UNet resnets at each resolution level.
GROUP_NORM_SHAPES = [
    ("sd15-level0", 2, 320, 64, 64, 32),
    ("sd15-level2", 2, 1280, 16, 16, 32),
]
# (name, B, N, C): PixArt/DiT-XL at 1024 px and Flux.
MODULATION_SHAPES = [("dit-xl", 2, 4096, 1152), ("flux", 2, 4096, 3072)]
DTYPES = [torch.float16, torch.bfloat16]


def _ms(fn) -> float:
    return round(triton.testing.do_bench(fn, return_mode="median"), 4)


def _err(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return (actual.float() - expected.float()).abs().max().item()


def _report(op, case, shape, dtype, kernel, reference, baseline_key, baseline, **extra) -> None:
    """Time the zero-argument callables and print one JSON line."""
    fields = dict(op=op, case=case, shape=shape, dtype=str(dtype), triton_ms=_ms(kernel))
    fields |= {"reference_ms": _ms(reference), baseline_key: _ms(baseline)}
    fields |= dict(max_abs_err=_err(kernel(), reference()), **extra)
    print(json.dumps(fields), flush=True)


def bench_attention(dtype: torch.dtype) -> None:
    for name, batch, heads, n_q, n_k, head_dim in ATTENTION_SHAPES:
        q = torch.randn(batch, heads, n_q, head_dim, device="cuda", dtype=dtype)
        k, v = torch.randn(2, batch, heads, n_k, head_dim, device="cuda", dtype=dtype)
        shape = [batch, heads, n_q, n_k, head_dim]
        sdpa = partial(F.scaled_dot_product_attention, q, k, v)
        exact = partial(attention_reference, q, k, v)
        kernel = partial(attention_triton, q, k, v)
        _report("attention", name, shape, dtype, kernel, exact, "sdpa_ms", sdpa)
        approx, expected = int8_attention_triton(q, k, v).float(), exact().float()
        _report(
            "int8_attention",
            name,
            shape,
            dtype,
            partial(int8_attention_triton, q, k, v),
            partial(int8_attention_reference, q, k, v),
            "sdpa_ms",
            sdpa,
            exact_max_abs_err=_err(approx, expected),
            exact_cosine=F.cosine_similarity(approx.flatten(), expected.flatten(), dim=0).item(),
        )


def _eager_group_norm_silu(x, groups, weight, bias):
    return F.silu(F.group_norm(x, groups, weight, bias))


def bench_group_norm_silu(dtype: torch.dtype) -> None:
    for name, batch, channels, height, width, groups in GROUP_NORM_SHAPES:
        x = torch.randn(batch, channels, height, width, device="cuda", dtype=dtype)
        weight, bias = torch.randn(2, channels, device="cuda", dtype=dtype)
        args = (x, groups, weight, bias)
        _report(
            "group_norm_silu",
            name,
            [batch, channels, height, width, groups],
            dtype,
            partial(group_norm_silu_triton, *args),
            partial(group_norm_silu_reference, *args),
            "eager_ms",
            partial(_eager_group_norm_silu, *args),
        )


def _eager_modulation(x, shift, scale):
    return F.layer_norm(x, x.shape[-1:], eps=1e-6) * (1 + scale[:, None]) + shift[:, None]


def bench_layer_norm_modulation(dtype: torch.dtype) -> None:
    for name, batch, tokens, channels in MODULATION_SHAPES:
        x = torch.randn(batch, tokens, channels, device="cuda", dtype=dtype)
        shift, scale = torch.randn(2, batch, channels, device="cuda", dtype=dtype)
        _report(
            "layer_norm_modulation",
            name,
            [batch, tokens, channels],
            dtype,
            partial(layer_norm_modulation_triton, x, shift, scale),
            partial(layer_norm_modulation_reference, x, shift, scale),
            "eager_ms",
            partial(_eager_modulation, x, shift, scale),
        )


def main() -> None:
    if not (HAS_TRITON and torch.cuda.is_available()):
        print("kernels.bench: needs a CUDA GPU and triton; nothing to measure here")
        return
    torch.manual_seed(0)
    for dtype in DTYPES:
        bench_attention(dtype)
        bench_group_norm_silu(dtype)
        bench_layer_norm_modulation(dtype)


if __name__ == "__main__":
    main()
