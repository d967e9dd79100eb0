"""A bulk run's variants, found and counted by the database, inside one business."""

from __future__ import annotations

from dataclasses import replace

import pytest

from storage.models import VariantStatus
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
