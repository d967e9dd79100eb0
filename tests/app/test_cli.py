"""The `spotforge` console script, run as a user runs it."""

from __future__ import annotations

import json
import subprocess

from PIL import Image
from skimage import data

from app.services.demo import BRIEF
from storage import migrate
from tests.app.conftest import SPOTFORGE, spotforge_env


def spotforge(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SPOTFORGE), *args],
        env=spotforge_env(tmp_path / "var"),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_database_commands(tmp_path):
    assert "base (empty)" in spotforge(tmp_path, "db", "current").stdout
    up = spotforge(tmp_path, "db", "upgrade")
    assert up.returncode == 0 and f"database at {migrate.head()}" in up.stdout
    assert (tmp_path / "var" / "spotforge.db").exists()
    down = spotforge(tmp_path, "db", "downgrade", "base")
    assert down.returncode == 0 and "base (empty)" in down.stdout


def test_business_and_campaign_commands(tmp_path):
    created = spotforge(tmp_path, "business", "create", "Harbor Bakery")
    assert created.returncode == 0 and created.stdout == "1\tHarbor Bakery\n"
    campaign = spotforge(
        tmp_path, "campaign", "create", "-b", "1", "Holiday pies", "--objective", "Pre-orders"
    )
    assert campaign.stdout == "1\tHoliday pies\n"
    listed = spotforge(tmp_path, "campaign", "list", "-b", "1")
    assert listed.stdout == "1\tdraft\tHoliday pies\tPre-orders\n"


def test_errors_are_one_clear_line(tmp_path):
    missing = spotforge(tmp_path, "campaign", "list", "-b", "42")
    assert missing.returncode == 1
    assert missing.stderr == "error: business 42 not found\n"
    blank = spotforge(tmp_path, "business", "create", "   ")
    assert blank.returncode == 1 and blank.stderr == "error: a business needs a name\n"


def test_a_spot_from_a_brief_file_then_its_variants(tmp_path):
    """What the page's Brief step does, scripted: the spot's id comes back as JSON, ready for
    `spotforge bulk --spot`."""
    photo = tmp_path / "espresso.png"
    Image.fromarray(data.coffee()).save(photo)
    brief = tmp_path / "brief.json"
    brief.write_text(json.dumps({**BRIEF, "objective": "Mornings", "colors": ["#203040"]}))
    assert spotforge(tmp_path, "business", "create", "Harbor Coffee").returncode == 0
    made = spotforge(tmp_path, "spot", "create", "-b", "1", "--campaign", "Espresso week",
                     "--brief", str(brief), "--photo", str(photo))  # fmt: skip
    assert made.returncode == 0, made.stderr
    spot = json.loads(made.stdout)
    notes = spot.pop("notes")
    assert spot == {"spot_id": 1, "campaign_id": 1, "template": "product-hero", "duration_s": 15}
    # What of the brief this spot leaves off the screen is said, on stderr as in the JSON.
    assert any(n.startswith("No logo yet") for n in notes)
    assert all(f"note: {n}" in made.stderr for n in notes)
    listed = spotforge(tmp_path, "campaign", "list", "-b", "1")
    assert listed.stdout == "1\tdraft\tEspresso week\tMornings\n"

    brief.write_text(json.dumps({**BRIEF, "headlne": "typo"}))
    for args, why in (
        (
            ["--brief", str(brief), "--photo", str(photo)],
            "fields Spotforge does not know (headlne)",
        ),
        (["--brief", str(tmp_path / "none.json"), "--photo", str(photo)], "cannot read the brief"),
        (["--brief", str(brief), "--photo", str(tmp_path / "none.png")], "no such file"),
    ):
        failed = spotforge(tmp_path, "spot", "create", "-b", "1", "--campaign", "X", *args)
        assert failed.returncode == 1, failed.stderr
        assert why in failed.stderr.splitlines()[-1] and "Traceback" not in failed.stderr
    brief.write_text(json.dumps(BRIEF))
    other = spotforge(tmp_path, "spot", "create", "-b", "9", "--campaign", "X",
                      "--brief", str(brief), "--photo", str(photo))  # fmt: skip
    assert other.returncode == 1 and "business 9 not found" in other.stderr


def test_a_scene_is_the_background_a_final_shows(tmp_path):
    """`spotforge scene`: the place's background at the final's size; a misspelt place is
    answered with names (tests/app/test_backgrounds.py checks its pixels)."""
    out = tmp_path / "a.png"
    look = spotforge(tmp_path, "scene", "-g", "Manhattan", "--light", "night", "-o", str(out))
    assert look.returncode == 0, look.stderr
    image = Image.open(out)
    assert (image.format, image.size) == ("PNG", (1920, 1080))
    typo = spotforge(tmp_path, "scene", "-g", "Manhatan", "-o", str(tmp_path / "c.png"))
    assert typo.returncode == 1 and not (tmp_path / "c.png").exists()
    assert "error: no geography named 'Manhatan'; try one of: Manhattan" in typo.stderr


def test_training_on_a_device_that_cannot_train_is_refused_in_words(tmp_path):
    import torch

    other = spotforge(tmp_path, "train", "--model", "mini-sd", "--device", "cuda")
    assert other.returncode == 1
    assert other.stderr.endswith("error: mini-sd trains on the CPU only; --device is for "
                                 "model v2's two stages\n")  # fmt: skip
    unknown = spotforge(tmp_path, "train", "--model", "landmark-upscaler", "--device", "tpu")
    assert unknown.stderr.endswith("error: unknown device 'tpu': cpu or cuda\n")
    if not torch.cuda.is_available():  # where CUDA works this would start a real run
        for model in ("landmark-dit", "landmark-upscaler"):
            gpu = spotforge(tmp_path, "train", "--model", model, "--device", "cuda")
            assert gpu.returncode == 1
            assert gpu.stderr.endswith("error: --device cuda: this machine has no CUDA GPU "
                                       "that torch can use\n")  # fmt: skip
