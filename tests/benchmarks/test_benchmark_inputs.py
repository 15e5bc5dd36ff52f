"""The benchmarks' inputs build: a crash there shows only when someone runs benchmarks/run.py."""

from __future__ import annotations

import json
import sys

from errkit.generate import index as index_gen
from support import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import catalogues  # noqa: E402


def test_a_part_of_the_real_catalogue_keeps_its_kernels_and_indexes():
    real = catalogues.real_catalogue()
    part = catalogues.grown(len(real.entries) // 2)
    assert dict(part.kernels) == dict(real.kernels)
    assert any("valid(" in source for e in part.entries for f in e.fixes for source in f.suggest.values())
    assert len(index_gen.build(part)["entries"]) == len(real.entries) // 2


def test_the_gpu_benchmark_runs_its_code_paths_on_this_backend():
    """bench_kernel.py --gpu is for a GPU this CI does not have: its smoke mode runs every path
    (ours, JAX's mha, the xla reference, the correctness row) on one small shape here."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import kernel_gpu

    measured: dict = {}
    rows, notes = kernel_gpu.gpu_rows(smoke=True, repeats=1, measured=measured)
    names = [row.name for row in rows]
    assert any(name.startswith("kernel output") for name in names), names
    assert all(row.met for row in rows if row.name.startswith("kernel output")), rows
    assert sum("attention.mha" in name for name in names) == 2, names  # forward, forward+backward
    assert any("cudnn skipped" in line for line in notes), notes
    assert any("attention_mgpu skipped" in line for line in notes), notes
    assert not any("failed" in line for line in notes), notes
    (per_shape,) = measured.values()
    assert {"ours", "ours_triton", "xla", "mha"} <= set(per_shape) and all(f > 0 and b > 0 for f, b in per_shape.values())


def test_the_gpu_benchmark_sweeps_configurations_and_draws_its_chart(tmp_path):
    """--gpu --sweep times our kernel at explicit BlockSizes (two of them in smoke mode), and
    --chart writes a PNG of every implementation's TFLOP/s (read back: a real image)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import kernel_gpu

    rows, notes = kernel_gpu.sweep_rows(smoke=True, repeats=1)
    assert len(rows) == 2 and all(row.name.startswith("sweep ") and "BlockSizes(" in row.name for row in rows), (rows, notes)
    path = tmp_path / "chart.png"
    kernel_gpu.chart({"B=1 S=128 Hq=4 Hk=2 D=64 causal": {"ours": (3.0, 2.0), "mha": (2.5, None)}}, path)
    from matplotlib import image

    pixels = image.imread(path)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 1000 and pixels.std() > 0.01  # drawn, not blank


def test_the_tpu_benchmark_runs_its_code_paths_on_this_backend():
    """bench_kernel.py --tpu is for a TPU this CI does not have: its smoke mode runs ours, splash
    attention (in its interpreter) and the xla path on one small shape here, with the grid steps
    of every pallas_call, and one correctness case of the device check."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import kernel_tpu

    rows, notes, measured = kernel_tpu.tpu_rows(smoke=True, repeats=1)
    by_name = {m.name: m for m in measured}
    assert {"ours default", "splash 512", "splash 128", "xla"} <= set(by_name), by_name
    assert by_name["ours default"].errors and by_name["splash 512"].errors
    assert by_name["ours default"].fwd_steps and by_name["splash 512"].both_steps
    assert all(row.met for row in rows if "max error" in row.name), rows
    assert any("flash_attention 512 skipped" in line for line in notes), notes
    assert not any("failed" in m.note for m in measured), [m.note for m in measured]
    check, ok = kernel_tpu.check_rows(kernel_tpu.CHECK_CASES[6:7])
    assert ok and len(check) == 1


def test_gpu_benchmark_flop_counts():
    sys.path.insert(0, str(ROOT))
    from benchmarks.kernel_gpu import Shape

    assert Shape(4, 4096, 32, 8, 128, False).forward_flops() == 4 * 4 * 32 * 4096 * 4096 * 128
    assert Shape(4, 4096, 32, 8, 128, True).forward_flops() == 2 * 4 * 32 * 4096 * 4096 * 128


def test_every_exact_query_of_the_scaling_benchmark_is_recognised_alone():
    """bench_explain's scaling rows assert each query finds its entry; a wording recognised only at
    its raise site (located_only) is left out of them (it crashed the benchmark before)."""
    import bench_explain
    from errkit.explain.matching.index import Index
    from errkit.explain.matching.chunks import explain_chunks

    base = catalogues.grown(100)  # as the benchmark builds it
    exact, _ = bench_explain._queries(base)
    index = Index(json.loads(json.dumps(index_gen.build(base))))
    missed = [(code, text) for code, text in exact if [f.match.code for f in explain_chunks(index, [text])[0]][:1] != [code]]
    assert len(exact) > 100 and not missed, missed[:5]


def test_a_benchmark_that_raises_is_reported_failed_not_missed(tmp_path):
    """run.py runs each benchmark so that an exception exits 3 (failed) while exit 1 stays a missed
    target: bench_explain raised for days and run.py counted it as a miss with no row."""
    import subprocess

    import run

    raising, missing = tmp_path / "bench_raises.py", tmp_path / "bench_misses.py"
    raising.write_text("raise RuntimeError('boom')\n")
    missing.write_text("import sys\nsys.exit(1)\n")
    codes = [subprocess.run([sys.executable, "-c", run.CRASH_IS_3, str(path)], capture_output=True).returncode
             for path in (raising, missing)]
    assert codes == [3, 1]
