"""The values offered for a failed check satisfy every other rule of the kernel that raised it, and say
so where they depend on what the message cannot show: each case below is a bad call of the kind that
was once answered with a value the kernel then refused, run on the real kernel (the CPU's interpret
mode or lowering), explained, and its offered values applied and run again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

sys.path[:0] = [str(Path(__file__).parents[1]), str(Path(__file__).parents[2])]
from verify import calls  # noqa: E402

FAMILIES = calls.load_families()


def answer_for(family: str, call: dict) -> dict:
    err = calls.raised(FAMILIES[family], call, "cpu")
    assert err is not None, f"{call} ran"
    res = calls.explain(calls.pasted(err))
    assert res is not None, calls.pasted(err)
    return res


def suggestion(res: dict, label_start: str) -> dict:
    return next(s for f in res["fixes"] for s in f["suggestions"] if s["label"].startswith(label_start))


def runs(family: str, call: dict) -> bool:
    return calls.raised(FAMILIES[family], call, "cpu") is None


def no_failures(family: str, base: dict, change: dict):
    """The call explained, and no offered value failing on the kernel (some may be declined by what
    the answer states, or none offered)."""
    attempt = calls.attempt(FAMILIES[family], base, change)
    assert attempt.outcome == "explained", attempt.error
    assert not attempt.failures(), [(t.code, t.param, t.value, t.said) for t in attempt.failures()]
    return attempt


def attempt_clean(family: str, base: dict, change: dict):
    """As no_failures, and at least one offered value worked."""
    attempt = no_failures(family, base, change)
    assert any(t.outcome == "worked" for t in attempt.tried)
    return attempt


RAGGED = {"num_q_heads": 14, "num_kv_heads": 2, "kv_dtype": "bfloat16", "head_dim": 128, "page_size": 16,
          "pages_per_seq": 4, "num_kv_pages_per_block": 2, "num_queries_per_block": 8}


def test_ragged_14_query_heads_over_4_kv_heads_gets_the_tileable_kv_head_count():
    """num_q_heads=14 must be divisible by num_kv_heads=4, raised by ragged paged attention: 7 and 14
    kv heads divide 14 but 14 and 28 combined kv heads do not tile (a TPU v5e said so): only 2, in
    every kv dtype; 1 too with float32 or bfloat16 pages."""
    res = answer_for("ragged", {**RAGGED, "num_kv_heads": 4})
    assert res["code"] == "RA105" and res["matched"]["kernel"]["id"] == "tpu-ragged"
    valid = suggestion(res, "valid num_kv_heads")
    assert valid["value"] == [2]
    assert {c["when"]: c["value"] for c in valid["cases"]} == {
        "raised by JAX Pallas TPU ragged paged attention, with float32 kv_pages": [1, 2],
        "raised by JAX Pallas TPU ragged paged attention, with bfloat16 kv_pages": [1, 2]}
    for dtype in ("float32", "bfloat16", "int8"):
        assert runs("ragged", {**RAGGED, "kv_dtype": dtype, "num_kv_heads": 2})
        assert not runs("ragged", {**RAGGED, "kv_dtype": dtype, "num_kv_heads": 7})
    attempt_clean("ragged", RAGGED, {"num_kv_heads": 4})


SPLASH = {"num_q_heads": 1, "num_kv_heads": 1, "q_seq_len": 1024, "kv_seq_len": 1024, "head_dim": 128, "block_q": 512,
          "block_kv": 512, "block_kv_compute": None, "segment_ids": False, "q_seq_shards": 1, "grad": False,
          "block_q_dkv": None, "block_kv_dkv": None, "block_q_dq": None, "block_kv_dq": None}


def test_splash_1000_queries_gets_no_block_valid_in_every_case_and_the_padding():
    """q_block_size=512 should divide q_seq_len=1000: a block of the whole length 1000 is refused under
    jax.grad with segment_ids (here) and, on a TPU v5e, under jax.grad or with segment_ids; no
    multiple of 128 divides 1000. So no block is offered for every case, 1000 only for the forward
    pass without segment_ids or shards (with the blocks of 8 that divide it), and the padding to
    1024, which runs in every case."""
    res = answer_for("splash", {**SPLASH, "q_seq_len": 1000})
    assert res["code"] == "RA710"
    blocks = suggestion(res, "valid query blocks")
    assert blocks["value"] == []
    cases = {c["when"]: c["value"] for c in blocks["cases"]}
    assert all("forward only" in when and "without segment_ids" in when for when, value in cases.items() if value)  # nowhere else
    assert len(cases) == 8  # (none in the other 6: the whole picture, the value being none)
    assert 1000 in cases["without q_seq_shards, without segment_ids, forward only"]
    assert all(b % 8 == 0 for b in cases["without q_seq_shards, without segment_ids, forward only"])
    assert suggestion(res, "q_seq_len padded")["value"] == [1024]
    grad = {**SPLASH, "grad": True, "block_q_dkv": 512, "block_kv_dkv": 512, "block_q_dq": 512, "block_kv_dq": 512}
    assert runs("splash", {**grad, "segment_ids": True})  # 1024: every case
    whole = {**grad, "q_seq_len": 1000, "block_q": 1000, "block_q_dkv": 1000, "block_q_dq": 1000, "segment_ids": True}
    assert not runs("splash", whole)  # the whole length under jax.grad with segment_ids
    for base in (SPLASH, grad, {**SPLASH, "segment_ids": True}, {**SPLASH, "q_seq_shards": 2}):
        attempt_clean("splash", base, {"q_seq_len": 1000})


def test_a_case_the_length_leaves_without_a_block_is_not_passed_over():
    """q_block_size=128 should divide q_seq_len_per_shard=32: forward only without segment_ids, 8, 16
    and 32 fit; under jax.grad or with segment_ids a block is a multiple of 128, which fits other
    lengths but not 32. Those cases are not ones where the rest of the configuration is refused
    whatever the block (as RA230's shared memory is), so no block is offered as valid wherever any
    is (on a TPU v5e, 8, 16 and 32 then failed under jax.grad with 8 shards)."""
    res = calls.explain("ValueError: q_block_size=128 should divide q_seq_len_per_shard=32.")
    blocks = suggestion(res, "valid query blocks for each shard")
    assert blocks["value"] == []
    cases = {c["when"]: c["value"] for c in blocks["cases"]}
    assert cases["without q_seq_shards, without segment_ids, forward only"] == [8, 16, 32]
    assert cases["with q_seq_shards=2, without segment_ids, under jax.grad"] == []


def test_splash_whole_length_block_is_refused_per_shard():
    """With q_seq_shards=2 a block of the whole query length does not divide a shard: the whole
    length is offered only without shards, each shard's length with two."""
    res = answer_for("splash", {**SPLASH, "q_seq_len": 200, "q_seq_shards": 2, "block_q": 128})
    blocks = suggestion(res, "valid query blocks")
    cases = {c["when"]: c["value"] for c in blocks["cases"]}
    assert 200 in cases["without q_seq_shards, without segment_ids, forward only"]
    assert cases["with q_seq_shards=2, without segment_ids, forward only"] == [100]
    assert not runs("splash", {**SPLASH, "q_seq_len": 200, "q_seq_shards": 2, "block_q": 200})
    assert runs("splash", {**SPLASH, "q_seq_len": 200, "q_seq_shards": 2, "block_q": 100, "kv_seq_len": 256,
                           "block_kv": 256})
    attempt_clean("splash", {**SPLASH, "q_seq_shards": 2}, {"q_seq_len": 200, "block_q": 128})


MOSAIC = {"q_seq_len": 256, "kv_seq_len": 1024, "head_dim": 128, "q_dtype": "float16", "k_dtype": "float16",
          "v_dtype": "float16", "block_q": 128, "block_kv": 64, "max_concurrent_steps": 2, "grad": True,
          "compute_wgs_bwd": 1, "block_q_dkv": 64, "block_kv_dkv": 64, "block_q_dq": 64, "block_kv_dq": 64}


def test_mosaic_gpu_backward_padding_keeps_the_forward_block_dividing_it():
    """q_seq_len=256 must be a multiple of block_q_dq=192 * compute_wgs=1: padding to 384 breaks the
    forward's multiple of block_q * 2 for block_q=128 (not shown): 768 is offered, valid for
    block_q 64 and 128, 384 only for block_q=64."""
    res = answer_for("mosaic-gpu", {**MOSAIC, "block_q_dq": 192})
    pad = suggestion(res, "q_seq_len padded for block_q_dq")
    assert pad["value"] == [768]
    assert all(c["value"] == [384] and "block_q=64" in c["when"] for c in pad["cases"])
    assert not runs("mosaic-gpu", {**MOSAIC, "block_q_dq": 192, "q_seq_len": 384})
    attempt_clean("mosaic-gpu", MOSAIC, {"block_q_dq": 192})


def test_mosaic_gpu_dkv_block_fits_shared_memory():
    """kv_seq_len=1024 must be a multiple of block_kv_dkv=96: 512 divides it but needs 329,824 bytes of
    shared memory with head_dim=128 (more than an H100's 232,448): it is not offered."""
    res = answer_for("mosaic-gpu", {**MOSAIC, "block_kv_dkv": 96})
    value = suggestion(res, "block_kv_dkv")["value"]
    assert value == [64, 128] and 512 not in value
    err = calls.raised(FAMILIES["mosaic-gpu"], {**MOSAIC, "block_kv_dkv": 512}, "cpu")
    assert err is not None and "smem_bytes=329824 > max_smem_bytes=232448" in str(err)
    attempt_clean("mosaic-gpu", MOSAIC, {"block_kv_dkv": 96})


def test_mosaic_gpu_dtypes_offer_float16_only():
    """attention_mgpu in jax 0.10.2 keeps float16 buffers: a cast to bfloat16 leaves a bfloat16 x
    float16 matmul, float32 is refused. The answers offer float16 for q, k and v together."""
    mixed = answer_for("mosaic-gpu", {**MOSAIC, "grad": False, "k_dtype": "bfloat16", "v_dtype": "bfloat16"})
    assert mixed["code"] == "RA104"
    assert suggestion(mixed, "one dtype for q, k and v")["value"] == [["float16", "float16", "float16"]]
    assert suggestion(mixed, "dtype to cast q to")["value"] is None  # not bfloat16
    wide = answer_for("mosaic-gpu", {**MOSAIC, "grad": False, "q_dtype": "float32", "k_dtype": "float32", "v_dtype": "float32"})
    assert wide["code"] == "RA106" and suggestion(wide, "dtype for q, k and v")["value"] == ["float16"]
    bf16 = {"q_dtype": "bfloat16", "k_dtype": "bfloat16", "v_dtype": "bfloat16"}
    assert answer_for("mosaic-gpu", {**MOSAIC, "grad": False, **bf16})["code"] == "RA834"
    for change in ({"k_dtype": "bfloat16", "v_dtype": "bfloat16"}, {"q_dtype": "float32", "k_dtype": "float32", "v_dtype": "float32"}, bf16):
        attempt_clean("mosaic-gpu", {**MOSAIC, "grad": False}, change)


SMALL_SMEM = {**MOSAIC, "head_dim": 64, "block_kv": 128, "max_concurrent_steps": 3, "compute_wgs_bwd": 2}


def test_mosaic_gpu_block_valid_wherever_any_block_is():
    """q_seq_len=4224 must be a multiple of block_q * 2=256. Under jax.grad with head_dim=128,
    block_kv=128 and three steps, no block_q fits the forward's shared memory, whatever the length
    (block_q=64 needs 232,568 bytes): that case says none, and 128 (block_q=64), valid in every case
    where any block is, is offered. It runs; before issue 47's cases, nothing was offered."""
    res = answer_for("mosaic-gpu", {**MOSAIC, "q_seq_len": 4224})
    block = suggestion(res, "block_q * 2 dividing q_seq_len")
    assert block["value"] in (128, [128])
    none = [c["when"] for c in block["cases"] if c.get("value") in (None, [])]
    assert none == ["under jax.grad, block_kv=128, with head_dim=128, max_concurrent_steps=3"], block["cases"]
    err = calls.raised(FAMILIES["mosaic-gpu"], {**MOSAIC, "q_seq_len": 4224, "block_q": 64, "block_kv": 128,
                                               "max_concurrent_steps": 3}, "cpu")
    assert err is not None and "smem_bytes=232568 > max_smem_bytes=232448" in str(err)
    attempt_clean("mosaic-gpu", MOSAIC, {"q_seq_len": 4224})


def test_mosaic_gpu_head_dim_padding_says_where_it_does_not_fit():
    """head_dim=80 must be divisible by 64, under jax.grad with block_q=64, block_kv=128 and three
    steps: the padded 128 needs 232,568 bytes there (the forward's logsumexp under jax.grad), so that
    case says none and 128 is offered only in the cases it fits; it was offered and failed before."""
    base = {**SMALL_SMEM, "block_q": 64}
    res = answer_for("mosaic-gpu", {**base, "head_dim": 80})
    pad = suggestion(res, "padded head_dim")
    cases = {c["when"]: c.get("value") for c in pad["cases"]}
    assert cases["under jax.grad, block_kv=128, block_q=64, max_concurrent_steps=3"] in (None, [])
    assert cases["under jax.grad, block_kv=128, block_q=64, max_concurrent_steps=2"] == [128]
    assert not runs("mosaic-gpu", {**base, "head_dim": 128})
    no_failures("mosaic-gpu", base, {"head_dim": 80})
    attempt_clean("mosaic-gpu", {**base, "max_concurrent_steps": 2}, {"head_dim": 80})


def test_mosaic_gpu_key_block_states_the_backward_blocks_it_needs():
    """kv_seq_len=320 must be a multiple of block_kv=128, under jax.grad with compute_wgs_bwd=2 and
    block_kv_dkv=64: 64 divides 320, but the dK/dV blocks (128 keys) cannot, whatever block_kv is.
    The value says so (not checked: it reads what the message does not show) and is declined for
    this call rather than failing; 256 keys would not fit shared memory with head_dim=64 and three
    steps under jax.grad, and is not offered for block_kv=192."""
    res = answer_for("mosaic-gpu", {**SMALL_SMEM, "kv_seq_len": 320})
    block = suggestion(res, "block_kv dividing kv_seq_len")
    assert any("block_kv_dkv * compute_wgs_bwd divides kv_seq_len" in said for said in block.get("requires", ()))
    attempt = no_failures("mosaic-gpu", SMALL_SMEM, {"kv_seq_len": 320})
    assert any(t.outcome == "declined" for t in attempt.tried)
    assert not runs("mosaic-gpu", {**SMALL_SMEM, "block_kv": 256})
    no_failures("mosaic-gpu", {**SMALL_SMEM, "compute_wgs_bwd": 1}, {"block_kv": 192})


def test_mosaic_gpu_dkv_query_block_counts_every_step():
    """q_seq_len=1024 must be a multiple of block_q_dkv=96 with head_dim=128 and three steps: 128
    divides 1024 but the dK/dV kernel holds three steps of it, 233,608 bytes (the rule counted two)."""
    base = {**MOSAIC, "q_seq_len": 1024, "max_concurrent_steps": 3}
    err = calls.raised(FAMILIES["mosaic-gpu"], {**base, "block_q_dkv": 128}, "cpu")
    assert err is not None and "smem_bytes=233608 > max_smem_bytes=232448" in str(err)
    no_failures("mosaic-gpu", base, {"block_q_dkv": 96})


OURS = {"batch": 2, "q_seq_len": 16, "kv_seq_len": 16, "num_q_heads": 14, "num_kv_heads": 7, "head_dim": 16,
        "dtype": "float32", "implementation": "xla", "causal": False, "grad": False, "config": False, "block_q": 32,
        "block_kv": 32, "batch_axis_size": 2, "head_axis_size": None, "block_q_dkv": None, "block_kv_dkv": None,
        "block_q_dq": None, "block_kv_dq": None}


def test_repeating_kv_heads_states_what_the_query_heads_must_be():
    """num_kv_heads=7 over a head axis of 4, 14 query heads (not shown): repeating each kv head 4
    times gives 28, more than the query heads. The value says it needs num_q_heads a multiple of it,
    so it is not offered to this call; the head-axis sizes that divide 7 run."""
    res = answer_for("ours", {**OURS, "head_axis_size": 4})
    assert res["code"] == "RA404"
    repeat = suggestion(res, "num_kv_heads after repeating")
    assert repeat["value"] == [28] and any("num_q_heads is a multiple of num_kv_heads" in r for r in repeat["requires"])
    attempt = attempt_clean("ours", OURS, {"head_axis_size": 4})
    assert {t.value for t in attempt.tried if t.outcome == "declined"} == {28}


def test_both_block_sizes_wrong_are_fixed_together():
    """block_q=100, block_kv=200: one configuration sets both (128, 256); the label no longer reads
    '(none: block_q is valid)'."""
    base = {**OURS, "num_q_heads": 2, "num_kv_heads": 1, "batch_axis_size": None, "implementation": "pallas", "config": True}
    res = answer_for("ours", {**base, "block_q": 100, "block_kv": 200})
    assert res["code"] == "RA211"
    config = res["fixes"][0]["suggestions"]
    assert [(s["label"], s["value"], s["sets"]) for s in config] == [
        ("block_q, block_kv (together: each the nearest valid size up, a valid one kept)", [[128, 256]], "block_q, block_kv")]
    assert not any("is valid)" in s["label"] for f in res["fixes"] for s in f["suggestions"])
    assert all("matcher gap" not in (f.get("unverified") or "") for f in res["fixes"])
    attempt_clean("ours", base, {"block_q": 100, "block_kv": 200})


CUDNN = {"B": 2, "T": 8, "S": 8, "N": 2, "K": 1, "H": 64, "dtype": "bfloat16", "bias": False, "bias_T": None,
         "is_causal": False, "grad": True, "h_max": 128, "implementation": "cudnn"}


def test_cudnn_odd_lengths_under_grad_fail_without_a_bias_too():
    """jax 0.10.2's jax.nn.dot_product_attention reaches `Unsupported sequence length` under jax.grad
    with no bias: 'or train without a bias' is gone; the lengths are padded together, or the XLA path."""
    res = answer_for("cudnn", {**CUDNN, "T": 7})
    assert res["code"] == "RA544"
    assert "without a bias" not in res["fixes"][1]["summary"].replace("dropping the bias is not enough", "")
    assert suggestion(res, "T, S padded to even")["value"] == [[8, 8]]
    assert not runs("cudnn", {**CUDNN, "T": 7, "S": 9})
    attempt = attempt_clean("cudnn", CUDNN, {"T": 7, "S": 9})
    assert {t.kind for t in attempt.tried if t.outcome == "worked"} >= {"value", "snippet"}
