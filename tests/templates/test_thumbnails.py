"""Template thumbnails: each template in its own layout with its own sample business."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from templates.overlay import check_layout
from templates.spec import all_templates
from templates.storyboard import Brief, build_storyboard, left_out
from templates.thumbnails import SIZE, thumbnail


@pytest.fixture(scope="module")
def drawn():
    return {t.id: np.asarray(thumbnail(t), dtype=np.float32) for t in all_templates()}


@pytest.mark.parametrize("template", all_templates(), ids=lambda t: t.id)
def test_each_sample_is_a_brief_the_template_shows_whole(template):
    brief = Brief(**template.sample)
    check_layout(build_storyboard(template, brief))  # every line fits its slot
    assert left_out(template, brief) == []  # nothing typed that the template would not show
    assert brief.business_name and brief.cta_url


def test_five_thumbnails_tell_five_templates_apart(drawn):
    for (a, one), (b, other) in itertools.combinations(drawn.items(), 2):
        if one.shape == other.shape:
            assert np.abs(one - other).mean() > 20, f"{a} and {b} look alike"


def test_a_thumbnail_shows_every_scene_with_its_picture(drawn):
    for template in all_templates():
        sheet = drawn[template.id]
        rows = -(-len(template.scenes) // 2)
        assert sheet.shape[:2] == (rows * SIZE[1] + rows - 1, 2 * SIZE[0] + 1)
        for i in range(len(template.scenes)):
            x, y = (i % 2) * (SIZE[0] + 1), (i // 2) * (SIZE[1] + 1)
            cell = sheet[y : y + SIZE[1], x : x + SIZE[0]]
            assert cell.std() > 15, f"{template.id} scene {i + 1} is blank"
