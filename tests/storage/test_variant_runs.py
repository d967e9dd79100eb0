"""A bulk run's variants, found and counted by the database, inside one business."""

from __future__ import annotations

from dataclasses import replace

import pytest

from storage import NotFound
from storage.models import VariantStatus
from storage.repos.variants import GenerationParams
from tests.samples import png_bytes
from tests.storage.test_crud import PARAMS, _spot

pytestmark = pytest.mark.backends  # on SQLite and on PostgreSQL


def test_runs_are_counted_by_status_and_kept_apart(ctx, business_ids):
    a, b = business_ids
    with ctx.tenant(a) as t:
        spot = _spot(t)
        for i, run in enumerate(["run-1", "run-1", "run-1", "run-2"]):
            v = t.variants.create(spot.id, replace(PARAMS, extra={"run": run, "matrix_key": i}))
            if i == 0:
                t.variants.set_status(v.id, VariantStatus.READY)
    with ctx.tenant(b) as t:
        t.variants.create(_spot(t).id, replace(PARAMS, extra={"run": "run-1"}))
    with ctx.tenant(a) as t:
        counts = t.variants.run_counts("run-1")
        assert counts[VariantStatus.READY] == 1 and counts[VariantStatus.PLANNED] == 2
        assert sum(counts.values()) == 3  # business b's variant of a same-named run is not here
        assert [v.extra_params["matrix_key"] for v in t.variants.of_run("run-2")] == [3]
        assert t.variants.run_counts("no-such-run")[VariantStatus.READY] == 0


def test_a_run_written_in_bulk_read_by_columns_and_moved_in_one_update(ctx, business_ids):
    a, b = business_ids
    with ctx.tenant(b) as t:
        theirs = t.library.add_geography("Their town").id
        t.variants.create(_spot(t).id, replace(PARAMS, extra={"run": "run-1"}))
    with ctx.tenant(a) as t:
        spot = _spot(t)
        base = t.variants.create(spot.id, replace(PARAMS, extra={"role": "base"}))
        towns = [t.library.add_geography(f"Town {i}").id for i in range(3)]
        builtin = next(g.id for g in t.library.geographies() if g.business_id is None)
        people = t.library.add_audience("Runners").id
        cells = [
            (replace(PARAMS, seed=i, extra={"run": "run-1", "matrix_key": i}), g, people)
            for i, g in enumerate([*towns, builtin])
        ]
        ids = t.variants.create_many(spot.id, cells, parent_id=base.id)
        with pytest.raises(NotFound):  # another business's geography, checked once for all
            t.variants.create_many(spot.id, [(PARAMS, theirs, None)])
        assert t.variants.create_many(spot.id, []) == []
    with ctx.tenant(a) as t:
        made = t.variants.of_run("run-1")
        assert [v.id for v in made] == ids and [v.seed for v in made] == [0, 1, 2, 3]
        assert {(v.parent_id, v.status, v.run) for v in made} == {
            (base.id, VariantStatus.PLANNED, "run-1")
        }
        assert GenerationParams.of(made[1]) == cells[1][0]
        assert t.variants.run_cells("run-1") == {(spot.id, g, people) for _, g, _ in cells}
        t.variants.set_status(ids[0], VariantStatus.READY)
        moved = t.variants.set_run_status(
            "run-1", VariantStatus.QUEUED, among=(VariantStatus.PLANNED,)
        )
        assert moved == 3  # not the ready one, nor business b's variant of a same-named run
        assert t.variants.run_ids("run-1", (VariantStatus.QUEUED,)) == ids[1:]
        assert t.variants.run_ids("run-1") == ids
    with ctx.tenant(b) as t:
        assert t.variants.run_counts("run-1")[VariantStatus.PLANNED] == 1


def test_a_page_of_the_newest_variants_is_filtered_and_limited_by_the_database(ctx, business_ids):
    with ctx.tenant(business_ids[0]) as t:
        spot = _spot(t)
        base = t.variants.create(spot.id, replace(PARAMS, extra={"role": "base"}))
        towns = [t.library.add_geography(f"Town {i}").id for i in range(2)]
        people = t.library.add_audience("Runners").id
        made = [
            t.variants.create(spot.id, PARAMS, geography_id=towns[i % 2], audience_id=people).id
            for i in range(5)
        ]
        newest = t.variants.newest
        assert [v.id for v in newest(spot.id, limit=3)] == made[2:]  # oldest first
        assert [v.id for v in newest(spot.id, limit=10)] == [base.id, *made]
        assert [v.id for v in newest(spot.id, limit=10, personalized_only=True)] == made
        assert [v.id for v in newest(spot.id, limit=2, geography_id=towns[0])] == made[2::2]
        assert newest(spot.id, limit=10, audience_id=people + 1) == []
        with pytest.raises(NotFound):
            newest(spot.id + 1000, limit=1)


def test_which_generations_are_cached_in_few_queries(ctx, business_ids):
    a, b = business_ids
    with ctx.tenant(a) as t:
        image = t.assets.add(png_bytes(), "background.png")
        for key in ("k1", "k3"):
            t.generations.add(key, image, {}, 1.0)
        assert t.generations.existing([f"k{i}" for i in range(2500)]) == {"k1", "k3"}
    with ctx.tenant(b) as t:
        assert t.generations.existing(["k1"]) == set()  # another business's cache
