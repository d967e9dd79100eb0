"""Which device and dtype a model runs on: CUDA, then Apple MPS, then CPU, unless told."""

from __future__ import annotations

import torch

from engine.errors import ModelUnavailable


def pick_device(requested: str | None = None) -> torch.device:
    if requested:
        device = torch.device(requested)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ModelUnavailable(f"device {requested} was asked for, but CUDA is not available")
        if device.type == "mps" and not torch.backends.mps.is_available():
            raise ModelUnavailable(f"device {requested} was asked for, but MPS is not available")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(per_device: dict[str, str], device: torch.device, requested: str | None = None):
    name = requested or per_device.get(device.type, "float32")
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ModelUnavailable(f"unknown dtype {name!r}; use float32, float16 or bfloat16")
    return dtype
