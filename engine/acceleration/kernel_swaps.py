"""Our Triton kernels inside diffusers models, without editing model code.

Three swaps, each reversible and each keeping every parameter where it was:

- attention: `Attention` modules (UNet self- and cross-attention) get `KernelAttnProcessor`,
  which computes what diffusers' `AttnProcessor2_0` computes but hands the score-softmax-value
  product to our kernel (`kernels.attention`, or `kernels.int8_attention` for the fast recipe);
- resnets: `ResnetBlock2D` blocks with the usual configuration (SiLU, GroupNorm, time embedding
  added before the second norm: SD, SDXL, their VAEs, mini-sd) change class to a subclass whose
  forward fuses each GroupNorm with the SiLU after it (`kernels.group_norm_silu`);
- DiT norms: `AdaLayerNormZero` and `AdaLayerNormZeroSingle` (Flux) change class to subclasses
  that fuse the LayerNorm with the shift/scale modulation (`kernels.layer_norm_modulation`).

The swapped code calls the dispatchers, so Triton runs where the tensors are on a GPU and the
fp32 torch reference elsewhere. Tests pass `triton=True` to run the Triton launchers themselves
(under TRITON_INTERPRET=1 on a CPU). `engine.acceleration.swap_bench` times each swap inside
full-size models; the fused norms pay only inside a CUDA graph, so `cuda_graphs` swaps them in
for its captures and nothing else serves them (see `recipes.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from diffusers.models.attention_processor import Attention, AttnProcessor, AttnProcessor2_0
from diffusers.models.normalization import AdaLayerNormZero, AdaLayerNormZeroSingle
from diffusers.models.resnet import ResnetBlock2D

import kernels


@dataclass(frozen=True)
class KernelSet:
    """Which swaps to make; `int8` picks the quantised attention (an approximation)."""

    attention: bool = True
    group_norm_silu: bool = True
    layer_norm_modulation: bool = True
    int8: bool = False


@dataclass
class Ops:
    """The functions the swapped modules call."""

    attention: Callable[..., torch.Tensor]
    group_norm_silu: Callable[..., torch.Tensor]
    layer_norm_modulation: Callable[..., torch.Tensor]


def _ops(kernel_set: KernelSet, triton: bool) -> Ops:
    if triton:
        attention = kernels.int8_attention_triton if kernel_set.int8 else kernels.attention_triton
        return Ops(attention, kernels.group_norm_silu_triton, kernels.layer_norm_modulation_triton)
    attention = kernels.int8_attention if kernel_set.int8 else kernels.attention
    return Ops(attention, kernels.group_norm_silu, kernels.layer_norm_modulation)


class KernelAttnProcessor:
    """`AttnProcessor2_0`'s computation with our attention kernel. A call with an attention
    mask (none of our pipelines passes one) falls back to torch's SDPA."""

    def __init__(self, attention: Callable[..., torch.Tensor]):
        self.attention = attention

    def __call__(
        self,
        attn: Attention,
        hidden_states: torch.Tensor,
        encoder_hidden_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        temb: torch.Tensor | None = None,
        **_: object,
    ) -> torch.Tensor:
        residual = hidden_states
        if attn.spatial_norm is not None:
            hidden_states = attn.spatial_norm(hidden_states, temb)
        image_shape = hidden_states.shape if hidden_states.ndim == 4 else None
        if image_shape is not None:  # [B, C, H, W] -> [B, HW, C]
            hidden_states = hidden_states.flatten(2).transpose(1, 2)
        if attn.group_norm is not None:
            hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        context = hidden_states if encoder_hidden_states is None else encoder_hidden_states
        if encoder_hidden_states is not None and attn.norm_cross:
            context = attn.norm_encoder_hidden_states(context)

        batch = hidden_states.shape[0]
        q, k, v = attn.to_q(hidden_states), attn.to_k(context), attn.to_v(context)
        head_dim = k.shape[-1] // attn.heads
        # [B, N, H*D] viewed as [B, H, N, D]: the kernels take any strides, so no copies.
        q, k, v = (t.view(batch, -1, attn.heads, head_dim).transpose(1, 2) for t in (q, k, v))
        if attn.norm_q is not None:
            q = attn.norm_q(q)
        if attn.norm_k is not None:
            k = attn.norm_k(k)
        # Scale 1/sqrt(head_dim), as AttnProcessor2_0 uses (it ignores `attn.scale`).
        if attention_mask is None:
            out = self.attention(q, k, v)
        else:
            mask = attn.prepare_attention_mask(attention_mask, context.shape[1], batch)
            mask = mask.view(batch, attn.heads, -1, mask.shape[-1])
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        out = out.transpose(1, 2).reshape(batch, -1, attn.heads * head_dim).to(q.dtype)
        out = attn.to_out[1](attn.to_out[0](out))  # projection, dropout
        if image_shape is not None:
            out = out.transpose(1, 2).reshape(image_shape)
        if attn.residual_connection:
            out = out + residual
        return out / attn.rescale_output_factor


class FusedResnetBlock2D(ResnetBlock2D):
    """A `ResnetBlock2D` whose two norm+SiLU pairs are one kernel each (see `_fusable`)."""

    fused_group_norm_silu: Callable[..., torch.Tensor]

    def forward(self, input_tensor: torch.Tensor, temb: torch.Tensor, *args, **kwargs):
        h = self._norm_silu(self.norm1, input_tensor)
        if self.upsample is not None:
            input_tensor, h = self.upsample(input_tensor), self.upsample(h)
        elif self.downsample is not None:
            input_tensor, h = self.downsample(input_tensor), self.downsample(h)
        h = self.conv1(h)
        if self.time_emb_proj is not None and temb is not None:
            if not self.skip_time_act:
                temb = self.nonlinearity(temb)
            h = h + self.time_emb_proj(temb)[:, :, None, None]
        h = self.conv2(self.dropout(self._norm_silu(self.norm2, h)))
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        return (input_tensor + h) / self.output_scale_factor

    def _norm_silu(self, norm: torch.nn.GroupNorm, x: torch.Tensor) -> torch.Tensor:
        fused = type(self).fused_group_norm_silu
        return fused(x, norm.num_groups, norm.weight, norm.bias, norm.eps)


def _fusable(block: ResnetBlock2D) -> bool:
    """The configuration FusedResnetBlock2D reproduces exactly (UNet2DConditionModel's and
    AutoencoderKL's defaults); anything else keeps diffusers' forward."""
    return (
        type(block) is ResnetBlock2D
        and block.time_embedding_norm == "default"
        and isinstance(block.nonlinearity, torch.nn.SiLU)
        and all(isinstance(n, torch.nn.GroupNorm) and n.affine for n in (block.norm1, block.norm2))
    )


class FusedAdaLayerNormZero(AdaLayerNormZero):
    fused_modulation: Callable[..., torch.Tensor]

    def forward(self, x, timestep=None, class_labels=None, hidden_dtype=None, emb=None):
        if self.emb is not None:
            emb = self.emb(timestep, class_labels, hidden_dtype=hidden_dtype)
        emb = self.linear(self.silu(emb))
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = emb.chunk(6, dim=1)
        x = type(self).fused_modulation(x, shift_msa, scale_msa, self.norm.eps)
        return x, gate_msa, shift_mlp, scale_mlp, gate_mlp


class FusedAdaLayerNormZeroSingle(AdaLayerNormZeroSingle):
    fused_modulation: Callable[..., torch.Tensor]

    def forward(self, x, emb=None):
        shift_msa, scale_msa, gate_msa = self.linear(self.silu(emb)).chunk(3, dim=1)
        return type(self).fused_modulation(x, shift_msa, scale_msa, self.norm.eps), gate_msa


def _plain_layer_norm(module: torch.nn.Module) -> bool:
    norm = getattr(module, "norm", None)
    return (
        type(norm) is torch.nn.LayerNorm
        and not norm.elementwise_affine
        and len(norm.normalized_shape) == 1
    )


@contextmanager
def kernels_applied(
    model: torch.nn.Module, kernel_set: KernelSet = KernelSet(), *, triton: bool = False
) -> Iterator[int]:
    """Swap the kernels into `model` (a UNet, VAE or DiT) for the duration; yields how many
    modules were swapped. Every swap is undone on exit, also after an error."""
    ops = _ops(kernel_set, triton)
    fused = {
        ResnetBlock2D: type(
            "FusedResnetBlock2D",
            (FusedResnetBlock2D,),
            {"fused_group_norm_silu": staticmethod(ops.group_norm_silu)},
        ),
        AdaLayerNormZero: type(
            "FusedAdaLayerNormZero",
            (FusedAdaLayerNormZero,),
            {"fused_modulation": staticmethod(ops.layer_norm_modulation)},
        ),
        AdaLayerNormZeroSingle: type(
            "FusedAdaLayerNormZeroSingle",
            (FusedAdaLayerNormZeroSingle,),
            {"fused_modulation": staticmethod(ops.layer_norm_modulation)},
        ),
    }
    swapped: list[tuple[torch.nn.Module, type]] = []
    processors: list[tuple[Attention, object]] = []
    try:
        for module in model.modules():
            base = type(module)
            if (kernel_set.group_norm_silu and base is ResnetBlock2D and _fusable(module)) or (
                kernel_set.layer_norm_modulation
                and base in (AdaLayerNormZero, AdaLayerNormZeroSingle)
                and _plain_layer_norm(module)
            ):
                swapped.append((module, base))
            elif (
                kernel_set.attention
                and base is Attention
                and type(module.processor) in (AttnProcessor, AttnProcessor2_0)
            ):
                processors.append((module, module.processor))
        for module, base in swapped:
            module.__class__ = fused[base]
        processor = KernelAttnProcessor(ops.attention)
        for module, _ in processors:
            module.processor = processor
        yield len(swapped) + len(processors)
    finally:
        for module, base in swapped:
            module.__class__ = base
        for module, original in processors:
            module.processor = original
