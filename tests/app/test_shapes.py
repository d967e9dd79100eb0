"""A variant in three shapes: each shape its own render row, job and file, made again the same."""

from __future__ import annotations

import json
import subprocess

import pytest
from PIL import Image
from skimage import data

from app.services import UserError, renders, spots
from engine import Engine
from storage import JobQueue
from storage.errors import NotFound
from tests.app.test_spots import form


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


def size_of(path) -> tuple[int, int]:
    video = json.loads(
        subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "v", "-show_streams", "-of", "json",
             str(path)],
            capture_output=True, check=True,
        ).stdout
    )["streams"][0]  # fmt: skip
    return video["width"], video["height"]


def test_each_shape_is_its_own_render_job_and_file(ctx, business_ids, tmp_path, engine):
    business, other = business_ids
    photo = tmp_path / "espresso.png"
    Image.fromarray(data.coffee()).save(photo)
    view = spots.create_spot(ctx, business, form(photo))
    base = spots.choose_background(ctx, engine, business, view.id, 0)
    queue = JobQueue(ctx.db)

    # Jobs: one per tier and shape; a 16:9 job keeps the key it always had.
    wide = renders.enqueue(ctx, business, base, "final")
    tall = renders.enqueue(ctx, business, base, "final", shape="9:16")
    square = renders.enqueue(ctx, business, base, "preview", shape="1:1")
    assert len({wide, tall, square}) == 3
    assert renders.enqueue(ctx, business, base, "final", shape="9:16") == tall  # not a second
    assert queue.get(wide).idempotency_key == f"variant-render:{base}:final"
    assert queue.get(tall).idempotency_key == f"variant-render:{base}:final-9x16"
    assert queue.get(tall).payload == {"variant_id": base, "tier": "final", "shape": "9:16"}
    assert queue.latest(renders.job_key(base, "final")).id == wide
    with pytest.raises(UserError, match=r"^unknown shape '4:3'; one of: 16:9, 9:16, 1:1$"):
        renders.enqueue(ctx, business, base, "preview", shape="4:3")
    with pytest.raises(NotFound):  # another business's variant reads as a missing one
        renders.enqueue(ctx, other, base, "preview", shape="9:16")

    # The queued square preview, worked as a worker works it: the shape comes from the job.
    renders.RenderHandler("worker-1").run(ctx, engine, queue.get(square), None)
    made_square = renders.latest(ctx, business, base, "preview", "1:1")
    first = renders.render_variant(ctx, engine, business, base, "preview", shape="9:16")
    again = renders.render_variant(ctx, engine, business, base, "preview", shape="9:16")
    for view_ in (made_square, first, again):
        assert view_.qc_passed, view_.qc_report
    assert size_of(made_square.path) == (360, 360) and size_of(first.path) == (360, 640)
    assert made_square.qc_report["spec"] == "preview (1:1)"
    assert first.path.read_bytes() == again.path.read_bytes()  # made again, the same bytes
    assert first.path.read_bytes() != made_square.path.read_bytes()

    # Lineage: a row per render, each with its shape, each file traced to the variant.
    with ctx.tenant(business) as tenant:
        rows = [(r.tier, r.shape, r.worker) for r in tenant.variants.renders(base)]
        assert rows == [
            ("preview", "1:1", "worker-1"),
            ("preview", "9:16", None),
            ("preview", "9:16", None),
        ]
        for made in (made_square, again):
            provenance = tenant.variants.provenance(made.asset_id)
            assert provenance.variant.id == base and provenance.render.shape == made.shape
    latest = renders.latest(ctx, business, base, "preview", "9:16")
    assert latest.render_id == again.render_id and latest.shape == "9:16"
    assert renders.latest(ctx, business, base, "preview") is None  # no 16:9 preview yet
    with pytest.raises(NotFound):
        renders.latest(ctx, other, base, "preview", "9:16")
