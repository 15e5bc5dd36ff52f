"""Real errors of JAX's TPU attention kernels, recognised by `errkit explain`.

Every case calls the real upstream code on CPU with a bad input: TPU flash attention and TPU paged
attention inside `pltpu.force_tpu_interpret_mode()` (they have no `interpret=` argument), ragged
paged attention's validation (its kernel does not run in interpret mode on CPU), and splash
attention with `interpret=True` plus its mask classes and mask processing. Errors raised while a
kernel is traced, or under `jax.grad`, are produced with `jax.eval_shape` so that nothing is
compiled or executed. Each case captures str(exception) (the formatted traceback for an exception
raised without text), runs explain on it and checks the code and the values read back.

A few texts are shared word for word with JAX's GPU kernels, or with entries that existed before
the upstream catalogue; those cases check the entry that holds that wording (see SHARED).
"""

from __future__ import annotations

import contextlib

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from support import explain_first, pasted_text, raised_by  # noqa: E402


def _import(name: str):
    """The module and "", or None and why it cannot be imported. jax is installed (the file is
    skipped only without it), so a module of jax that does not import is a broken install or a
    moved API: the tests that need it fail with the reason (see _require), they are not skipped."""
    import importlib

    try:
        return importlib.import_module(name), ""
    except Exception as err:  # noqa: BLE001 - whatever the import raises is reported by _require
        return None, f"{name} cannot be imported: {type(err).__name__}: {err}"


def _require(*errors: str) -> None:
    """Fail the test when a module it needs did not import (one failure per test, not one per file)."""
    failed = [error for error in errors if error]
    if failed:
        pytest.fail("; ".join(failed), pytrace=False)


pltpu, PLTPU_ERROR = _import("jax.experimental.pallas.tpu")
FA, FA_ERROR = _import("jax.experimental.pallas.ops.tpu.flash_attention")
PA_MOD, PA_ERROR = _import("jax.experimental.pallas.ops.tpu.paged_attention")
RA_MOD, RA_ERROR = _import("jax.experimental.pallas.ops.tpu.ragged_paged_attention")
SK, SK_ERROR = _import("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_kernel")
SM, SM_ERROR = _import("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_mask")
MI, MI_ERROR = _import("jax.experimental.pallas.ops.tpu.splash_attention.splash_attention_mask_info")

# Wordings that another entry owns (identical text in JAX's GPU kernels, or an entry that predates
# the upstream catalogue): the case checks the code of the entry that holds the wording.
SHARED = {"RA102", "RA103", "RA105", "RA223", "RA521"}


# -- helpers -------------------------------------------------------------------------------------


def _wording_known(code: str, text: str) -> bool:
    from errkit.explain.matching.index import Index

    index = Index.load()
    return code in index.entries and any(
        w["code"] == code and w["template"] and index.regex(i).search(text) for i, w in enumerate(index.wordings)
    )


@contextlib.contextmanager
def _interpret():
    with pltpu.force_tpu_interpret_mode():
        yield


def _check(fn, code, values, exception, interpret=False):
    ctx = _interpret() if interpret else contextlib.nullcontext()
    with ctx:
        err = raised_by(fn)
    assert type(err).__name__ == exception, f"{type(err).__name__}: {err}"
    text = pasted_text(err)
    if code in SHARED:  # the entry that owns the wording must hold it, word for word
        assert _wording_known(code, text), f"entry {code} does not hold this shared wording: {text}"
    res = explain_first(text)
    assert res["code"] == code, (res["code"], text)
    assert res["confidence"] == "exact"
    for name, value in values.items():
        assert res["params"].get(name) == value, (name, res["params"], text)
    if not str(err):
        assert res["matched"]["wording"] == ""  # recognised by the raise site, not by text
    return res


# -- TPU flash attention (in force_tpu_interpret_mode) -------------------------------------------

B, N, T, D = 1, 2, 256, 128


def _fa_args():
    q = jnp.ones((B, N, T, D), jnp.float32)
    return q, q, q


def _fa_full(**over):
    sizes = dict(block_q=128, block_k_major=128, block_k=128, block_b=1, block_q_major_dkv=128,
                 block_k_major_dkv=128, block_k_dkv=128, block_q_dkv=128, block_k_major_dq=128,
                 block_k_dq=128, block_q_dq=128)
    sizes.update(over)
    return FA.BlockSizes(**sizes)


def _fa_seg(tq=T, tk=T):
    return FA.SegmentIds(jnp.zeros((B, tq), jnp.int32), jnp.zeros((B, tk), jnp.int32))


def _fa_call(q=None, k=None, v=None, **kw):
    q0, k0, v0 = _fa_args()
    return FA.flash_attention(q0 if q is None else q, k0 if k is None else k, v0 if v is None else v, **kw)


def _fa_shape(**kw):
    """Trace (not run) the forward pass."""
    q, k, v = _fa_args()
    return jax.eval_shape(lambda q, k, v: FA.flash_attention(q, k, v, **kw), q, k, v)


def _fa_grad(**kw):
    """Trace (not run) the backward pass."""
    q, k, v = _fa_args()
    return jax.eval_shape(jax.grad(lambda q: FA.flash_attention(q, k, v, **kw).sum()), q)


FLASH = [
    ("batch", lambda: _fa_call(k=jnp.ones((2, N, T, D))), "ValueError", "RA601",
     {"batch_size": 1, "batch_size_k": 2, "batch_size_v": 1}),
    ("heads", lambda: _fa_call(v=jnp.ones((B, 3, T, D))), "ValueError", "RA602",
     {"num_heads": 2, "num_heads_k": 2, "num_heads_v": 3}),
    ("qk-head-dim", lambda: _fa_call(k=jnp.ones((B, N, T, 64))), "ValueError", "RA603",
     {"d_model": 128, "d_model_k": 64}),
    ("v-head-dim", lambda: _fa_call(v=jnp.ones((B, N, T, 64))), "NotImplementedError", "RA603", {}),
    ("kv-seq-len", lambda: _fa_call(v=jnp.ones((B, N, 128, D))), "ValueError", "RA604",
     {"kv_seq_len": 256, "kv_seq_len_v": 128}),
    ("bias-shape", lambda: _fa_call(ab=jnp.ones((B, N, T, 1))), "ValueError", "RA605",
     {"batch_size": 1, "num_heads": 2, "q_seq_len": 256, "kv_seq_len": 256, "ab_shape": [1, 2, 256, 1]}),
    ("q-segment-ids", lambda: _fa_call(segment_ids=_fa_seg(tq=T + 1)), "ValueError", "RA606",
     {"batch_size": 1, "q_seq_len": 256, "segment_ids_shape": [1, 257]}),
    ("kv-segment-ids", lambda: _fa_call(segment_ids=_fa_seg(tk=T - 1)), "ValueError", "RA606",
     {"batch_size": 1, "kv_seq_len": 256, "segment_ids_shape": [1, 255]}),
    ("minor-above-major", lambda: FA.BlockSizes(block_q=128, block_k_major=128, block_k=256, block_b=1),
     "ValueError", "RA600", {"minor": 256, "major": 128}),
    ("minor-not-dividing", lambda: FA.BlockSizes(block_q=128, block_k_major=384, block_k=256, block_b=1),
     "ValueError", "RA600", {"minor": 256, "major": 384}),
    ("dkv-minor-above-major", lambda: FA.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                                                    block_q_major_dkv=128, block_q_dkv=256),
     "ValueError", "RA600", {"minor": 256, "major": 128}),
    ("dq-minor-not-dividing", lambda: FA.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                                                    block_k_major_dq=384, block_k_dq=256),
     "ValueError", "RA600", {"minor": 256, "major": 384}),
    ("block-q-too-large", lambda: _fa_call(block_sizes=FA.BlockSizes(block_q=512, block_k_major=128, block_k=128, block_b=1)),
     "ValueError", "RA611", {"block_name": "block_q", "block": 512, "dim_name": "q_seq_len", "dim_size": 256}),
    ("kv-seq-not-divisible", lambda: _fa_call(k=jnp.ones((B, N, 384, D)), v=jnp.ones((B, N, 384, D)),
                                              block_sizes=FA.BlockSizes(block_q=128, block_k_major=256, block_k=128, block_b=1)),
     "ValueError", "RA611", {"dim_name": "kv_seq_len", "dim_size": 384, "block_name": "block_k_major", "block": 256}),
    ("block-b-too-large", lambda: _fa_call(block_sizes=FA.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=2)),
     "ValueError", "RA611", {"block_name": "block_b", "block": 2, "dim_name": "batch", "dim_size": 1}),
    ("block-k-64", lambda: _fa_shape(block_sizes=FA.BlockSizes(block_q=128, block_k_major=128, block_k=64, block_b=1)),
     "NotImplementedError", "RA609", {"block_k": 64, "MIN_BLOCK_SIZE": 128}),
    ("head-dim-192", lambda: jax.eval_shape(FA.flash_attention, *(jnp.ones((B, N, T, 192)),) * 3),
     "NotImplementedError", "RA610", {"head_dim": 192, "MIN_BLOCK_SIZE": 128}),
    ("segment-ids-block-k-64", lambda: _fa_shape(segment_ids=_fa_seg(), block_sizes=FA.BlockSizes(block_q=128, block_k_major=128, block_k=64, block_b=1)),
     "NotImplementedError", "RA609", {"NUM_LANES": 128}),
    ("grad-forward-only-blocks", lambda: _fa_grad(block_sizes=FA.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1)),
     "ValueError", "RA608", {}),
    ("grad-block-q-dq-too-large", lambda: _fa_grad(block_sizes=_fa_full(block_q_dq=512)),
     "ValueError", "RA611", {"block_name": "block_q_dq", "block": 512, "dim_name": "q_seq_len", "dim_size": 256}),
    ("grad-segment-ids-block-k-dq-64", lambda: _fa_grad(segment_ids=_fa_seg(), block_sizes=_fa_full(block_k_dq=64)),
     "NotImplementedError", "RA609", {"NUM_LANES": 128}),
    ("grad-segment-ids-block-k-dkv-64 (no message)", lambda: _fa_grad(segment_ids=_fa_seg(), block_sizes=_fa_full(block_k_dkv=64)),
     "NotImplementedError", "RA609", {}),
    ("grad-of-grad", lambda: jax.eval_shape(
        jax.grad(lambda q: jax.grad(lambda q: FA.flash_attention(q, q, q).sum())(q).sum()), jnp.ones((1, 1, 128, 128))),
     "NotImplementedError", "RA607", {}),
    ("reference-bwd-sm-scale (no message)", lambda: FA.mha_reference_bwd(
        *_fa_args(), None, None, _fa_args()[0], jnp.ones((B, N, T)), jnp.ones((B, N, T)), _fa_args()[0], sm_scale=0.5),
     "NotImplementedError", "RA612", {}),
    ("reference-grad-of-grad (no message)", lambda: jax.eval_shape(
        jax.grad(lambda q: jax.grad(lambda q: FA.mha_reference(q, q, q, None).sum())(q).sum()), jnp.ones((1, 1, 8, 8))),
     "NotImplementedError", "RA607", {}),
]


@pytest.mark.parametrize("name,fn,exception,code,values", FLASH, ids=[c[0] for c in FLASH])
def test_flash_attention(name, fn, exception, code, values):
    _require(FA_ERROR, PLTPU_ERROR)
    _check(fn, code, values, exception, interpret=True)


# -- TPU paged attention (in force_tpu_interpret_mode) -------------------------------------------

PB, PN, PD, PK, PTP, PPS, PPSEQ = 2, 8, 128, 2, 16, 16, 4


def _pa(q=None, k_pages=None, v_pages=None, lengths=None, page_indices=None, **kw):
    q0 = jnp.ones((PB, PN, PD), jnp.float32)
    pages = jnp.ones((PK, PTP, PPS, PD), jnp.float32)
    ln = jnp.array([40, 64], jnp.int32)
    pi = jnp.arange(PB * PPSEQ, dtype=jnp.int32).reshape(PB, PPSEQ)
    kw.setdefault("pages_per_compute_block", 2)
    return PA_MOD.paged_attention(q0 if q is None else q, pages if k_pages is None else k_pages,
                                  pages if v_pages is None else v_pages, ln if lengths is None else lengths,
                                  pi if page_indices is None else page_indices, **kw)


PAGED = [
    ("pages-per-compute-block", lambda: _pa(pages_per_compute_block=3), "ValueError", "RA650",
     {"pages_per_compute_block": 3, "pages_per_sequence": 4}),
    ("page-indices-batch", lambda: _pa(page_indices=jnp.zeros((1, PPSEQ), jnp.int32)), "ValueError", "RA651", {}),
    ("lengths-dtype", lambda: _pa(lengths=jnp.array([40.0, 64.0])), "ValueError", "RA652", {"dtype": "float32"}),
    ("megacore-kv-head-odd", lambda: _pa(k_pages=jnp.ones((1, PTP, PPS, PD)), v_pages=jnp.ones((1, PTP, PPS, PD)),
                                         megacore_mode="kv_head"), "ValueError", "RA653", {}),
    ("megacore-batch-odd", lambda: _pa(q=jnp.ones((1, PN, PD)), lengths=jnp.array([40], jnp.int32),
                                       page_indices=jnp.zeros((1, PPSEQ), jnp.int32), megacore_mode="batch"),
     "ValueError", "RA653", {}),
    ("megacore-mode-unknown", lambda: _pa(megacore_mode="heads"), "ValueError", "RA654", {}),
    # Same text as JAX's GPU paged attention: the GPU entries hold these wordings.
    ("pages-shape (shared)", lambda: _pa(v_pages=jnp.ones((PK, PTP, PPS, 64))), "ValueError", "RA103",
     {"k_shape": [2, 16, 16, 128], "v_shape": [2, 16, 16, 64]}),
    ("gqa-heads (shared)", lambda: _pa(q=jnp.ones((PB, 3, PD))), "ValueError", "RA105",
     {"num_q_heads": 3, "num_kv_heads": 2}),
    ("head-dim (shared)", lambda: _pa(q=jnp.ones((PB, PN, 64))), "ValueError", "RA102",
     {"head_dim": 64, "head_dim_k": 128}),
    ("lengths-batch (shared)", lambda: _pa(lengths=jnp.array([40], jnp.int32)), "ValueError", "RA521", {}),
]


@pytest.mark.parametrize("name,fn,exception,code,values", PAGED, ids=[c[0] for c in PAGED])
def test_paged_attention(name, fn, exception, code, values):
    _require(PA_ERROR, PLTPU_ERROR)
    _check(fn, code, values, exception, interpret=True)


# -- TPU ragged paged attention (validation; its kernel does not run in interpret mode on CPU) ----

RT, RN, RD, RTP, RPS, RKC, RMS, RPPS = 16, 4, 128, 16, 16, 4, 2, 4
RBLOCKS = dict(num_kv_pages_per_block=2, num_queries_per_block=8)


def _ra_args(**over):
    args = dict(
        q=jnp.ones((RT, RN, RD), jnp.float32),
        kv_pages=jnp.ones((RTP, RPS, RKC, RD), jnp.float32),
        kv_lens=jnp.array([20, 30], jnp.int32),
        page_indices=jnp.arange(RMS * RPPS, dtype=jnp.int32).reshape(RMS, RPPS),
        cu_q_lens=jnp.array([0, 6, 16], jnp.int32),
        num_seqs=jnp.array([2], jnp.int32),
    )
    args.update(over)
    return [args[k] for k in ("q", "kv_pages", "kv_lens", "page_indices", "cu_q_lens", "num_seqs")]


def _ra(blocks=True, kw=None, **over):
    kw = dict(RBLOCKS if blocks else {}, **(kw or {}))
    return RA_MOD.ragged_paged_attention(*_ra_args(**over), **kw)


def _ra_dynamic(**over):
    return RA_MOD.dynamic_validate_inputs(*_ra_args(**over))


RAGGED = [
    ("no-block-sizes-off-tpu", lambda: _ra(blocks=False), "NotImplementedError", "RA683", {}),
    ("num-seqs-shape", lambda: _ra(num_seqs=jnp.array([2, 2], jnp.int32)), "ValueError", "RA674",
     {"num_seqs_shape": [2]}),
    ("head-dim", lambda: _ra(q=jnp.ones((RT, RN, 64))), "ValueError", "RA675", {"head_dim": 64, "head_dim_k": 128}),
    ("kv-lens-shape", lambda: _ra(kv_lens=jnp.array([20], jnp.int32)), "ValueError", "RA676",
     {"kv_lens_shape": [1], "max_num_seqs": 2}),
    ("cu-q-lens-shape", lambda: _ra(cu_q_lens=jnp.array([0, 6], jnp.int32)), "ValueError", "RA676",
     {"cu_q_lens_shape": [2], "num_cu_q_lens": 3}),
    ("metadata-dtype", lambda: _ra(kv_lens=jnp.array([20.0, 30.0])), "ValueError", "RA677",
     {"kv_lens_dtype": "float32", "page_indices_dtype": "int32", "cu_q_lens_dtype": "int32"}),
    ("gqa-heads (existing entry)", lambda: _ra(q=jnp.ones((RT, 3, RD))), "ValueError", "RA105",
     {"num_q_heads": 3, "num_kv_heads": 2}),
    ("sliding-window", lambda: _ra(kw={"sliding_window": 0}), "ValueError", "RA678", {"sliding_window": 0}),
    ("soft-cap", lambda: _ra(kw={"soft_cap": 0.0}), "ValueError", "RA679", {"soft_cap": 0.0}),
    ("kv-pages-per-block", lambda: _ra(blocks=False, kw={"num_kv_pages_per_block": 5, "num_queries_per_block": 8}),
     "ValueError", "RA680", {"num_kv_pages_per_block": 5, "pages_per_seq": 4}),
    ("queries-per-block", lambda: _ra(blocks=False, kw={"num_kv_pages_per_block": 2, "num_queries_per_block": 0}),
     "ValueError", "RA680", {"num_queries_per_block": 0}),
    ("vmem-limit", lambda: _ra(kw={"vmem_limit_bytes": 0}), "ValueError", "RA681", {"vmem_limit_bytes": 0}),
    ("kv-heads-not-tileable", lambda: _ra(q=jnp.ones((RT, 6, RD)), kv_pages=jnp.ones((RTP, RPS, 6, RD))),
     "ValueError", "RA682", {"num_combined_kv_heads": 6}),
    ("odd-combined-kv-heads (no message)", lambda: _ra(kv_pages=jnp.ones((RTP, RPS, 3, RD))),
     "AssertionError", "RA698", {}),
    ("int-k-scale (no message)", lambda: _ra(kw={"k_scale": 1}), "AssertionError", "RA698", {}),
    ("dynamic-num-seqs", lambda: _ra_dynamic(num_seqs=jnp.array([3], jnp.int32)), "ValueError", "RA670",
     {"num_seqs_0": "Array(3, dtype=int32)", "max_num_seqs": 2}),
    ("dynamic-pages-per-seq", lambda: _ra_dynamic(kv_lens=jnp.array([20, 100], jnp.int32)), "ValueError", "RA671",
     {"pages_per_seq": 4, "min_pages_per_seq": 7, "max_kv_len": 100,
      "page_size": 16}),
    ("dynamic-total-q-tokens", lambda: _ra_dynamic(cu_q_lens=jnp.array([0, 6, 17], jnp.int32)), "ValueError", "RA672",
     {"total_q_tokens": 17, "max_num_batched_tokens": 16}),
    ("dynamic-q-len-above-kv-len", lambda: _ra_dynamic(kv_lens=jnp.array([4, 30], jnp.int32)), "ValueError", "RA673",
     {"q_len": "Array(6, dtype=int32)", "kv_len": "Array(4, dtype=int32)", "i": 0}),
]


@pytest.mark.parametrize("name,fn,exception,code,values", RAGGED, ids=[c[0] for c in RAGGED])
def test_ragged_paged_attention(name, fn, exception, code, values):
    _require(RA_ERROR, PLTPU_ERROR)
    _check(fn, code, values, exception, interpret=True)


# -- TPU splash attention (interpret=True), its masks and mask processing --------------------------

SH, ST, SD = 2, 256, 128


def _sq(h=SH, t=ST, d=SD):
    return jnp.ones((h, t, d), jnp.float32)


def _causal(h=SH, t=ST):
    return SM.MultiHeadMask([SM.CausalMask((t, t)) for _ in range(h)])


def _bs(**over):
    sizes = dict(block_q=128, block_kv=128, block_kv_compute=128, block_q_dkv=128, block_kv_dkv=128,
                 block_kv_dkv_compute=128, block_q_dq=128, block_kv_dq=128)
    sizes.update(over)
    return SK.BlockSizes(**sizes)


def _make(bs=None, mask=None, **kw):
    return SK.make_splash_mha_single_device(_causal() if mask is None else mask,
                                            block_sizes=_bs() if bs is None else bs, interpret=True, **kw)


def _fwd(kernel, q=None, k=None, v=None, **kw):
    return jax.eval_shape(lambda q, k, v: kernel(q, k, v, **kw), _sq() if q is None else q,
                          _sq() if k is None else k, _sq() if v is None else v)


def _grad(kernel, **kw):
    k = _sq()
    return jax.eval_shape(jax.grad(lambda q: kernel(q, k, k, **kw).sum()), _sq())


def _seg(tq=ST, tk=ST):
    return SK.SegmentIds(jnp.zeros((tq,), jnp.int32), jnp.zeros((tk,), jnp.int32))


def _int_mask_function():
    mask = SM.CausalMask((ST, ST), offset=7)  # an offset no other case uses: mask processing is cached
    mask.mask_function = lambda q_ids, kv_ids: (q_ids >= kv_ids).astype(jnp.int32)
    return SM.MultiHeadMask([mask] * SH)


def _mask_without_getitem():
    class HalfMask(SM.Mask):  # a custom mask that forgot __getitem__
        @property
        def shape(self):
            return (ST, ST)

    return HalfMask()[0:1, 0:1]


def _abstract_mesh_spec(spec):
    from jax.sharding import AbstractMesh, NamedSharding

    kernel = SK.make_splash_mha(_causal(h=3), block_sizes=SK.BlockSizes(block_q=128, block_kv=128),
                                head_shards=1, q_seq_shards=1, interpret=True)
    return kernel.manual_sharding_spec(NamedSharding(AbstractMesh((2, 2), ("x", "y")), spec))


def _P(*axes):
    from jax.sharding import PartitionSpec

    return PartitionSpec(*axes)


SPLASH = [
    ("fused-bwd-with-dq-blocks", lambda: SK.BlockSizes(block_q=128, block_kv=128, block_q_dkv=128, block_kv_dkv=128,
                                                        block_q_dq=128, use_fused_bwd_kernel=True),
     "ValueError", "RA700", {}),
    ("mask-2d", lambda: _make(mask=SM.CausalMask((ST, ST))), "ValueError", "RA715", {"mask_shape": [256, 256]}),
    ("block-q-96", lambda: _make(bs=SK.BlockSizes(block_q=96, block_kv=128)), "ValueError", "RA710",
     {"q_block_size": 96, "q_seq_len": 256}),
    ("block-kv-96", lambda: _make(bs=SK.BlockSizes(block_q=128, block_kv=96)), "ValueError", "RA711",
     {"kv_block_size": 96, "kv_seq_len": 256}),
    ("q-seq-shards", lambda: SK.make_splash_mha(_causal(), block_sizes=SK.BlockSizes(block_q=128, block_kv=128),
                                                head_shards=1, q_seq_shards=3, interpret=True),
     "ValueError", "RA712", {"q_seq_shards": 3, "q_seq_len": 256}),
    ("block-q-per-shard", lambda: SK.make_splash_mha(_causal(), block_sizes=SK.BlockSizes(block_q=256, block_kv=128),
                                                     head_shards=1, q_seq_shards=2, interpret=True),
     "ValueError", "RA710", {"q_block_size": 256, "q_seq_len_per_shard": 128}),
    ("head-shards", lambda: SK.make_splash_mha(_causal(), block_sizes=SK.BlockSizes(block_q=128, block_kv=128),
                                               head_shards=3, q_seq_shards=1, interpret=True),
     "ValueError", "RA712", {"head_shards": 3, "head_count": 2}),
    ("dynamic-mask-int32", lambda: _make(mask=jnp.asarray(np.tril(np.ones((SH, ST, ST), np.int32)))),
     "ValueError", "RA701", {"dtype": "int32"}),
    ("dynamic-mask-block-q-96", lambda: _make(bs=SK.BlockSizes(block_q=96, block_kv=128),
                                              mask=jnp.asarray(np.tril(np.ones((SH, ST, ST), bool)))),
     "ValueError", "RA710", {"q_block_size": 96, "q_seq_len": 256}),
    ("dynamic-mask-2d", lambda: MI.process_dynamic_mask(jnp.ones((ST, ST), bool), (128, 128)),
     "ValueError", "RA715", {"mask_shape": [256, 256]}),
    ("process-mask-2d", lambda: MI.process_mask(SM.CausalMask((ST, ST)), (128, 128)),
     "ValueError", "RA715", {"mask_shape": [256, 256]}),
    ("all-zero-rows (two-line message)", lambda: MI._check_mask(SM.NumpyMask(np.zeros((4, 4), bool))),
     "ValueError", "RA741", {}),
    ("downcast-int64", lambda: MI._downcast_to_small_type(np.ones(3, np.int64)), "ValueError", "RA740", {}),
    ("downcast-negative", lambda: MI._downcast_to_small_type(-np.ones(3, np.int32)), "ValueError", "RA740", {}),
    ("grad-without-backward-blocks (existing entry)", lambda: _grad(_make(bs=SK.BlockSizes(block_q=128, block_kv=128))),
     "ValueError", "RA223", {}),
    ("mha-key-rank-2", lambda: _fwd(_make(), k=_sq()[0]), "ValueError", "RA704",
     {"expected_kv_rank": 3, "k_rank": 2}),
    ("mqa-key-rank-3", lambda: _fwd(SK.make_splash_mqa_single_device(_causal(), block_sizes=_bs(), interpret=True)),
     "ValueError", "RA704", {"expected_kv_rank": 2, "k_rank": 3}),
    ("key-head-dim", lambda: _fwd(_make(), k=_sq(d=64), v=_sq(d=64)), "ValueError", "RA705",
     {"head_dim_qk": 128, "head_dim_k": 64}),
    ("gqa-heads", lambda: _fwd(_make(mask=_causal(h=3)), q=_sq(h=3)), "ValueError", "RA706",
     {"num_kv_heads": 2, "num_q_heads": 3}),
    ("kv-leading-dims", lambda: _fwd(_make(), v=_sq(t=128)), "ValueError", "RA707",
     {"k_shape": [2, 256, 128], "v_shape": [2, 128, 128]}),
    ("bkv-not-multiple-of-compute", lambda: _fwd(_make(bs=SK.BlockSizes(block_q=128, block_kv=256, block_kv_compute=96))),
     "ValueError", "RA708", {"bkv": 256, "bkv_compute": 96}),
    ("bkv-compute-64", lambda: _fwd(_make(bs=SK.BlockSizes(block_q=128, block_kv=128, block_kv_compute=64))),
     "ValueError", "RA702", {"bkv_compute": 64, "NUM_LANES": 128}),
    ("q-segment-ids", lambda: _fwd(_make(), segment_ids=_seg(tq=ST + 1)), "ValueError", "RA709",
     {"segment_ids_shape": [257], "expected_shape": [256]}),
    ("kv-segment-ids", lambda: _fwd(_make(), segment_ids=_seg(tk=ST + 1)), "ValueError", "RA709",
     {"segment_ids_shape": [257], "expected_shape": [256]}),
    ("mask-function-int32", lambda: _fwd(_make(mask=_int_mask_function())), "ValueError", "RA701", {"dtype": "int32"}),
    ("grad-dkv-compute-above-block", lambda: _grad(_make(bs=_bs(block_kv_dkv_compute=256))), "ValueError", "RA708",
     {"bkv_compute": 256, "bkv": 128}),
    ("grad-dkv-not-multiple-of-compute", lambda: _grad(_make(bs=_bs(block_kv_dkv=256, block_kv_dkv_compute=96))),
     "ValueError", "RA708", {"bkv": 256, "bkv_compute": 96}),
    ("grad-block-kv-dq-64", lambda: _grad(_make(bs=_bs(block_kv_dq=64))), "ValueError", "RA702",
     {"bkv": 64, "NUM_LANES": 128}),
    ("grad-segment-ids-block-q-dkv-64", lambda: _grad(_make(bs=_bs(block_q_dkv=64)), segment_ids=_seg()),
     "NotImplementedError", "RA703", {"NUM_LANES": 128}),
    ("grad-with-save-residuals", lambda: jax.eval_shape(
        jax.grad(lambda q: _make(save_residuals=True)(q, _sq(), _sq())[0].sum()), _sq()),
     "NotImplementedError", "RA607", {}),
    ("reference-grad-with-save-residuals", lambda: jax.eval_shape(
        jax.grad(lambda q: SK.make_masked_mha_reference(_causal(), backward_impl="custom")(
            q, _sq(), _sq(), save_residuals=True)[0].sum()), _sq()),
     "NotImplementedError", "RA607", {}),
    ("sinks-shape (no message)", lambda: _fwd(_make(), sinks=jnp.zeros((SH + 1,))), "AssertionError", "RA797", {}),
    ("sharding-indivisible", lambda: _abstract_mesh_spec(_P("x", None)), "ValueError", "RA713", {}),
    ("sharding-kv-sequence", lambda: _abstract_mesh_spec(_P(None, None, "y")), "ValueError", "RA714", {}),
    ("sharding-three-entries (no message)", lambda: _abstract_mesh_spec(_P(None, None, None)),
     "AssertionError", "RA797", {}),
]

MASKS = [
    ("bool-conversion", lambda: bool(SM.CausalMask((ST, ST))), "NotImplementedError", "RA720", {}),
    ("or-shapes", lambda: SM.CausalMask((ST, ST)) | SM.CausalMask((ST, 128)), "ValueError", "RA721",
     {"other_shape": [256, 128], "self_shape": [256, 256]}),
    ("logical-and-shapes", lambda: SM.LogicalAnd(SM.FullMask((ST, ST)), SM.FullMask((ST, 128))), "ValueError",
     "RA721", {}),
    ("chunk-mask-size-0", lambda: SM.make_chunk_attention_mask((ST, ST), 0), "ValueError", "RA722", {}),
    ("chunked-causal-size-negative", lambda: SM.ChunkedCausalMask((ST, ST), chunk_size=-1), "ValueError", "RA722", {}),
    ("multi-head-empty", lambda: SM.MultiHeadMask([]), "ValueError", "RA723", {}),
    ("multi-head-shapes", lambda: SM.MultiHeadMask([SM.FullMask((ST, ST)), SM.FullMask((ST, 128))]), "ValueError",
     "RA721", {"other_shape": [256, 128], "self_shape": [256, 256]}),
    ("multi-head-numpy", lambda: SM.MultiHeadMask([np.ones((ST, ST), bool)]), "ValueError", "RA723", {}),
    ("multi-head-nested", lambda: SM.MultiHeadMask([SM.MultiHeadMask([SM.FullMask((ST, ST))])]), "ValueError",
     "RA723", {}),
    ("multi-head-two-indices", lambda: _causal()[0:1, :], "NotImplementedError", "RA724",
     {"idx": "(slice(0, 1, None), slice(None, None, None))"}),
    ("causal-integer-index", lambda: SM.CausalMask((ST, ST))[0, :], "NotImplementedError", "RA724",
     {"idx": "(0, slice(None, None, None))"}),
    ("multi-head-index-out-of-range (no message)", lambda: _causal()[5, :, :], "AssertionError", "RA798", {}),
    ("full-mask-slice-out-of-range (no message)", lambda: SM.FullMask((ST, ST))[0:ST + 1, :], "AssertionError",
     "RA798", {}),
    ("shard-count", lambda: SM.CausalMask((100, ST), shard_count=3), "ValueError", "RA725",
     {"shard_count_squared": 9, "q_seq_len": 100}),
    ("computable-mask-hash (no message)", lambda: hash(SM._ComputableMask((ST, ST), lambda q, k: q >= k)),
     "NotImplementedError", "RA728", {}),
    ("abstract-mask-shape (no message)", lambda: SM.Mask().shape, "NotImplementedError", "RA728", {}),
    ("mask-subclass-without-getitem (no message)", _mask_without_getitem, "NotImplementedError", "RA728", {}),
    ("numpy-mask-1d", lambda: SM.NumpyMask(np.ones((ST,), bool)), "ValueError", "RA726", {}),
    ("numpy-mask-int", lambda: SM.NumpyMask(np.ones((ST, ST), np.int32)), "ValueError", "RA701", {}),
    ("full-mask-list-shape", lambda: SM.FullMask([ST, ST]), "ValueError", "RA727", {"shape_type": "<class 'list'>"}),
]


@pytest.mark.parametrize("name,fn,exception,code,values", SPLASH, ids=[c[0] for c in SPLASH])
def test_splash_attention(name, fn, exception, code, values):
    _require(SK_ERROR, SM_ERROR, MI_ERROR)
    _check(fn, code, values, exception)


@pytest.mark.parametrize("name,fn,exception,code,values", MASKS, ids=[c[0] for c in MASKS])
def test_splash_masks(name, fn, exception, code, values):
    _require(SM_ERROR)
    _check(fn, code, values, exception)


# -- the catalogue side ----------------------------------------------------------------------------


def test_every_case_has_its_own_code_or_a_shared_one():
    """Each entry of this share is exercised by at least one real error above (where one can be raised on CPU)."""
    exercised = {c[3] for c in FLASH + PAGED + RAGGED + SPLASH + MASKS}
    # Not reachable on CPU or through the public API in JAX 0.10.2: kernel-internal assertions
    # (RA649 flash, RA668 quantized pages, RA669 paged reference, RA699 tuned-table lookup on TPU)
    # and splash metadata invariants (RA799).
    unreachable = {"RA649", "RA668", "RA669", "RA699", "RA799"}
    from errkit.catalogue import releases
    from errkit.explain.matching.index import Index

    # Entries whose every wording only older jax releases raise are held to those releases by
    # tests/catalogue/test_release_ranges.py (the harvested wordings), not by an error raised here.
    index, installed = Index.load(), releases.release_tuple(jax.__version__)
    raised_now = {w["code"] for w in index.wordings if not w["releases"] or releases.contains(w["releases"]["bounds"], installed)}
    mine = {code for code in index.entries if "RA600" <= code <= "RA799" and code in raised_now}
    assert mine - exercised - unreachable == set(), "entries no case above raises"
    # Not a list that may go stale: a code a case now raises, or one no longer catalogued, is named.
    stale = unreachable - (mine - exercised)
    assert not stale, f"remove {sorted(stale)} from `unreachable`: a case raises it, or no entry has it"
