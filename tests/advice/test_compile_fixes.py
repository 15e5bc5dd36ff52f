"""On a real multi-line report of each family of failure below the Python checks,
`errkit explain` reads the sizes and names from the text and prints a fix computed from them."""

from __future__ import annotations

import importlib.util

import pytest
from support import ROOT, errkit_subprocess

_spec = importlib.util.spec_from_file_location("realworld_report", ROOT / "tests" / "realworld" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)
CASES = {c["id"]: c for c in report.load_cases()}

# case id -> (code, kernel told, (kernel of the fix, label, value) computed from the text)
EXPECTED = {
    # 29.96M used of a 16.00M scoped VMEM limit: the limit rounded up to whole MiB, or shrink 1.88x
    "pytorch-xla-7962-vmem": ("RA810", None, [(None, "vmem_limit_bytes at least", 30 << 20),
                                               (None, "--xla_tpu_scoped_vmem_limit_kib at least", 30 << 10),
                                               ("splash", "shrink block_q / block_kv by", 1.88)]),
    # SMEM: the allocation dump names splash_mha_fwd_segmented_residuals: the fix is splash's
    "maxtext-4929-smem-splash": ("RA811", "splash", [("splash", "grow block_q / block_kv by", 2.0)]),
    # Triton: Required 663808 of 101376 bytes of shared memory
    # (mamba's own Triton kernel: the text shows Triton's autotuner and no JAX, so the Triton fix's)
    "mamba-387-autotuner": ("RA820", None, [(None, "shrink factor needed", 6.55),
                                             (None, "divide BLOCK_M x BLOCK_N x num_stages by", 8)]),
    "jax-19453-dot-dtype": ("RA821", None, [(None, "operand to cast", "second (fp32)"), (None, "cast it to", "bf16")]),
    "lwm-39-shard-map-divisible": ("RA829", None, [(None, "pad the axis to", 8), (None, "padding to add", 7)]),
    "pytorch-xla-8797-slice-tiling": ("RA806", None, [(None, "slice size", 8)]),
    "jax-23833-cudnn-load": ("RA825", None, [(None, "missing library", "libcudnn_engines_precompiled.so.9.4.0")]),
}


@pytest.mark.parametrize("case_id", sorted(EXPECTED))
def test_a_real_report_gets_a_fix_computed_from_its_values(case_id):
    code, kernel, wanted = EXPECTED[case_id]
    rc, results = report.explain(CASES[case_id]["text"])
    first = results[0]
    assert (rc, first["code"], first["confidence"]) == (0, code, "exact")
    assert ((first["matched"].get("kernel") or {}).get("id")) == kernel
    offered = [((fix.get("kernel") or {}).get("id"), s["label"], s.get("value"))
               for fix in first["fixes"] for s in fix["suggestions"]]
    for want in wanted:
        assert want in offered, (want, offered)


def test_the_command_line_prints_the_vmem_limit_to_set():
    proc = errkit_subprocess("explain", CASES["pytorch-xla-7962-vmem"]["text"])
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr
    assert "RA810" in out and "vmem_limit_bytes at least: 31457280" in out and "shrink block_q / block_kv by: 1.88" in out
