"""JAX's GPU attention kernels (Triton `attention.mha`, Mosaic GPU `attention_mgpu`) and the
x-algorithm wordings they share: `errkit explain` offers each wording the fixes of the
kernel that raised it, with values within that kernel's rules, and those values run the real kernel
where the old suggestions did not (tests/verify/gpu_attention.py)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

sys.path.insert(0, str(Path(__file__).parents[1]))  # verify/
from errkit.explain import command  # noqa: E402
from support import pasted_text  # noqa: E402
from verify import gpu_attention as runners  # noqa: E402


def explain_json(text: str) -> dict:
    out = io.StringIO()
    rc = command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO())
    assert rc == 0, text
    return json.loads(out.getvalue().splitlines()[0])


def offered(res: dict) -> dict:
    """label -> value of every suggestion offered, with the kernel its fix is for."""
    return {s["label"]: (fix["kernel"] and fix["kernel"]["id"], s.get("value"))
            for fix in res["fixes"] for s in fix["suggestions"] if "value" in s}


def kernels_of_fixes(res: dict) -> set:
    return {fix["kernel"] and fix["kernel"]["id"] for fix in res["fixes"]}


def frame(path: str, line: int, function: str) -> str:
    return f'Traceback (most recent call last):\n  File "/venv/lib/python3.11/site-packages/{path}", line {line}, in {function}\n    raise\n'


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


# -- the Triton wording: powers of two only ---------------------------------------------------------

@pytest.mark.parametrize("text, label, want", [
    ("ValueError: q_seq_len=336 must be a multiple of block_q=96",
     "nearest power-of-two block_q (16 to 512) dividing q_seq_len (none: pad instead)", [16]),
    ("ValueError: kv_seq_len=320 must be a multiple of block_k=128",
     "nearest power-of-two block_k (16 to 512) dividing kv_seq_len (none: pad instead)", [64]),
])
def test_the_triton_wording_offers_only_triton_valid_values(text, label, want):
    res = explain_json(text)
    assert res["matched"]["kernel"]["id"] == "gpu-mha"
    assert kernels_of_fixes(res) <= {"gpu-mha", None}  # no Mosaic GPU fix (multiples of 64) for mha
    kernel, value = offered(res)[label]
    assert (kernel, value) == ("gpu-mha", want)
    assert all(is_power_of_two(v) for v in value)


def test_the_old_triton_block_fails_and_the_new_one_runs():
    # the old suggestion, gcd(q_seq_len, block_q) = 48, divides 336 but is no power of two
    with pytest.raises(ValueError, match="power of 2"):
        runners.q_seq_len_blocks({"q_seq_len": 336, "block_q": 48})
    runners.q_seq_len_blocks({"q_seq_len": 336, "block_q": 16})


# -- the Mosaic GPU wording: multiples of 64 only ---------------------------------------------------

@pytest.mark.parametrize("text, label, want", [
    ("ValueError: kv_seq_len=4160 must be a multiple of block_kv=128",
     "block_kv dividing kv_seq_len (none: no multiple of 64 does, use another kernel)", [64]),
    ("ValueError: kv_seq_len=1056 must be a multiple of block_kv=128",  # the old suggestion: 32
     "block_kv dividing kv_seq_len (none: no multiple of 64 does, use another kernel)", []),
    ("NotImplementedError: q_seq_len=4224 must be a multiple of block_q * 2=256",
     "block_q * 2 dividing q_seq_len (set block_q to half of it; none: pad instead)", [128]),  # 384: too much shared memory with head_dim 128
    ("NotImplementedError: kv_seq_len=4224 must be a multiple of config.block_kv_dkv=128 * compute_wgs=2",
     "block_kv_dkv with block_kv_dkv * compute_wgs dividing kv_seq_len (none: no multiple of 64 does)", [64]),  # 192 * 2 overflows it
    ("ValueError: self.block_kv=32 must be a multiple of 64", "nearest valid block_kv", [64]),
    # every case: 256 keys outgrow an H100's shared memory with head_dim=128, block_q=128 (the old ones: [256, 320])
    ("ValueError: self.block_kv=300 must be a multiple of 64", "nearest valid block_kv", [64]),
])
def test_the_mosaic_gpu_wording_offers_only_multiples_of_64(text, label, want):
    res = explain_json(text)
    assert res["matched"]["kernel"]["id"] == "mosaic-gpu"
    assert kernels_of_fixes(res) <= {"mosaic-gpu", None}  # no Triton fix (powers of two from 16) for Mosaic GPU
    kernel, value = offered(res)[label]
    assert kernel in ("mosaic-gpu", None) and value == want
    assert all(v % 64 == 0 for v in value)


@pytest.mark.parametrize("params, old", [  # the old suggestions' values, applied as the verification suite does
    ({"kv_seq_len": 1056, "block_kv": 32}, "self.block_kv=32 must be a multiple of 64"),  # RA231's old gcd
    ({"block_q": None, "block_kv": 320}, "N must be a multiple of 8 and <= 256"),  # RA220's old nearest([256, 320], 300)
])
def test_the_old_mosaic_gpu_values_fail(params, old):
    run = runners.kv_seq_len_blocks if "kv_seq_len" in params else runners.mosaic_blocks
    with pytest.raises(Exception) as err:
        run(params)
    assert old in str(err.value)


# -- a wording x-algorithm's FA3 shares with JAX's Mosaic GPU kernel ---------------------------------

SHARED = "NotImplementedError: q_seq_len=1000 must be a multiple of block_q * 2=128\n"


@pytest.mark.parametrize("path", [
    "jax/experimental/pallas/ops/gpu/attention_mgpu.py",
    "phoenix/xrex/pallas/ranker_attention_fa3.py",  # FA3 copies TuningConfig and the checks: the same rules
])
def test_the_shared_wording_is_told_mosaic_gpu(path):
    res = explain_json(frame(path, 313, "_attention_forward") + SHARED)
    assert res["code"] == "RA230" and res["matched"]["kernel"]["id"] == "mosaic-gpu"
    assert "x-algorithm" in res["matched"]["source"]
    assert kernels_of_fixes(res) <= {"mosaic-gpu", None}
    assert offered(res)["q_seq_len padded for block_q * 2"] == ("mosaic-gpu", [1024])


def test_a_lookup_says_which_kernel_each_fix_is_for():
    res = explain_json("RA230")
    assert kernels_of_fixes(res) == {"gpu-mha", "mosaic-gpu", None}
    out = io.StringIO()
    command.run(["RA231"], as_json=False, show_all=False, out=out, err=io.StringIO())
    text = out.getvalue()
    assert "fix 1: for mosaic-gpu: " in text and "fix 2: for gpu-mha: " in text


# -- what the runners see: the real kernels ---------------------------------------------------------

def test_a_mosaic_gpu_error_from_the_runner_is_explained_as_its_entry():
    with pytest.raises(NotImplementedError) as err:
        runners.q_seq_len_blocks({"q_seq_len": 1000, "block": 128})
    assert explain_json(pasted_text(err.value))["code"] == "RA230"


def test_the_runners_leave_no_stubbed_cuda_version_behind():
    from jax.experimental.pallas.ops.gpu import attention_mgpu

    before = attention_mgpu.cuda_versions
    runners.mosaic()
    assert attention_mgpu.cuda_versions is before


@pytest.mark.parametrize("path, kernel", [
    ("jax/experimental/pallas/ops/gpu/attention_mgpu.py", "mosaic-gpu"),
    ("jax/experimental/pallas/ops/tpu/splash_attention/splash_attention_kernel.py", "splash"),
    (None, None),
])
def test_need_to_specify_backward_blocks_is_told_by_the_traceback(path, kernel):
    """RA223's wording is raised verbatim by Mosaic GPU attention and TPU splash attention."""
    text = (frame(path, 358, "_bwd") if path else "") + \
        "ValueError: Need to specify backward blocks.\n"
    res = explain_json(text)
    assert res["code"] == "RA223"
    assert (res["matched"]["kernel"] or {}).get("id") == kernel
    assert kernels_of_fixes(res) - {None} == ({kernel} if kernel else {"mosaic-gpu", "splash"})  # None: our kernel
