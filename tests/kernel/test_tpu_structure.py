"""The structure of the TPU kernels (errkit_attention/pallas_tpu.py, issue 49), checked without a TPU:

- each of its choices (``Options``: q scaled in XLA, only partial tiles masked, the compacted
  causal grid, partial tiles in chunks, dK/dV on transposed tiles, lse / delta as rows), turned
  off in turn and all together, gives the reference's output and gradients in interpret mode, on
  calls whose tiles are whole, partial, chunked and skipped (causal, bound, GQA, a partial last
  block, both caps);
- the compacted grids hold exactly the tiles that hold an allowed pair, each once, in order, with
  their first / last flags;
- float16 never reaches Mosaic: the kernels of a float16 call take and give float32 (a TPU v5e's
  Mosaic has no float16 vector load: "Invalid vector type for load"), and the call still returns
  float16.
"""

from __future__ import annotations

import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from errkit_attention import BlockSizes, pallas_attention as pa, pallas_tpu, ranker_attention, tuning
from errkit_attention.reference import attention_reference

O = pallas_tpu.Options
BASE = O(kv_chunk=128)  # the default structure, with chunks that the small tiles below can hold
VARIANTS = {
    "default": BASE,
    "none": O(prescale_from=1 << 30, mask_partial=False, compact=False, kv_chunk=0,
              transposed_dkdv=False, stats_rows=False, lse_rows_out=False, k_columns_below=0),
    "prescale always": dataclasses.replace(BASE, prescale_from=0),
    "prescale never": dataclasses.replace(BASE, prescale_from=1 << 30),
    "mask every tile": dataclasses.replace(BASE, mask_partial=False),
    "rectangular grid": dataclasses.replace(BASE, compact=False),
    "no chunks": dataclasses.replace(BASE, kv_chunk=0),
    "row-major dkdv": dataclasses.replace(BASE, transposed_dkdv=False),
    "stats in lanes": dataclasses.replace(BASE, stats_rows=False, lse_rows_out=False),
    "k rows": dataclasses.replace(BASE, k_columns_below=0),
    "k columns": dataclasses.replace(BASE, k_columns_below=1 << 30),
}
# Tiles that are whole, partial (each in two chunks of 128: along the keys in the forward and dQ,
# 256-wide key tiles; along the queries in dK/dV, 256-row query tiles) and skipped at S=600, whose
# last block is partial everywhere.
CHUNKED = BlockSizes(block_q=128, block_kv=256, block_q_dkv=256, block_kv_dkv=128,
                     block_q_dq=128, block_kv_dq=256)
# (dtype, seq, (hq, hkv), head_dim, causal, bound, cap, cap_method)
CASES = [
    ("float32", 600, (4, 2), 128, True, False, None, "tanh"),
    ("float32", 600, (2, 1), 64, True, True, 5.0, "tanh"),
    ("float32", 600, (2, 2), 128, False, True, 30.0, "soft_sign"),
]


def _run(case, opts):
    dtype, seq, (hq, hk), d, causal, bound, cap, cap_method = case
    keys = jax.random.split(jax.random.PRNGKey(seq + d), 5)
    q = jax.random.normal(keys[0], (2, seq, hq, d), jnp.dtype(dtype))
    k = jax.random.normal(keys[1], (2, seq, hk, d), jnp.dtype(dtype))
    v = jax.random.normal(keys[2], (2, seq, hk, d), jnp.dtype(dtype))
    do = jax.random.normal(keys[3], q.shape, jnp.dtype(dtype))
    options = dict(bound=jnp.array([450, 3], jnp.int32) if bound else None, causal=causal,
                   sm_scale=d ** -0.5, cap=cap, cap_method=cap_method)

    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, config=CHUNKED, interpret="tpu", arch=tuning.TPU,
                                   **options)

    real = pa._flash_attention

    def flash(q, k, v, bound, st):
        return real(q, k, v, bound, dataclasses.replace(st, tpu=opts))

    pa._flash_attention = flash
    try:
        out, vjp = jax.vjp(kernel, q, k, v)
        got = (out, *vjp(do))
    finally:
        pa._flash_attention = real
    want, ref_vjp = jax.vjp(lambda q, k, v: attention_reference(q, k, v, **options), q, k, v)
    errors = {}
    for name, g, w in zip(("out", "dq", "dk", "dv"), got, (want, *ref_vjp(do))):
        g, w = np.asarray(g, np.float32), np.asarray(w, np.float32)
        errors[name] = float(np.max(np.abs(g - w))) / max(1.0, float(np.max(np.abs(w))))
    return errors


# every structure on the causal call (the compacted grid, chunks along keys and queries, q scaled
# at head_dim 128); the default and the structure before issue 49 on the calls with a bound too
RUNS = ([(variant, CASES[0]) for variant in sorted(VARIANTS)]
        + [(variant, case) for variant in ("default", "none") for case in CASES[1:]])


@pytest.mark.parametrize("variant,case", RUNS,
                         ids=[f"{v}-{c[1]}-{c[3]}-{'bound' if c[5] else 'nobound'}"
                              for v, c in RUNS])
def test_every_structure_gives_the_reference(variant, case):
    errors = _run(case, VARIANTS[variant])
    assert max(errors.values()) < 2e-5, errors


def _static(q_len, kv_len, bq, bkv, causal=True, bound=False):
    return pa._Static(q_len=q_len, kv_len=kv_len, head_dim=64, group=1, block_q=bq,
                      block_kv=bkv, block_q_dkv=bq, block_kv_dkv=bkv, block_q_dq=bq,
                      block_kv_dq=bkv, sm_scale=0.125, cap=None, cap_method="none",
                      causal=causal, has_bound=bound, interpret=True)


def _decoded(steps):
    return [(int(x) & pallas_tpu._MASK, (int(x) >> pallas_tpu._BITS) & pallas_tpu._MASK,
             bool(int(x) & pallas_tpu._FIRST), bool(int(x) & pallas_tpu._LAST)) for x in steps]


@pytest.mark.parametrize("seq,bq,bkv", [(4096, 1024, 1024), (1000, 256, 1024), (600, 512, 128),
                                        (1, 16, 16), (4097, 512, 1024), (300, 1024, 64)])
def test_the_compacted_grids_hold_exactly_the_needed_tiles(seq, bq, bkv):
    st = _static(seq, seq, bq, bkv)
    allowed = np.tril(np.ones((seq, seq), bool))  # causal, no bound
    n_q, n_kv = -(-seq // bq), -(-seq // bkv)
    needed = {(i, j) for i in range(n_q) for j in range(n_kv)
              if allowed[i * bq:(i + 1) * bq, j * bkv:(j + 1) * bkv].any()}
    rows = _decoded(pallas_tpu._row_steps(st, bq, bkv))
    assert [(i, j) for i, j, _, _ in rows] == sorted(needed)  # query tile outer, each once
    cols = _decoded(pallas_tpu._col_steps(st, bq, bkv))
    assert [(i, j) for j, i, _, _ in cols] == sorted(needed, key=lambda t: (t[1], t[0]))
    for steps in (rows, cols):
        for n, (outer, _, first, last) in enumerate(steps):
            assert first == (n == 0 or steps[n - 1][0] != outer)
            assert last == (n == len(steps) - 1 or steps[n + 1][0] != outer)
    # not causal, or with a bound: the rectangular grid
    assert pallas_tpu._row_steps(_static(seq, seq, bq, bkv, causal=False), bq, bkv) is None
    assert pallas_tpu._col_steps(_static(seq, seq, bq, bkv, bound=True), bq, bkv) is None


def _mosaic_operand_types(text: str) -> set[str]:
    """The element types of every tpu_custom_call's operands and results in a lowered module."""
    types = set()
    for line in text.splitlines():
        if "tpu_custom_call" in line and "stablehlo.custom_call" in line:
            types |= set(re.findall(r"tensor<(?:[0-9?]+x)*([a-z]+[0-9]*)>", line))
    return types


@pytest.mark.parametrize("head_dim,causal", [(128, True), (80, False)])
def test_float16_never_reaches_mosaic(head_dim, causal):
    """The issue's crash (float16, head_dim 128, S=1024, causal): its kernels now take float32."""
    q = jax.ShapeDtypeStruct((1, 1024, 4, head_dim), jnp.float16)

    def loss(q, k, v):
        return ranker_attention(q, k, v, causal=causal, implementation="pallas").astype(
            jnp.float32).sum()

    with tuning.target(tuning.TPU):
        text = jax.jit(jax.grad(loss, argnums=(0, 1, 2))).trace(q, q, q).lower(
            lowering_platforms=("tpu",)).as_text()
        out = jax.eval_shape(lambda q, k, v: ranker_attention(q, k, v, implementation="pallas"),
                             q, q, q)
    assert text.count("tpu_custom_call") >= 3
    types = _mosaic_operand_types(text)
    assert "f16" not in types and "f32" in types, types
    assert out.dtype == jnp.float16
    # float16 takes float32's tiles there
    assert tuning.block_sizes(tuning.TPU, head_dim, "float16") == tuning.block_sizes(
        tuning.TPU, head_dim, "float32")


def test_float16_in_interpret_mode_matches_float32():
    """float16 inputs give what float32 inputs holding the same values give, rounded to float16
    (the kernels compute in float32)."""
    keys = jax.random.split(jax.random.PRNGKey(3), 3)
    q, k, v = (jax.random.normal(key, (1, 200, 2, 64), jnp.float16) for key in keys)

    def run(q, k, v):
        return pa.pallas_attention(q, k, v, bound=None, causal=True, sm_scale=0.125, cap=None,
                                   cap_method="tanh", interpret="tpu", arch=tuning.TPU)

    half = np.asarray(run(q, k, v), np.float32)
    single = np.asarray(run(*(x.astype(jnp.float32) for x in (q, k, v))).astype(jnp.float16),
                        np.float32)
    assert np.max(np.abs(half - single)) <= 1e-3
