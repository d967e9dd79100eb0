"""Shifted patches (engine.patch_shift) on landmark-dit's committed weights: its pictures lose the
16-pixel patch grid that plain diffusers' sampling leaves, a render repeats bit for bit, the
step cache composes with it, and a result's revision says which sampler drew it."""

from __future__ import annotations

import statistics

import pytest

from engine import Engine
from engine.bench import methods, psnr
from engine.detail import patch_grid
from engine.errors import InvalidRequest
from engine.loading import model_revision
from engine.requests import Task, TextToImage

PROMPTS = (
    "saguaros and red buttes during the day, clear",
    "broadway honky-tonk neon during the day, clear",
    "manhattan avenue with yellow cabs during the day, clear",
)


def place(prompt: str, recipe: str = "exact") -> TextToImage:
    return TextToImage(preset="landmark-dit", prompt=prompt, seed=0, recipe=recipe)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("m"), device="cpu", shifted_patches=False) as e:
        yield e


def test_shifted_patches_draw_landmark_dit_without_its_patch_grid(engine, plain, tmp_path):
    shifted = [engine.generate(place(p)) for p in PROMPTS]
    unshifted = [plain.generate(place(p)) for p in PROMPTS]
    before = [patch_grid(r.images[0]) for r in unshifted]
    after = [patch_grid(r.images[0]) for r in shifted]
    # Plain sampling shows the tiles (saguaros as green squares); shifted, the steps across
    # tile borders are within half again of the steps elsewhere.
    assert statistics.mean(before) >= 1.6, before
    assert max(after) <= 1.5 and statistics.mean(before) - statistics.mean(after) >= 0.4, after
    again = engine.generate(place(PROMPTS[0]))
    assert again.images[0].tobytes() == shifted[0].images[0].tobytes()
    revision = shifted[0].params["model_revision"]
    assert revision == model_revision("landmark-dit", tmp_path)
    assert revision.endswith("+shifted-patches")
    assert unshifted[0].params["model_revision"] == revision.removesuffix("+shifted-patches")
    assert engine.revision("landmark-dit") == revision
    assert plain.revision("landmark-dit") == unshifted[0].params["model_revision"]


def test_the_grid_alternates_over_the_steps_the_transformer_computes(engine):
    """Unshifted first, then every other call: also on a cached run, whose full steps are
    not every other step of the schedule (a 144-line picture is 18 latent rows, 20 padded)."""
    engine.generate(place(PROMPTS[0]))
    transformer = engine.pool.get("landmark-dit").base.transformer
    rows: list[int] = []
    seen = transformer.pos_embed.register_forward_pre_hook(lambda _, a: rows.append(a[0].shape[-2]))
    try:
        engine.generate(place(PROMPTS[0]))
        exact = rows[:]
        rows.clear()
        engine.generate(place(PROMPTS[0], "fast"))
    finally:
        seen.remove()
    assert exact == [18, 20] * 10
    assert rows == [18, 20, 18, 20, 18]  # fast computes 5 of the 20 steps


def test_the_step_cache_composes_with_shifted_patches(engine, plain):
    """`balanced` stays about as close to its exact picture as on plain sampling (alternating
    grids by the schedule's step instead lost 4-5 dB), and the grid stays away."""

    def fidelity(e: Engine) -> tuple[float, list]:
        cached = [e.generate(place(p, "balanced")) for p in PROMPTS]
        exact = [e.generate(place(p)) for p in PROMPTS]
        assert min(r.skipped_blocks for r in cached) > 0.3
        scores = [psnr(c.images, x.images) for c, x in zip(cached, exact, strict=True)]
        return statistics.mean(scores), cached

    shifted, cached = fidelity(engine)
    unshifted, _ = fidelity(plain)
    assert shifted >= unshifted - 1.5, (shifted, unshifted)
    assert max(patch_grid(r.images[0]) for r in cached) <= 1.5


def test_a_picture_too_large_to_shift_is_refused_with_a_sentence(engine, plain):
    """Padded, a 512-pixel side would need 33 patches of a 32-patch position table."""
    wide = TextToImage(preset="landmark-dit", prompt=PROMPTS[0], width=512, height=288, steps=2)
    with pytest.raises(InvalidRequest, match="at most 496 pixels a side"):
        engine.generate(wide)
    assert plain.generate(wide).images[0].size == (512, 288)


def test_peers_are_benched_on_plain_sampling_only(tmp_path):
    with pytest.raises(ValueError, match="plain sampling"):
        next(methods("landmark-dit", Task.TEXT_TO_IMAGE, ["magcache:0.1"], shifted_patches=True))
