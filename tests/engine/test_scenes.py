"""The procedural scene generator that will train `mini-sd`: seeded, captioned, varied."""

from __future__ import annotations

import numpy as np

from engine.training.scenes import ARCHETYPES, TIMES, WEATHER, SceneParams, draw, sample_params


def test_same_seed_same_scene_and_caption():
    params = SceneParams("skyline", "night", "cloudy", seed=7)
    assert draw(params).tobytes() == draw(params).tobytes()
    assert params.caption == "city skyline at night, cloudy"
    assert (
        draw(SceneParams("skyline", "night", "cloudy", seed=8)).tobytes() != draw(params).tobytes()
    )


def test_every_combination_draws_a_scene_of_its_time_of_day():
    brightness = {}
    for archetype in ARCHETYPES:
        for time in TIMES:
            for weather in WEATHER:
                image = np.asarray(
                    draw(SceneParams(archetype, time, weather, seed=1)), dtype=np.float64
                )
                assert image.shape == (128, 128, 3) and image.std() > 10
                brightness.setdefault(time, []).append(image.mean())
    assert max(brightness["night"]) < min(brightness["day"])
    assert np.mean(brightness["golden"]) < np.mean(brightness["day"])


def test_sampling_covers_the_space():
    rng = np.random.default_rng(0)
    seen = {(p.archetype, p.time, p.weather) for p in (sample_params(rng, i) for i in range(600))}
    assert len(seen) == len(ARCHETYPES) * len(TIMES) * len(WEATHER)
