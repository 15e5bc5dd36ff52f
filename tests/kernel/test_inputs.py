"""Inputs as callers write them: NumPy and JAX scalars for sm_scale, cap
and block sizes; integer bounds of any width checked against the int32 range (RA306), never
wrapped; float64 computed in float64 on the xla path; the bound's value checks (RA305, RA306) under
jit through jax.experimental.checkify."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

from errkit_attention import BlockSizes, _validators, ranker_attention, tuning

B, S, H, KV, D = 2, 16, 2, 1, 16


def qkv(dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    return tuple(jnp.asarray(rng.randn(*shape).astype(dtype))
                 for shape in ((B, S, H, D), (B, S, KV, D), (B, S, KV, D)))


# -- NumPy and JAX scalars -------------------------------------------------------------------------


SCALES = {
    "np.float32": lambda: np.float32(0.125),
    "np.float16": lambda: np.float16(0.125),
    "jnp.float32": lambda: jnp.float32(0.125),
    "1/jnp.sqrt(64.)": lambda: 1 / jnp.sqrt(64.0),
    "np.int64": lambda: np.int64(1),
}


@pytest.mark.parametrize("implementation", ["xla", "pallas"])
@pytest.mark.parametrize("name", SCALES)
def test_numpy_and_jax_scalars_give_the_python_float_output(name, implementation):
    q, k, v = qkv()
    scalar = SCALES[name]()
    python = float(scalar)
    want = ranker_attention(q, k, v, sm_scale=python, cap=5.0, implementation=implementation)
    got = ranker_attention(q, k, v, sm_scale=scalar, cap=np.float32(5), implementation=implementation)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    got = ranker_attention(q, k, v, sm_scale=python, cap=jnp.float32(5), implementation=implementation)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_numpy_block_sizes_are_ints():
    q, k, v = qkv()
    want = ranker_attention(q, k, v, config=BlockSizes(16, 16), implementation="pallas")
    for config in (BlockSizes(np.int64(16), 16), BlockSizes(np.int32(16), jnp.int32(16)),
                   BlockSizes(16, 16, np.int64(16), np.uint16(16), 16, np.int8(16))):
        got = ranker_attention(q, k, v, config=config, implementation="pallas")
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        grad = jax.grad(lambda q: ranker_attention(q, k, v, config=config, implementation="pallas").sum())(q)
        assert np.isfinite(np.asarray(grad)).all()


@pytest.mark.parametrize("value, error", [
    (np.float32("nan"), _validators.SmScaleNotFiniteError),
    (jnp.float32(np.inf), _validators.SmScaleNotFiniteError),
    (np.bool_(True), _validators.SmScaleNotFiniteError),
    (jnp.ones((1,)), _validators.SmScaleNotFiniteError),
])
def test_scalars_that_are_not_finite_numbers_are_still_refused(value, error):
    with pytest.raises(error):
        ranker_attention(*qkv(), sm_scale=value)


def test_a_traced_scale_is_refused_under_jit():
    with pytest.raises(_validators.SmScaleNotFiniteError, match="Tracer"):
        jax.jit(lambda q, k, v, s: ranker_attention(q, k, v, sm_scale=s))(*qkv(), 0.125)
    with pytest.raises(_validators.CapNotPositiveError, match="Tracer"):
        jax.jit(lambda q, k, v, c: ranker_attention(q, k, v, cap=c))(*qkv(), 5.0)


def test_numpy_float_block_sizes_are_still_refused():
    with pytest.raises(_validators.BlockSizeInvalidError):
        ranker_attention(*qkv(), config=BlockSizes(np.float64(64.0), 64), implementation="pallas")


# -- integer bounds of any width -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.uint64])
@pytest.mark.parametrize("value", [2**31, 2**32 - 1])
def test_a_wide_bound_above_int32_raises_ra306(dtype, value):
    bound = np.array([value, 3], dtype)
    with pytest.raises(_validators.BoundExceedsInt32Error) as info:
        ranker_attention(*qkv(), bound=bound, implementation="xla")
    assert info.value.code == "RA306"
    assert str(info.value) == f"bound must fit in int32 (at most 2147483647) for every example, got max(bound)={value}"


@pytest.mark.parametrize("dtype", [np.int64, np.uint32, np.uint64, np.int8, np.uint16])
def test_a_wide_bound_in_range_gives_the_int32_output(dtype):
    q, k, v = qkv()
    want = ranker_attention(q, k, v, bound=jnp.array([5, S], jnp.int32), implementation="xla")
    got = ranker_attention(q, k, v, bound=np.array([5, S], dtype), implementation="xla")
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_int32_max_is_accepted_and_means_every_key():
    q, k, v = qkv()
    want = ranker_attention(q, k, v, bound=jnp.array([S, S], jnp.int32), implementation="xla")
    got = ranker_attention(q, k, v, bound=np.array([2**31 - 1, S], np.int64), implementation="xla")
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_traced_wide_bound_is_clamped_not_wrapped():
    """Without checkify: 2**31 + 5 as uint32 would wrap to a negative int32 (only the diagonal);
    clamped, it is kv_seq_len (every key)."""
    q, k, v = qkv()
    f = jax.jit(lambda q, k, v, b: ranker_attention(q, k, v, bound=b, implementation="xla"))
    got = f(q, k, v, jnp.array([2**31 + 5, 3], jnp.uint32))
    want = ranker_attention(q, k, v, bound=jnp.array([S, 3], jnp.int32), implementation="xla")
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-6)


# -- value checks under jit: checkify --------------------------------------------------------------


@pytest.mark.parametrize("implementation", ["xla", "pallas"])
def test_checkify_under_jit_reports_ra305_with_its_message(implementation):
    q, k, v = qkv()
    f = jax.jit(lambda q, k, v, b: ranker_attention(q, k, v, bound=b, implementation=implementation))
    err, _ = checkify.checkify(f)(q, k, v, jnp.array([-1, 3], jnp.int32))
    message = err.get()
    assert message is not None and message.startswith(
        "[RA305] bound must be >= 0 for every example, got min(bound)=-1"), message
    with pytest.raises(checkify.JaxRuntimeError, match=r"\[RA305\]"):
        err.throw()
    # the same message as the eager call's error
    with pytest.raises(_validators.BoundNegativeError) as info:
        ranker_attention(q, k, v, bound=jnp.array([-1, 3], jnp.int32), implementation=implementation)
    assert message.startswith(f"[RA305] {info.value}")


def test_checkify_inside_jit_and_on_a_valid_bound():
    q, k, v = qkv()
    f = jax.jit(checkify.checkify(lambda q, k, v, b: ranker_attention(q, k, v, bound=b)))
    err, _ = f(q, k, v, jnp.array([-7, 3], jnp.int32))
    assert err.get().startswith("[RA305] bound must be >= 0 for every example, got min(bound)=-7")
    err, out = f(q, k, v, jnp.array([0, S], jnp.int32))
    assert err.get() is None
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ranker_attention(q, k, v, bound=jnp.array([0, S], jnp.int32))))


def test_checkify_under_jit_reports_ra306():
    q, k, v = qkv()
    f = jax.jit(lambda q, k, v, b: ranker_attention(q, k, v, bound=b))
    err, _ = checkify.checkify(f)(q, k, v, jnp.array([2**31 + 5, 3], jnp.uint32))
    assert err.get().startswith(
        "[RA306] bound must fit in int32 (at most 2147483647) for every example, got max(bound)=2147483653")


def test_without_checkify_a_traced_negative_bound_is_clamped_to_zero():
    q, k, v = qkv()
    f = jax.jit(lambda q, k, v, b: ranker_attention(q, k, v, bound=b))
    got = f(q, k, v, jnp.array([-1, 3], jnp.int8))
    want = ranker_attention(q, k, v, bound=jnp.array([0, 3], jnp.int32))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_the_docstring_says_what_happens_without_checkify():
    doc = " ".join(ranker_attention.__doc__.split())
    assert "checkify" in doc and "clamped to [0, kv_seq_len]" in doc


# -- float64 on the xla path -----------------------------------------------------------------------


def reference64(q, k, v, sm_scale):
    """float64 NumPy attention, MHA/GQA, no mask."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * sm_scale
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


def test_float64_on_xla_is_computed_in_float64():
    with jax.enable_x64(True):
        q, k, v = qkv(np.float64)
        assert q.dtype == jnp.float64
        out = ranker_attention(q, k, v, sm_scale=np.float64(0.3), implementation="xla")
        assert out.dtype == jnp.float64
        err = np.abs(np.asarray(out) - reference64(q, k, v, 0.3)).max()
    assert err < 1e-12, err


def test_x64_mode_float32_and_int64_bound():
    """In x64 mode Python ints make int64 arrays: an int64 bound is accepted, checked, and cast."""
    q, k, v = qkv()
    want = ranker_attention(q, k, v, bound=jnp.array([5, S], jnp.int32), implementation="xla")
    with jax.enable_x64(True):
        bound = jnp.array([5, S])
        assert bound.dtype == jnp.int64
        got = ranker_attention(q, k, v, bound=bound, implementation="xla")
        with pytest.raises(_validators.BoundExceedsInt32Error):
            ranker_attention(q, k, v, bound=jnp.array([2**40, S]), implementation="xla")
        f = jax.jit(lambda q, k, v, b: ranker_attention(q, k, v, bound=b, implementation="xla"))
        err, _ = checkify.checkify(f)(q, k, v, jnp.array([2**40, S]))
        assert err.get().startswith("[RA306]")
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [jnp.int8, jnp.int16, jnp.uint8, jnp.uint16, jnp.uint32, jnp.int32])
def test_checkify_passes_a_valid_bound_of_any_width(dtype):
    """Narrow dtypes cannot hold the int32 limit the check compares with: it must not wrap there."""
    q, k, v = qkv()
    f = jax.jit(lambda q, k, v, b: ranker_attention(q, k, v, bound=b))
    err, _ = checkify.checkify(f)(q, k, v, jnp.array([0, 3], dtype))
    assert err.get() is None


@pytest.mark.parametrize("mask", ["none", "causal", "bound"])
def test_x64_mode_on_the_pallas_path_matches_x64_off(mask):
    """Under jax_enable_x64 Python ints in the kernel's index arithmetic would be int64 next to the
    int32 program ids (a TypeError from lax.div before): forward and gradient run and agree."""
    q, k, v = qkv()
    kwargs = {"none": {}, "causal": {"causal": True}, "bound": {"bound": np.array([5, S], np.int32)}}[mask]

    def run():
        def loss(q, k, v):
            return ranker_attention(q, k, v, implementation="pallas", **kwargs).sum()
        return (ranker_attention(q, k, v, implementation="pallas", **kwargs),
                *jax.grad(loss, argnums=(0, 1, 2))(q, k, v))

    want = run()
    with jax.enable_x64(True):
        got = run()
    for w, g in zip(want, got):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=0, atol=1e-6)


def test_x64_mode_lowers_forward_and_backward_for_cuda():
    spec = jax.ShapeDtypeStruct((B, 64, H, 64), jnp.bfloat16)
    kv_spec = jax.ShapeDtypeStruct((B, 64, KV, 64), jnp.bfloat16)

    def fwd_bwd(q, k, v, bound):
        return jax.grad(lambda q, k, v: ranker_attention(
            q, k, v, bound=bound, implementation="pallas").astype(jnp.float32).sum(),
            argnums=(0, 1, 2))(q, k, v)

    with jax.enable_x64(True), tuning.forward_kernel("triton"):  # the Triton forward on sm_90a
        text = jax.jit(fwd_bwd).trace(spec, kv_spec, kv_spec, jax.ShapeDtypeStruct((B,), jnp.int64)).lower(
            lowering_platforms=("cuda",)).as_text()
    # the forward, then the fused backward or dq and dk/dv (errkit_attention/tuning.py's choice)
    calls = len(tuning.passes(tuning.DEFAULT_ARCH, 64, "bfloat16"))
    assert text.count("__gpu$xla.gpu.triton") == calls, "forward and backward Triton calls"
