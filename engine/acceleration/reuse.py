"""Work shared by requests with the same inputs is done once: text encoder outputs are kept per
token sequence, so the negative prompt, and a prompt that many variants share, are encoded once
per model rather than once per request.

The cache sits on the encoder as a diffusers hook and answers row by row: a batch whose rows
were all seen costs no encoder call; a partly seen batch runs only its new rows. Text encoders
treat each row independently, so a cached row equals a recomputed one to float rounding.
"""

from __future__ import annotations

from collections import OrderedDict

import torch
from diffusers.hooks import HookRegistry, ModelHook

HOOK = "spotforge_encoder_cache"


class EncoderCache(ModelHook):
    def __init__(self, capacity: int = 512):
        super().__init__()
        self.capacity = capacity
        self.rows: OrderedDict[tuple, object] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def new_forward(self, module, input_ids, *args, **kwargs):
        if len(args) == 1 and "attention_mask" not in kwargs:  # Wan passes the mask by position
            kwargs, args = {**kwargs, "attention_mask": args[0]}, ()
        mask = kwargs.get("attention_mask")
        if args or input_ids is None or input_ids.dim() != 2:
            return self.fn_ref.original_forward(input_ids, *args, **kwargs)
        options = tuple(sorted((k, v) for k, v in kwargs.items() if k != "attention_mask"))
        device = str(input_ids.device)  # the pool may move the model between devices
        keys = [
            (
                tuple(input_ids[i].tolist()),
                None if mask is None else tuple(mask[i].tolist()),
                options,
                device,
            )
            for i in range(len(input_ids))
        ]
        missing = [i for i, key in enumerate(keys) if key not in self.rows]
        if missing:
            picked = torch.tensor(missing, device=input_ids.device)
            call = dict(kwargs)
            if mask is not None:
                call["attention_mask"] = mask[picked]
            fresh = self.fn_ref.original_forward(input_ids[picked], **call)
            for j, i in enumerate(missing):
                self.rows[keys[i]] = _row(fresh, j)
        self.misses += len(missing)
        self.hits += len(keys) - len(missing)
        for key in keys:
            self.rows.move_to_end(key)
        while len(self.rows) > self.capacity:
            self.rows.popitem(last=False)
        return _stack([self.rows[key] for key in keys])


def attach_encoder_cache(encoder: torch.nn.Module, capacity: int = 512) -> EncoderCache:
    cache = EncoderCache(capacity)
    HookRegistry.check_if_exists_or_initialize(encoder).register_hook(cache, HOOK)
    return cache


def _row(output, i: int):
    """Row `i` of an encoder output (a ModelOutput of tensors and tuples of tensors)."""

    def take(t: torch.Tensor) -> torch.Tensor:
        return t[i : i + 1].clone()  # a copy: a view would keep the whole batch alive

    return type(output)(
        **{k: tuple(map(take, v)) if isinstance(v, tuple) else take(v) for k, v in output.items()}
    )


def _stack(rows: list):
    def cat(values: list):
        if isinstance(values[0], tuple):
            return tuple(torch.cat(parts) for parts in zip(*values, strict=True))
        return torch.cat(values)

    return type(rows[0])(**{k: cat([r[k] for r in rows]) for k in rows[0]})
