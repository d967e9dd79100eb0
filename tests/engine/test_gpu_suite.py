"""The prepared GPU run keeps going on a machine without one: each part says what it did, the
upscaler is not started without the time for it, and nothing heavy is packed for the trip back."""

import subprocess
import sys
import tarfile

from engine.gpu_suite import _pack


def test_each_part_reports_and_the_upscaler_waits_for_time(tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "engine.gpu_suite", str(out), "--budget-s", "60",
               "--parts", "kernels,swaps,upscaler"]  # fmt: skip
    subprocess.run(command, check=True, timeout=120)
    log = (out / "suite.log").read_text()
    assert "kernels.bench: 0 in" in log
    assert log.count("engine.acceleration.swap_bench --rows") == 2
    assert "upscaler: not run" in log
    assert "needs a CUDA GPU" in (out / "swaps.jsonl").read_text()
    assert not (out / "landmark-upscaler.tar").exists()


def test_unknown_part_is_refused(tmp_path):
    command = [sys.executable, "-m", "engine.gpu_suite", str(tmp_path), "--parts", "kernel"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown parts ['kernel']" in done.stderr


def test_pack_leaves_data_and_checkpoints_behind(tmp_path):
    work = tmp_path / "work"
    (work / "train").mkdir(parents=True)
    for name in ("train/data.pt", "train/sr-vae.ckpt", "train/sr-vae-loss.csv", "plan.json"):
        (work / name).write_text("x")
    _pack(work, tmp_path / "up.tar")
    with tarfile.open(tmp_path / "up.tar") as packed:
        assert packed.getnames() == ["plan.json", "train/sr-vae-loss.csv"]
