"""The prepared GPU run keeps going on a machine without one: each part says what it did, the
upscaler is not started without the time for it, and nothing heavy is packed for the trip back."""

import io
import subprocess
import sys
import tarfile

from engine import gpu_suite


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
    assert not list(out.glob("*.tar*"))


def test_unknown_part_is_refused(tmp_path):
    command = [sys.executable, "-m", "engine.gpu_suite", str(tmp_path), "--parts", "kernel"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown parts ['kernel']" in done.stderr


def test_pack_leaves_data_and_checkpoints_behind_in_pieces_that_travel(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_suite, "PIECE", 4096)
    work = tmp_path / "work"
    (work / "train").mkdir(parents=True)
    for name in ("train/data.pt", "train/sr-net.ckpt", "train/sr-net-loss.csv", "plan.json"):
        (work / name).write_text("x")
    (work / "weights.safetensors").write_bytes(bytes(range(256)) * 40)  # 10 KiB
    gpu_suite._pack(work, tmp_path / "up.tar")
    pieces = sorted(tmp_path.glob("up.tar.*"))
    assert len(pieces) > 2 and [p.name for p in pieces] == [
        f"up.tar.{n:02d}" for n in range(len(pieces))
    ]
    assert all(p.stat().st_size <= 4096 for p in pieces) and not (tmp_path / "up.tar").exists()
    whole = io.BytesIO(b"".join(p.read_bytes() for p in pieces))
    with tarfile.open(fileobj=whole) as packed:
        assert packed.getnames() == ["plan.json", "train/sr-net-loss.csv", "weights.safetensors"]
        weights = packed.extractfile("weights.safetensors").read()
    assert weights == bytes(range(256)) * 40
