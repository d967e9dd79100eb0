"""`spotforge generate`, `bench` and `models`, run as a user runs them."""

from __future__ import annotations

import json
import math
import subprocess

import pytest
from PIL import Image
from skimage import data

from tests.app.test_cli import spotforge


@pytest.fixture(scope="module")
def photo_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "cup.jpg"
    Image.fromarray(data.coffee()).save(path)
    return path


def probe(path) -> dict:
    out = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-count_frames",
            "-show_entries",
            "stream=codec_name,width,height,nb_read_frames",
            "-of",
            "json",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)["streams"][0]


def test_generate_a_still(tmp_path):
    run = spotforge(
        tmp_path,
        "generate",
        "--prompt",
        "a beach at noon",
        "--seed",
        "7",
        "--size",
        "128x128",
        "-o",
        str(tmp_path / "beach.png"),
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert Image.open(tmp_path / "beach.png").size == (128, 128)
    # No --preset: the default, our own landmark-dit, which knows "beach" and "at" only.
    assert summary["params"]["seed"] == 7 and summary["params"]["model_id"] == "landmark-dit"
    assert summary["params"]["prompt"] == "beach at"
    assert summary["warnings"] == ["landmark-dit does not know 'a', 'noon'; left out of the prompt"]
    assert "warning: landmark-dit does not know 'a', 'noon'" in run.stderr
    assert summary["timings"]["denoising"] > 0


def test_generate_inpaint_and_clips(tmp_path, photo_file):
    mask = tmp_path / "mask.png"
    inpaint = [
        "generate", "--preset", "mini-sd", "--task", "inpaint", "--prompt", "desert dunes",
        "--image", str(photo_file), "--mask", str(mask), "--size", "128x128",
        "-o", str(tmp_path / "rock.png"),
    ]  # fmt: skip
    Image.new("L", (400, 300), 255).save(mask)
    wrong = spotforge(tmp_path, *inpaint)
    assert wrong.returncode == 1
    assert "the mask is 400x300 but the image is 600x400" in wrong.stderr
    Image.new("L", (600, 400), 255).save(mask)
    right = spotforge(tmp_path, *inpaint)
    assert right.returncode == 0, right.stderr
    clip = spotforge(
        tmp_path,
        "generate",
        "--preset",
        "tiny-wan-i2v",
        "--task",
        "reference-to-video",
        "--prompt",
        "cup",
        "--image",
        str(photo_file),
        "-o",
        str(tmp_path / "cup.mp4"),
    )
    assert clip.returncode == 0, clip.stderr
    assert probe(tmp_path / "cup.mp4") == {
        "codec_name": "h264",
        "width": 128,
        "height": 128,
        "nb_read_frames": "9",
    }


def test_generate_errors(tmp_path, photo_file):
    cases = [
        (["--task", "image-to-image", "--prompt", "x"], "image-to-image needs --image"),
        (["--task", "dance", "--prompt", "x"], "unknown task 'dance'"),
        (["--preset", "sdxl", "--prompt", "x"], "spotforge models pull sdxl"),
        (
            ["--task", "image-to-image", "--prompt", "x", "--image", str(photo_file.parent / "no")],
            "cannot read",
        ),
        (["--prompt", "x", "--size", "big"], "size must look like 512x512"),
        (
            ["--preset", "mini-sd", "--prompt", "a red car"],
            "mini-sd knows none of the words in the prompt; it knows:",
        ),
    ]
    for args, message in cases:
        run = spotforge(tmp_path, "generate", *args, "-o", str(tmp_path / "x.png"))
        assert run.returncode == 1 and message in run.stderr, (args, run.stderr)
        assert "Traceback" not in run.stderr


def test_bench_pairs_every_prompt_and_seed_with_plain_diffusers(tmp_path):
    table = tmp_path / "bench.md"
    run = spotforge(
        tmp_path, "bench", "--preset", "tiny-sd", "--steps", "4",
        "--method", "exact", "--method", "deepcache:2",
        "--prompt", "a red shoe on a rock", "--prompt", "a blue car", "--seed", "1", "--seed", "2",
        "--markdown", str(table),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    exact, peer = (json.loads(line) for line in run.stdout.splitlines())
    for row in (exact, peer):
        assert (row["preset"], row["steps"], row["size"], row["pairs"]) == (
            "tiny-sd",
            4,
            "256x256",
            4,
        )
        assert row["clock"] == "process CPU"
        low, high = row["speedup_range"]
        assert low <= row["speedup"] <= high
    # Our exact recipe is the plain pipeline's pictures; the peer's are close, not the same.
    assert math.isinf(exact["psnr_worst"]) and exact["ssim_mean"] == 1.0
    assert peer["method"] == "deepcache:2" and peer["skipped_blocks"] is None
    assert 10 < peer["psnr_worst"] <= peer["psnr_mean"] < math.inf
    assert "| tiny-sd | text-to-image | deepcache:2 |" in table.read_text()

    wrong = spotforge(tmp_path, "bench", "--preset", "tiny-sd", "--method", "deepcache")
    assert wrong.returncode == 1 and "unknown method 'deepcache'" in wrong.stderr


def test_bench_runs_each_peer_on_the_model_family_it_is_for(tmp_path):
    unet = spotforge(
        tmp_path, "bench", "--preset", "tiny-sd", "--steps", "6", "--method", "tgate:2",
        "--method", "layercache:2", "--prompt", "a red shoe on a rock", "--seed", "1",
    )  # fmt: skip
    assert unet.returncode == 0, unet.stderr
    peers = ["pab:2", "taylorseer:2", "magcache:0.5", "cachedit:0.5", "cachedit-ts:0.5"]
    # Ours at a share of our choosing, on the plain pipeline: the recipe's pictures at its share.
    ours = ["stepcache:0.35", "balanced"]
    transformer = spotforge(
        tmp_path, "bench", "--preset", "mini-dit", "--steps", "10",
        *(arg for peer in [*peers, *ours] for arg in ("--method", peer)),
        "--prompt", "city skyline at night, clear", "--seed", "1",
    )  # fmt: skip
    assert transformer.returncode == 0, transformer.stderr
    rows = [json.loads(line) for line in (unet.stdout + transformer.stdout).splitlines()]
    assert [row["method"] for row in rows] == ["tgate:2", "layercache:2", *peers, *ours]
    assert rows[-2]["psnr_mean"] == rows[-1]["psnr_mean"]
    for row in rows:
        # Each changed the picture (it ran) and kept it recognisably the same (it was attached
        # to the pipeline it was meant for, not a broken one).
        assert 12 < row["psnr_worst"] < math.inf, row
    # diffusers' first-block cache cannot run SD3's last block (it returns no caption states):
    # said as such, not as a traceback, and the methods after it are still measured.
    table = tmp_path / "partial.md"
    fbc = spotforge(tmp_path, "bench", "--preset", "mini-dit", "--steps", "4", "--method",
                    "fbc:0.1", "--method", "stepcache:0.5", "--prompt", "lake", "--seed", "1",
                    "--markdown", str(table))  # fmt: skip
    assert fbc.returncode == 1 and "fbc:0.1 does not run on mini-dit" in fbc.stderr
    assert "Traceback" not in fbc.stderr
    not_run, measured = (json.loads(line) for line in fbc.stdout.splitlines())
    assert not_run["method"] == "fbc:0.1" and "does not run" in not_run["note"]
    assert measured["method"] == "stepcache:0.5" and measured["pairs"] == 1
    assert "| mini-dit | text-to-image | stepcache:0.5 |" in table.read_text()


def test_models_list(tmp_path):
    run = spotforge(tmp_path, "models", "list")
    lines = {line.split()[0]: line for line in run.stdout.splitlines()[1:]}
    assert "Apache-2.0" in lines["flux-schnell"] and " no " in lines["flux-schnell"]
    assert "built-in" in lines["tiny-sd"] and "built-in" in lines["mini-sd"]
    assert "reference-to-video" in lines["tiny-wan-i2v"]
    pull = spotforge(tmp_path, "models", "pull", "tiny-sd")
    assert pull.returncode == 1 and "ships with Spotforge; there is nothing to pull" in pull.stderr
