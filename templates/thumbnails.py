"""A template's thumbnail: its scenes in order, drawn by the video's own code with the
template's sample business (`Template.sample`) over the pictures in `templates/samples`.

Each template shows its own layout, colours and copy, so five templates read as five
different spots at a glance. The pictures are fixed files (a procedural landscape per
template and one product cut-out, made once with the project's scene generator and
segmenter; see templates/samples/README.md), so a thumbnail is the same on every machine.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from templates.export import scene_stills
from templates.motion import Still
from templates.spec import Template
from templates.storyboard import Brief, build_storyboard

SAMPLES = Path(__file__).parent / "samples"
SIZE = (320, 180)  # one scene on the sheet


def thumbnail(template: Template) -> Image.Image:
    """The template's scenes, two to a row, each as it looks halfway through."""
    board = build_storyboard(template, Brief(**template.sample))
    own = SAMPLES / f"{template.id}-product.png"  # a template whose subject is not a product
    with (
        Image.open(SAMPLES / f"{template.id}.jpg") as scene,
        Image.open(own if own.exists() else SAMPLES / "product.png") as product,
    ):
        scene, product = scene.convert("RGB"), product.convert("RGBA")
    visuals = {
        s.index: Still(scene, subject=product if s.visual.source == "product" else None)
        for s in board.scenes
        if s.visual.source != "brand"
    }
    return contact_sheet(scene_stills(board, visuals, SIZE))


def contact_sheet(stills: list[Image.Image], columns: int = 2) -> Image.Image:
    """Scenes in rows of `columns`, a white hairline between them."""
    width, height = stills[0].size
    rows = -(-len(stills) // columns)
    sheet = Image.new("RGB", (columns * width + columns - 1, rows * height + rows - 1), "white")
    for i, still in enumerate(stills):
        sheet.paste(still, ((i % columns) * (width + 1), (i // columns) * (height + 1)))
    return sheet
