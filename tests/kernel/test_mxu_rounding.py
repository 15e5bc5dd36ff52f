"""The TPU kernels read v and do rounded to bfloat16 where a TPU's MXU would round them (float32
and float16 at the default matmul precision), and delta is computed from the same rounded do
(errkit_attention/pallas_tpu.py ``rounded``): on a TPU v5e, with do rounded by the MXU alone, a
query that sees only its own key (a bound of 0) got dQ and dK up to 3.2e-2 where the exact ones
are 0 (benchmarks/results/kernel_property_tpu_v5e_2026-12-07_seed1_before.jsonl).

Pallas' interpreter computes float32 dots in float32, so there nothing is rounded; the chip's
rounding is emulated here by letting ``mxu_rounds`` hold in interpret mode too."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from errkit_attention import pallas_attention as pa, pallas_tpu, ranker_attention, tuning


def _is_bf16(x) -> bool:
    x = np.asarray(x, np.float32)
    return bool(np.all(x == np.asarray(jnp.asarray(x).astype(jnp.bfloat16), np.float32)))


def test_rounded_only_where_the_mxu_rounds():
    x = jax.random.normal(jax.random.PRNGKey(0), (64, 32), jnp.float32)
    assert not _is_bf16(x)
    for dtype in (jnp.float32, jnp.float16):
        got = pallas_tpu.rounded(x.astype(dtype))
        assert got.dtype == jnp.float32 and _is_bf16(got)
    assert np.array_equal(pallas_tpu.rounded(x, interpret=True), x)
    with jax.default_matmul_precision("highest"):
        assert np.array_equal(pallas_tpu.rounded(x), x)
    b = x.astype(jnp.bfloat16)
    assert pallas_tpu.rounded(b) is b


def _bf16_converts(precision) -> int:
    q = jnp.zeros((1, 256, 2, 64), jnp.float32)

    def loss(q, k, v):
        return ranker_attention(q, k, v, implementation="pallas").sum()

    grad = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    with jax.default_matmul_precision(precision):
        text = grad.trace(q, q, q).lower(lowering_platforms=("tpu",)).as_text()
    return text.count("bf16")


def test_lowered_for_tpu_v_and_do_are_rounded_at_default_precision_only():
    assert _bf16_converts(None) > 0
    assert _bf16_converts("highest") == 0


def _diagonal_grads(monkeypatch, round_delta: bool):
    """dq, dk of a float32 call whose one example has a bound of 0 (each query sees only its own
    key: the exact dq and dk are 0), with the chip's rounding emulated."""
    real = pallas_tpu.mxu_rounds
    monkeypatch.setattr(pallas_tpu, "mxu_rounds", lambda dtype, interpret=False: real(dtype))
    if not round_delta:  # the kernel before: delta from the exact do
        monkeypatch.setattr(pa, "_delta", lambda out, do, st: jnp.sum(
            out.astype(jnp.float32) * do.astype(jnp.float32), axis=-1))
    keys = jax.random.split(jax.random.PRNGKey(21), 4)
    q, k, v, do = (jax.random.normal(key, (1, 256, 2, 128), jnp.float32) for key in keys)

    def loss(q, k):
        out = pa.pallas_attention(q, k, v, bound=jnp.array([0], jnp.int32), causal=False,
                                  sm_scale=128 ** -0.5, cap=None, cap_method="tanh",
                                  interpret="tpu", arch=tuning.TPU)
        return jnp.sum(out * do)

    return jax.grad(loss, argnums=(0, 1))(q, k)


@pytest.mark.slow
def test_a_query_that_sees_only_itself_gets_zero_gradients(monkeypatch):
    dq, dk = _diagonal_grads(monkeypatch, round_delta=True)
    assert float(jnp.max(jnp.abs(dq))) < 1e-5 and float(jnp.max(jnp.abs(dk))) < 1e-5


@pytest.mark.slow
def test_the_emulation_shows_what_an_unrounded_delta_did(monkeypatch):
    """The control: with delta from the exact do, the same call's gradients are far from 0, as
    they were on the chip."""
    dq, dk = _diagonal_grads(monkeypatch, round_delta=False)
    assert float(jnp.max(jnp.abs(dq))) > 1e-3 and float(jnp.max(jnp.abs(dk))) > 1e-3
