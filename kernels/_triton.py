"""Triton where it is installed, and the one test every dispatcher makes before using it.

The triton wheel exists for Linux only (see pyproject.toml). Elsewhere the kernel modules still
import: `triton.jit` becomes a no-op, `tl.constexpr` a plain annotation, and every dispatcher
takes its torch reference.
"""

from __future__ import annotations

from types import SimpleNamespace

import torch

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:
    triton = SimpleNamespace(jit=lambda fn: fn)
    tl = SimpleNamespace(constexpr=int)
    HAS_TRITON = False


def triton_usable(*tensors: torch.Tensor) -> bool:
    """True when a compiled Triton kernel can run on these tensors: triton imports and all of
    them live on a GPU. CPU tensors take the reference even under TRITON_INTERPRET=1, which is
    for testing kernels, not for serving."""
    return HAS_TRITON and all(t.is_cuda for t in tensors)
