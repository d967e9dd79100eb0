"""Triton kernels, each with a plain-torch reference and a dispatcher.

The dispatchers (`attention`, `int8_attention`, `group_norm_silu`, `layer_norm_modulation`) run
the Triton kernel on GPU tensors and the reference elsewhere; the `*_triton` launchers and
`*_reference` functions are exported too, for tests and for callers that must pick one.
"""

from kernels._triton import HAS_TRITON
from kernels.attention import attention, attention_reference, attention_triton
from kernels.group_norm_silu import (
    group_norm_silu,
    group_norm_silu_reference,
    group_norm_silu_triton,
)
from kernels.int8_attention import (
    int8_attention,
    int8_attention_reference,
    int8_attention_triton,
    quantize_per_block_reference,
    quantize_per_block_triton,
)
from kernels.layer_norm_modulation import (
    layer_norm_modulation,
    layer_norm_modulation_reference,
    layer_norm_modulation_triton,
)

__all__ = [
    "HAS_TRITON",
    "attention",
    "attention_reference",
    "attention_triton",
    "group_norm_silu",
    "group_norm_silu_reference",
    "group_norm_silu_triton",
    "int8_attention",
    "int8_attention_reference",
    "int8_attention_triton",
    "layer_norm_modulation",
    "layer_norm_modulation_reference",
    "layer_norm_modulation_triton",
    "quantize_per_block_reference",
    "quantize_per_block_triton",
]
