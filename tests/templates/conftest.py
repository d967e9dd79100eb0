from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from skimage import data

from templates.storyboard import Brand, Brief

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")


@pytest.fixture(scope="session")
def logo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("brand") / "logo.png"
    image = Image.new("RGBA", (400, 200), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((10, 10, 190, 190), fill=(242, 177, 52, 255))
    draw.rectangle((210, 60, 390, 140), fill=(255, 255, 255, 255))
    image.save(path)
    return path


@pytest.fixture(scope="session")
def brief(logo) -> Brief:
    return Brief(
        business_name="Harbor Coffee Co.",
        product_name="Single-origin espresso",
        headline="Your morning, perfected",
        body="Roasted in small batches every week, two blocks from the pier.",
        offer="20% off all beans",
        cta_text="Order at harborcoffee.com",
        cta_url="https://harborcoffee.com/tv",
        phone="(415) 555-0134",
        tagline="Small batch. Big flavour.",
        setting="a foggy San Francisco pier at dawn",
        brand=Brand(
            colors=["#1F3A5F", "#F2B134"], logo=logo, heading_font=DEJAVU / "DejaVuSerif-Bold.ttf"
        ),
    )


@pytest.fixture(scope="session")
def photos() -> dict[str, Image.Image]:
    """Real photographs from scikit-image: a backdrop and a product."""
    return {
        "backdrop": Image.fromarray(data.rocket()).convert("RGB"),
        "product": Image.fromarray(data.coffee()).convert("RGB"),
    }
