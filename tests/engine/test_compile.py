"""Regional torch.compile: the denoiser's repeated blocks compile during the first request and
never again, neither between denoising steps nor for a new prompt, and results stay exact."""

from __future__ import annotations

import torch
from torch._dynamo.utils import counters

from engine import Engine
from engine.bench import psnr
from engine.requests import TextToImage


def test_compiled_blocks_compile_once_and_keep_results(tmp_path):
    torch._dynamo.reset()
    counters.clear()
    request = TextToImage(preset="mini-sd", prompt="lake at night", seed=2, steps=2)
    with Engine(model_dir=tmp_path, device="cpu", compile_blocks=True) as engine:
        first = engine.generate(request)
        graphs = counters["stats"]["unique_graphs"]
        assert graphs > 0  # the blocks really are compiled
        again = engine.generate(
            TextToImage(preset="mini-sd", prompt="desert at golden hour", seed=5, steps=8)
        )
        assert counters["stats"]["unique_graphs"] == graphs  # eight steps, no new graph
    with Engine(model_dir=tmp_path, device="cpu") as plain_engine:
        plain = plain_engine.generate(request)
    assert again.images[0].size == (128, 128)
    assert psnr(first.images, plain.images) > 40  # float reassociation only
