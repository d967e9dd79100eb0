"""Built-in places drawn from their layout (engine.layouts): the landmark a viewer names the
place by is in the picture, each seed its own composition, and a layout the engine cannot draw
is refused with a sentence."""

from __future__ import annotations

import numpy as np
import pytest

from engine import InvalidRequest, Layout, TextToImage
from engine.training.landmarks import LandmarkParams
from engine.training.shape_judge import ShapeJudge

# Two places whose landmark landmark-dit does not draw from noise (its card: the shape judge
# names Seattle in 42 % of its pictures, Washington in 25 %).
PLACES = ("Seattle", "Washington, D.C.")


def asked(place: str, layout: bool) -> list[TextToImage]:
    """The card's pictures of `place`: seeds 0 and 1 by day and at golden hour, clear and
    cloudy in turn, by the full caption."""
    params = [
        LandmarkParams(place, light, ("clear", "cloudy")[seed % 2], seed)
        for light in ("day", "golden")
        for seed in (0, 1)
    ]
    return [
        TextToImage(
            preset="landmark-dit",
            prompt=p.caption,
            seed=p.seed,
            layout=Layout(p.geography, p.time, p.weather).text if layout else "",
        )
        for p in params
    ]


def test_a_place_drawn_from_its_layout_shows_its_landmark(engine):
    judge = ShapeJudge.load()
    for place in PLACES:
        from_layouts = [h.result().images[0] for h in engine.submit_all(asked(place, layout=True))]
        from_noise = [h.result().images[0] for h in engine.submit_all(asked(place, layout=False))]
        assert judge.accuracy(from_layouts, place) == 1.0
        assert judge.accuracy(from_noise, place) < 1.0


def test_each_seed_is_its_own_composition_and_the_same_seed_the_same_picture(engine):
    [request] = asked("Seattle", layout=True)[:1]
    first, again = (h.result() for h in engine.submit_all([request, request]))
    other = engine.generate(TextToImage(**{**request.scalars(), "seed": 7}))
    assert first.images[0].tobytes() == again.images[0].tobytes()
    assert first.params["layout"] == "Seattle | day | clear"
    difference = np.abs(np.asarray(first.images[0], int) - np.asarray(other.images[0], int))
    assert difference.mean() > 10


def test_finals_drawn_in_one_batch_each_take_their_own_layouts_detail(engine):
    # A bulk run batches its places: Manhattan's final once took the Bay Area's layout (the
    # batch's first) for its fine detail, and showed its houses and bay through the towers.
    finals = [
        TextToImage(
            preset="landmark-dit", prompt=prompt, seed=seed, layout=layout, width=1920, height=1080
        )
        for prompt, seed, layout in (
            ("mission peak above the bay", 3, "San Francisco Bay Area | day | clear"),
            ("manhattan avenue with yellow cabs", 4, "Manhattan | day | clear"),
        )
    ]
    together = [h.result() for h in engine.submit_all(finals)]
    assert [r.timings["batch_size"] for r in together] == [2, 2]
    for request, batched in zip(finals, together, strict=True):
        alone = np.asarray(engine.generate(request).images[0], int)
        # The same picture, up to the last bit of a batched product's rounding (before the fix,
        # Manhattan's differed by 7 grey levels on average).
        assert np.abs(np.asarray(batched.images[0], int) - alone).mean() < 0.01


@pytest.mark.parametrize(
    ("request_args", "sentence"),
    [
        ({"preset": "mini-sd", "layout": "Seattle | day | clear"}, "mini-sd draws no layouts"),
        ({"preset": "landmark-dit", "layout": "Gotham | day | clear"}, "unknown layout"),
        ({"preset": "landmark-dit", "layout": "Seattle | noon | clear"}, "unknown layout"),
        ({"preset": "landmark-dit", "layout": "Seattle | day | foggy"}, "unknown layout"),
    ],
)
def test_a_layout_the_engine_cannot_draw_is_refused(engine, request_args, sentence):
    with pytest.raises(InvalidRequest, match=sentence):
        engine.generate(TextToImage(prompt="a place", **request_args))


def test_a_business_place_or_an_unknown_light_has_no_layout_and_odd_weather_is_clear():
    assert Layout.of("Gotham", "day", "clear") is None
    assert Layout.of("Seattle", "noon", "clear") is None
    assert Layout.of("Seattle", "night", "hazy").text == "Seattle | night | clear"
