"""The variant matrix is counted and costed before it runs, from the cache and a short probe."""

from __future__ import annotations

import pytest

from app.services import UserError, library
from app.services.backgrounds import background, background_request
from app.services.matrix import plan_matrix
from engine import Engine
from storage import NotFound


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


def spots(ctx, business: int, n: int) -> list[int]:
    with ctx.tenant(business) as tenant:
        campaign = tenant.campaigns.create("Spring trail sale")
        return [
            tenant.campaigns.create_spot(
                campaign.id, template_id="product-hero", template_version="1", duration_s=15
            ).id
            for _ in range(n)
        ]


def ids(views, *names):
    by_name = {v.name: v.id for v in views}
    return [by_name[n] for n in names]


def test_the_plan_counts_variants_and_backgrounds_and_prices_what_is_missing(
    ctx, business_ids, engine
):
    business = business_ids[0]
    creatives = spots(ctx, business, 2)
    geographies = ids(library.geographies(ctx, business), "Miami", "Denver", "Seattle")
    audiences = ids(library.audiences(ctx, business), "Young runners", "Families")  # both daylight
    plan = plan_matrix(
        ctx, engine, business, creatives, geographies, audiences, preset="mini-sd", seed=5
    )
    assert (plan.variants, plan.backgrounds, plan.backgrounds_cached) == (12, 3, 0)
    assert plan.seconds_per_background > 0.05  # a real generation was timed (how long: the load)
    assert plan.estimated_s == pytest.approx(3 * plan.seconds_per_background)

    miami = plan.geographies[0]
    request = background_request(
        miami, plan.audiences[0], business_id=business, preset="mini-sd", seed=5
    )
    background(ctx, engine, business, request)
    again = plan_matrix(
        ctx, engine, business, creatives, geographies, audiences, preset="mini-sd", seed=5
    )
    assert again.backgrounds_cached == 1
    # Now priced from what the stored background really cost.
    assert again.estimated_s == pytest.approx(2 * again.seconds_per_background)


def test_a_plan_refuses_what_it_cannot_make(ctx, business_ids, engine):
    a, b = business_ids
    creatives = spots(ctx, a, 1)
    geography = ids(library.geographies(ctx, a), "Chicago")
    audience = ids(library.audiences(ctx, a), "Students")
    with pytest.raises(UserError, match="choose at least one geography"):
        plan_matrix(ctx, engine, a, creatives, [], audience, preset="mini-sd")
    with pytest.raises(NotFound, match="geography 999999 not found"):
        plan_matrix(ctx, engine, a, creatives, [999999], audience, preset="mini-sd")
    with pytest.raises(NotFound, match="spot"):  # another business's spot is not found either
        plan_matrix(ctx, engine, b, creatives, geography, audience, preset="mini-sd")
