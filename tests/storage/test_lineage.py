"""Lineage over a four-level variant tree, and from an asset back to what made it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from storage.repos.variants import GenerationParams
from tests.samples import png_bytes
from tests.storage.test_crud import PARAMS

pytestmark = pytest.mark.backends  # on SQLite and on PostgreSQL


def test_four_level_tree(ctx, business_ids):
    #        root
    #       /    \
    #      a      b
    #     / \
    #   a1   a2
    #   |
    #  a1x
    with ctx.tenant(business_ids[0]) as t:
        campaign = t.campaigns.create("Lineage")
        spot = t.campaigns.create_spot(
            campaign.id, template_id="product-hero", template_version="1", duration_s=30
        )

        def child(parent, seed):
            return t.variants.create(spot.id, replace(PARAMS, seed=seed), parent_id=parent)

        root = child(None, 1)
        a, b = child(root.id, 2), child(root.id, 3)
        a1, a2 = child(a.id, 4), child(a.id, 5)
        a1x = child(a1.id, 6)
        video = t.assets.add(png_bytes((1, 2, 3)), "final.png")
        t.variants.add_render(a1x.id, tier="final", asset_id=video.id)
        upload = t.assets.add(png_bytes((9, 9, 9)), "upload.png")

    with ctx.tenant(business_ids[0]) as t:
        ids = lambda rows: [r.id for r in rows]  # noqa: E731
        assert ids(t.variants.ancestors(a1x.id)) == [a1.id, a.id, root.id]
        assert ids(t.variants.ancestors(root.id)) == []
        assert ids(t.variants.descendants(root.id)) == [a.id, b.id, a1.id, a2.id, a1x.id]
        assert ids(t.variants.descendants(a.id)) == [a1.id, a2.id, a1x.id]
        assert ids(t.variants.descendants(a1x.id)) == []

        origin = t.variants.provenance(video.id)
        assert origin.variant.id == a1x.id
        assert origin.render.tier.value == "final"
        assert origin.params == replace(PARAMS, seed=6)
        assert ids(origin.ancestors) == [a1.id, a.id, root.id]
        assert [GenerationParams.of(v).seed for v in origin.ancestors] == [4, 2, 1]

        uploaded = t.variants.provenance(upload.id)
        assert (uploaded.variant, uploaded.render, uploaded.params) == (None, None, None)
