"""GPU timing of our kernel swaps inside full-size diffusers models, against the same models as
diffusers runs them (torch SDPA, eager GroupNorm/SiLU/LayerNorm).

The models have the real architectures and sizes (SD 1.5's UNet and VAE decoder at 512 px, a
Flux-width transformer with fewer blocks) but random weights: speed does not depend on weights,
and no weights can be fetched where this runs. Each variant's output is compared with the plain
model's (relative L2 error), so a swap that is fast but wrong shows. One JSON line per variant:

    python -m engine.acceleration.swap_bench [--modes graph,regional,compile] [--rows N]

Eager variants swap each kernel alone and all together. The modes then run the model without
Python's launch cost, plain and with the fused norms (the kernels are `torch.library.triton_op`s,
so torch.compile traces into them): `graph` replays one CUDA graph of the whole forward,
`regional` compiles the repeated blocks as the engine's `SPOTFORGE_COMPILE=1` does, `compile`
compiles the whole model.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import partial

import torch
from diffusers import AutoencoderKL, FluxTransformer2DModel, UNet2DConditionModel

from engine.acceleration.kernel_swaps import KernelSet, kernels_applied
from engine.loading import compile_regions

VARIANTS: dict[str, KernelSet | None] = {
    "plain": None,
    "attention": KernelSet(group_norm_silu=False, layer_norm_modulation=False),
    "group_norm_silu": KernelSet(attention=False, layer_norm_modulation=False),
    "all_exact": KernelSet(),
    "all_int8_attention": KernelSet(int8=True),
}
# Attention stays out of the modes: it loses to SDPA at every shape (docs/benchmarks.md).
FUSED_NORMS = KernelSet(attention=False)
MODES = ("graph", "regional", "compile")


def sd15_unet(dtype: torch.dtype, rows: int):
    model = UNet2DConditionModel(cross_attention_dim=768)  # the defaults are SD 1.x's layout
    g = torch.Generator("cuda").manual_seed(0)
    inputs = dict(
        sample=torch.randn(rows, 4, 64, 64, generator=g, device="cuda", dtype=dtype),
        timestep=torch.tensor([500] * rows, device="cuda"),
        encoder_hidden_states=torch.randn(rows, 77, 768, generator=g, device="cuda", dtype=dtype),
    )
    return model, inputs, lambda m, i: m(**i).sample


def sd15_vae_decoder(dtype: torch.dtype, rows: int):
    model = AutoencoderKL(
        block_out_channels=(128, 256, 512, 512),
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        layers_per_block=2,
        latent_channels=4,
    )
    g = torch.Generator("cuda").manual_seed(0)
    images = max(1, rows // 2)  # decoding has no guidance branch
    inputs = dict(z=torch.randn(images, 4, 64, 64, generator=g, device="cuda", dtype=dtype))
    return model, inputs, lambda m, i: m.decode(**i).sample


def flux_width(dtype: torch.dtype, rows: int):
    """FLUX.1's widths (24 heads of 128, 4096-d T5 context) with 2 double and 4 single blocks
    instead of 19 and 38: per-block costs are the real ones."""
    model = FluxTransformer2DModel(
        num_layers=2, num_single_layers=4, joint_attention_dim=4096, guidance_embeds=True
    )
    g = torch.Generator("cuda").manual_seed(0)
    image_tokens, text_tokens = 4096, 512  # 1024x1024 px
    images = max(1, rows // 2)  # FLUX.1 has guidance distilled in: one row per image

    def randn(*shape):
        return torch.randn(*shape, generator=g, device="cuda", dtype=dtype)

    inputs = dict(
        hidden_states=randn(images, image_tokens, 64),
        encoder_hidden_states=randn(images, text_tokens, 4096),
        pooled_projections=randn(images, 768),
        timestep=torch.tensor([0.5] * images, device="cuda", dtype=dtype),
        img_ids=torch.zeros(image_tokens, 3, device="cuda"),
        txt_ids=torch.zeros(text_tokens, 3, device="cuda"),
        guidance=torch.tensor([3.5] * images, device="cuda", dtype=dtype),
    )
    return model, inputs, lambda m, i: m(**i).sample


MODELS: dict[str, tuple[Callable, torch.dtype]] = {
    "sd15-unet-512px": (sd15_unet, torch.float16),
    "sd15-vae-decoder-512px": (sd15_vae_decoder, torch.float16),
    "flux-width-2+4-blocks-1024px": (flux_width, torch.bfloat16),
}


def _median_ms(fn: Callable[[], object], repeats: int = 20) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return round(sorted(times)[len(times) // 2], 3)


def run(modes: list[str], rows: int) -> None:
    for name, (build, dtype) in MODELS.items():
        for row in _bench_model(name, partial(build, rows=rows), dtype, modes):
            row["rows"] = rows
            print(json.dumps(row), flush=True)
        torch.cuda.empty_cache()


def _graphed(call: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    """`call` captured once in a CUDA graph (after warm-up on a side stream, as capture
    requires); the returned function replays it and gives the graph's output tensor."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = call()

    def replay() -> torch.Tensor:
        graph.replay()
        return out

    return replay


def _runner(mode: str, model: torch.nn.Module, call: Callable) -> Callable[[], torch.Tensor]:
    torch._dynamo.reset()
    if mode == "graph":
        return _graphed(call)
    if mode == "regional":
        compile_regions(model)
        return call
    compiled = torch.compile(model)
    return lambda: call(compiled)


def _bench_model(name: str, build: Callable, dtype: torch.dtype, modes: list[str]):
    with torch.device("cuda"):
        model, inputs, forward = build(dtype)
    model = model.to(dtype).eval()

    def call(m=model):
        return forward(m, inputs)

    plain_ms = None
    with torch.inference_mode():
        reference = call().float()
        runs = [("eager", variant, ks) for variant, ks in VARIANTS.items()]
        runs += [
            (m, v, ks) for m in modes for v, ks in (("plain", None), ("fused_norms", FUSED_NORMS))
        ]
        mode_plain_ms: dict[str, float] = {}
        for mode, variant, kernel_set in runs:
            row = {"model": name, "dtype": str(dtype).removeprefix("torch."), "mode": mode}
            row["variant"] = variant
            try:
                with ExitStack() as stack:
                    if kernel_set is not None:
                        row["swapped"] = stack.enter_context(kernels_applied(model, kernel_set))
                    began = time.perf_counter()
                    fn = call if mode == "eager" else _runner(mode, model, call)
                    out = fn().float()
                    torch.cuda.synchronize()
                    if mode != "eager":
                        row["prepare_s"] = round(time.perf_counter() - began, 1)
                    row["ms"] = _median_ms(fn)
                    if mode == "regional":  # compiled blocks stay compiled: undo for the next
                        _uncompile(model)
                row["rel_err"] = float((out - reference).norm() / reference.norm())
                plain_ms = plain_ms or row["ms"]
                mode_plain_ms.setdefault(mode, row["ms"])
                row["speedup"] = round(plain_ms / row["ms"], 3)
                row["speedup_in_mode"] = round(mode_plain_ms[mode] / row["ms"], 3)
            except Exception as exc:  # a variant that fails is a result too
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            yield row


def _uncompile(model: torch.nn.Module) -> None:
    for module in model.modules():
        if getattr(module, "_compiled_call_impl", None) is not None:
            module._compiled_call_impl = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--modes", default="graph", help=f"comma-separated, of {', '.join(MODES)}; '' for none"
    )
    parser.add_argument(
        "--rows", type=int, default=2, help="UNet batch rows: 2 per image with guidance"
    )
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("swap_bench: needs a CUDA GPU; nothing to measure here")
        return
    modes = [m for m in args.modes.split(",") if m]
    if unknown := set(modes) - set(MODES):
        parser.error(f"unknown modes {sorted(unknown)}; of {', '.join(MODES)}")
    torch.manual_seed(0)
    run(modes, args.rows)


if __name__ == "__main__":
    main()
