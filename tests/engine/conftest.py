from __future__ import annotations

import pytest
from PIL import Image
from skimage import data

from engine import Engine


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with Engine(model_dir=tmp_path_factory.mktemp("models"), device="cpu") as e:
        yield e


@pytest.fixture(scope="session")
def photo() -> Image.Image:
    """A real product-style photograph: scikit-image's espresso cup on a saucer."""
    return Image.fromarray(data.coffee()).convert("RGB")


def centre_mask(width: int, height: int) -> Image.Image:
    mask = Image.new("L", (width, height), 0)
    mask.paste(255, (width // 4, height // 4, 3 * width // 4, 3 * height // 4))
    return mask
