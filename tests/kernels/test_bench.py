"""The GPU benchmark must import and exit cleanly where there is no GPU."""

from kernels import bench


def test_bench_without_cuda_prints_one_line(monkeypatch, capsys):
    monkeypatch.setattr(bench.torch.cuda, "is_available", lambda: False)
    bench.main()
    assert capsys.readouterr().out.count("\n") == 1
