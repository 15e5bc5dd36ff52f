"""ranker_attention(..., layout="bhsd") (issue 49): q, k, v, the output and the gradients are
[batch, num_heads, seq_len, head_dim], as JAX's splash and TPU flash attention take them.

- The results are the "bshd" call's, transposed: forward and gradients, through the TPU kernels
  (errkit_attention/pallas_tpu.py) run in Pallas' interpreter, the Triton kernels run in Pallas'
  interpreter (``interpret="blocked"``), interpret mode and the xla implementation through the
  public API, and sharded over 8 host devices (GQA, causal, bound, caps).
- Lowered for a TPU, a "bhsd" call holds none of the transposes a "bshd" call pays for (only the
  forward's key columns below head_dim 128, ``pallas_tpu.Options.k_columns_below``, a choice of
  the kernel); lowered for CUDA it holds the same Triton / Mosaic GPU kernels, its arrays
  transposed around them.
- An unknown layout is refused with its catalogued error (RA207) before any array is looked at,
  and every check that reads a head count or a sequence length reads it from the layout's axis,
  with the true values in its message.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AbstractMesh

from errkit_attention import (BlockSizes, _validators, pallas_attention as pa, ranker_attention,
                              sharded_ranker_attention, tuning)
from errkit_attention.reference import attention_reference, swap_seq_heads as swap
from tests.kernel.test_lowering import INTERPRETER_LOOP, TRITON_CALL
from tests.kernel.test_lowering_tpu import MOSAIC_CALL, SMALL
from tests.kernel.test_sharding import _run_on_8_devices

TRANSPOSE = "stablehlo.transpose"


def _inputs(dtype, seq, heads, head_dim, batch=2, kv_seq=None):
    """q, k, v, do as [b, s, h, d] ("bshd")."""
    hq, hkv = heads
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    dt = jnp.dtype(dtype)
    q = jax.random.normal(keys[0], (batch, seq, hq, head_dim), dt)
    k = jax.random.normal(keys[1], (batch, kv_seq or seq, hkv, head_dim), dt)
    v = jax.random.normal(keys[2], k.shape, dt)
    do = jax.random.normal(keys[3], q.shape, dt)
    return q, k, v, do


def _out_and_grads(f, q, k, v, do):
    out, vjp = jax.vjp(f, q, k, v)
    return (out, *vjp(do))


def _both_layouts(kernel, q, k, v, do):
    """(out, dq, dk, dv) of kernel(q, k, v, layout) on the "bshd" arrays, and those of the
    "bhsd" call on the same arrays transposed, transposed back to [b, s, h, d]."""
    bshd = _out_and_grads(lambda q, k, v: kernel(q, k, v, "bshd"), q, k, v, do)
    bhsd = _out_and_grads(lambda q, k, v: kernel(q, k, v, "bhsd"), *map(swap, (q, k, v, do)))
    for x, y in zip(bshd, bhsd):
        assert y.shape == swap(x).shape and y.dtype == x.dtype
    return bshd, tuple(map(swap, bhsd))


def _assert_same(bshd, bhsd):
    """Equal to the last bit: the kernels see the same [b, h, s, d] (or [b, s, h, d]) values
    either way, and a transpose is exact."""
    for name, x, y in zip(("o", "dq", "dk", "dv"), bshd, bhsd):
        np.testing.assert_array_equal(np.asarray(y, np.float32), np.asarray(x, np.float32),
                                      err_msg=name)


def _assert_close_to_reference(got, q, k, v, do, options, tol):
    want = _out_and_grads(lambda q, k, v: attention_reference(q, k, v, **options), q, k, v, do)
    for name, g, w in zip(("o", "dq", "dk", "dv"), got, want):
        g, w = np.asarray(g, np.float32), np.asarray(w, np.float32)
        err = float(np.max(np.abs(g - w))) / max(1.0, float(np.max(np.abs(w))))
        assert err < tol, (name, err)


# (dtype, head_dim, (hq, hkv), causal, bound, cap, cap_method); S = 72: partial last blocks.
# head_dim 64 takes the forward's key-columns path, 128 the prescaled q; float16 is widened.
TPU_CASES = [
    ("float32", 64, (4, 2), True, True, 5.0, "tanh"),
    ("float32", 128, (4, 1), True, False, None, "tanh"),
    ("bfloat16", 64, (6, 2), False, True, 5.0, "soft_sign"),
    ("float16", 32, (2, 2), False, False, None, "none"),
]


def _options(causal, bound, cap, cap_method, head_dim, batch=2):
    return dict(bound=jnp.array([30, 5][:batch], jnp.int32) if bound else None, causal=causal,
                sm_scale=head_dim ** -0.5, cap=cap, cap_method=cap_method)


@pytest.mark.parametrize("dtype,head_dim,heads,causal,bound,cap,cap_method", TPU_CASES)
def test_tpu_kernels_in_bhsd_give_the_bshd_results_transposed(
        dtype, head_dim, heads, causal, bound, cap, cap_method):
    q, k, v, do = _inputs(dtype, 72, heads, head_dim)
    options = _options(causal, bound, cap, cap_method, head_dim)

    def kernel(q, k, v, layout):
        return pa.pallas_attention(q, k, v, config=SMALL, interpret="tpu", layout=layout,
                                   **options)

    names = str(jax.make_jaxpr(lambda *a: _out_and_grads(
        lambda q, k, v: kernel(q, k, v, "bhsd"), *a))(*map(swap, (q, k, v, do))))
    assert all(f"ranker_attention_{p}_tpu" in names for p in ("fwd", "dq", "dkdv"))
    bshd, bhsd = _both_layouts(kernel, q, k, v, do)
    _assert_same(bshd, bhsd)
    _assert_close_to_reference(bhsd, q, k, v, do, options, 1e-5 if dtype == "float32" else 6e-2)


@pytest.mark.parametrize("backward", ["fused", "split"])
def test_triton_kernels_in_bhsd_give_the_bshd_results_transposed(backward):
    """The Triton kernels (as lowered for a GPU) run by Pallas' interpreter: they take [b, s, h, d]
    and the "bhsd" call's arrays are transposed around them."""
    q, k, v, do = _inputs("float32", 72, (4, 2), 32)
    options = _options(True, True, 5.0, "tanh", 32)

    def kernel(q, k, v, layout):
        return pa.pallas_attention(q, k, v, config=SMALL, interpret="blocked", backward=backward,
                                   layout=layout, **options)

    bshd, bhsd = _both_layouts(kernel, q, k, v, do)
    _assert_same(bshd, bhsd)
    _assert_close_to_reference(bhsd, q, k, v, do, options, 1e-5)


@pytest.mark.parametrize("implementation", ["pallas", "xla"])
@pytest.mark.parametrize("mask", [dict(causal=True), dict(bound=jnp.array([40, 3], jnp.int32)),
                                  dict(causal=True, bound=jnp.array([0, 17], jnp.int32))],
                         ids=["causal", "bound", "bound-causal"])
def test_the_public_api_in_bhsd_gives_the_bshd_results_transposed(implementation, mask):
    """ranker_attention on the CPU: interpret mode ("pallas") and the reference ("xla"); GQA."""
    q, k, v, do = _inputs("float32", 40, (6, 2), 16)

    def kernel(q, k, v, layout):
        return ranker_attention(q, k, v, cap=4.0, implementation=implementation, layout=layout,
                                config=BlockSizes(16, 16) if implementation == "pallas" else None,
                                **mask)

    bshd, bhsd = _both_layouts(kernel, q, k, v, do)
    _assert_same(bshd, bhsd)


def test_a_traced_bound_is_clamped_to_the_key_length_of_the_layout():
    """Under jit a bound's values are clamped to [0, kv_seq_len] (attention.dispatch): with "bhsd"
    the keys are axis 2 of k (2 kv heads here, 40 keys: clamped to the heads, bound 100 would
    hide keys 2 to 39 from every query)."""
    q, k, v, _ = _inputs("float32", 40, (4, 2), 16)
    bound = jnp.array([100, 7], jnp.int32)

    def run(q, k, v, layout):
        return jax.jit(lambda q, k, v, b: ranker_attention(
            q, k, v, bound=b, implementation="xla", layout=layout))(q, k, v, bound)

    want = run(q, k, v, "bshd")
    got = run(*map(swap, (q, k, v)), "bhsd")
    np.testing.assert_array_equal(np.asarray(swap(got)), np.asarray(want))


def test_sharded_bhsd_matches_the_unsharded_call():
    """Batch over 4 devices, heads (axis 1) over 2: forward and gradients against the unsharded
    "bshd" call, and the output sharded as the inputs are."""
    out = _run_on_8_devices("""
        mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "heads"))
        q, k, v = draw(4, 40, 4, 32), draw(4, 40, 2, 32), draw(4, 40, 2, 32)
        ct = draw(4, 40, 4, 32)
        bound = jnp.asarray([0, 13, 40, 27], jnp.int32)
        options = dict(bound=bound, causal=True, cap=3.0, implementation="pallas",
                       config=BlockSizes(block_q=16, block_kv=16))
        swap = lambda x: jnp.swapaxes(x, 1, 2)

        def loss(fn, ct):
            return lambda q, k, v: jnp.sum(fn(q, k, v) * ct)

        plain = lambda q, k, v: ranker_attention(q, k, v, **options)
        sharded = lambda q, k, v: sharded_ranker_attention(
            q, k, v, mesh=mesh, batch_axis="data", head_axis="heads", layout="bhsd", **options)
        spec = P("data", "heads", None, None)
        shard = lambda x: jax.device_put(swap(x), NamedSharding(mesh, spec))
        expected = jit(plain)(q, k, v)
        got = jit(sharded)(shard(q), shard(k), shard(v))
        assert got.shape == swap(q).shape, got.shape
        assert got.sharding.is_equivalent_to(NamedSharding(mesh, spec), 4), got.sharding
        err = max_err(swap(got), expected)
        assert err < 1e-5, err
        g_plain = jit(jax.grad(loss(plain, ct), argnums=(0, 1, 2)))(q, k, v)
        g_sharded = jit(jax.grad(loss(sharded, swap(ct)), argnums=(0, 1, 2)))(
            shard(q), shard(k), shard(v))
        for a, b in zip(g_sharded, g_plain):
            assert max_err(swap(a), b) < 1e-5, max_err(swap(a), b)
        print("ok", err)
    """)
    assert out.startswith("ok")


# --------------------------------------------------------------------------
# Lowered for a TPU and for CUDA, from this CPU host.
# --------------------------------------------------------------------------


def _avals(layout, head_dim, dtype="bfloat16", seq=1024, heads=(4, 2)):
    def aval(h):
        return jax.ShapeDtypeStruct((2, seq, h, head_dim) if layout == "bshd" else
                                    (2, h, seq, head_dim), jnp.dtype(dtype))
    return aval(heads[0]), aval(heads[1]), aval(heads[1])


def _attention(layout, **options):
    def f(q, k, v):
        return ranker_attention(q, k, v, causal=True, implementation="pallas", layout=layout,
                                **options)
    return f


def _grad(f):
    return jax.grad(lambda *a: f(*a).astype(jnp.float32).sum(), argnums=(0, 1, 2))


def _lowered(f, avals, platform, arch):
    with tuning.target(arch):
        return jax.jit(f).trace(*avals).lower(lowering_platforms=(platform,)).as_text()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_bhsd_lowers_for_tpu_without_the_transposes(head_dim, dtype):
    """The point of the layout: "bshd" pays for q, k, v and o's transposes (and do, dq, dk, dv's
    in the backward); "bhsd" hands the caller's arrays to the Mosaic kernels as they are. What is
    left below head_dim 128 is the forward's k read as [b, h, d, s] (Options.k_columns_below)."""
    for fn, calls, bshd_transposes in ((lambda f: f, 1, 4), (_grad, 3, 16)):
        texts = {layout: _lowered(fn(_attention(layout)), _avals(layout, head_dim, dtype), "tpu",
                                  tuning.TPU)
                 for layout in ("bshd", "bhsd")}
        for text in texts.values():
            assert text.count(MOSAIC_CALL) == calls and INTERPRETER_LOOP not in text
        assert texts["bshd"].count(TRANSPOSE) == bshd_transposes
        assert texts["bhsd"].count(TRANSPOSE) == (1 if head_dim < 128 else 0), head_dim


@pytest.mark.parametrize("arch,forward", [("sm_90a", "mosaic_gpu"), ("sm_90a", "triton"),
                                          ("sm_80", "triton")])
def test_bhsd_lowers_for_cuda_to_the_same_kernels(arch, forward):
    """Lowered for CUDA a "bhsd" call holds the kernels a "bshd" one does (Mosaic GPU's forward on
    Hopper, Triton's elsewhere and for the backward), with its arrays transposed around them."""
    def counts(layout):
        with tuning.forward_kernel(forward):
            text = _lowered(_grad(_attention(layout)), _avals(layout, 64, seq=256), "cuda", arch)
        return text.count(TRITON_CALL), text.count("mosaic_gpu"), INTERPRETER_LOOP in text

    assert counts("bhsd") == counts("bshd")
    triton, mosaic_gpu, loop = counts("bhsd")
    assert triton >= 1 and (mosaic_gpu > 0) == (forward == "mosaic_gpu") and not loop


# --------------------------------------------------------------------------
# Checks: an unknown layout, and every shape check read from the layout's axes.
# --------------------------------------------------------------------------


def _zeros(*shape):
    return jnp.zeros(shape, jnp.float32)


@pytest.mark.parametrize("layout", ["bsdh", "BHSD", "", None, 3, True, ("b", "h", "s", "d")])
def test_an_unknown_layout_is_refused_with_its_catalogued_error(layout):
    q = k = v = _zeros(2, 16, 2, 16)
    for call in (lambda: ranker_attention(q, k, v, layout=layout),
                 lambda: sharded_ranker_attention(
                     q, k, v, mesh=jax.sharding.Mesh(np.array(jax.devices()[:1]), ("data",)),
                     layout=layout),
                 # before any array is looked at: not RA100's "must be arrays"
                 lambda: ranker_attention("q", None, [1.0], layout=layout)):
        with pytest.raises(_validators.ERRORS["RA207"]) as info:
            call()
        assert info.value.code == "RA207" and isinstance(info.value, ValueError)
        assert info.value.params == {"layout": layout}
        assert str(info.value) == ("layout must be 'bshd' ([batch, seq_len, num_heads, head_dim]) "
                                   f"or 'bhsd' ([batch, num_heads, seq_len, head_dim]), got {layout!r}")
        assert any("/errors/RA207/" in note for note in info.value.__notes__)


def test_the_closest_layout_is_offered_in_the_note():
    with pytest.raises(_validators.ERRORS["RA207"]) as info:
        ranker_attention(*[_zeros(2, 4, 16, 16)] * 3, layout="BNSH")
    assert "closest valid layout: bhsd" in info.value.__notes__[0]  # the label's '(none: ...)' note is not shown beside a value


def _refused(code, f):
    with pytest.raises(_validators.ERRORS[code]) as info:
        f()
    return info.value


def test_gqa_head_counts_are_read_from_axis_1():
    """12 query heads over 8 kv heads, the sequence 16 long: the same arrays read as "bshd" have
    16 heads each and are accepted."""
    q, k = _zeros(2, 12, 16, 32), _zeros(2, 8, 16, 32)
    err = _refused("RA105", lambda: ranker_attention(q, k, k, implementation="xla", layout="bhsd"))
    assert err.params == {"num_q_heads": 12, "num_kv_heads": 8}
    assert str(err) == "num_q_heads=12 must be divisible by num_kv_heads=8"
    assert ranker_attention(q, k, k, implementation="xla").shape == q.shape
    assert ranker_attention(_zeros(2, 12, 16, 32), _zeros(2, 4, 16, 32), _zeros(2, 4, 16, 32),
                            implementation="xla", layout="bhsd").shape == (2, 12, 16, 32)


@pytest.mark.parametrize("code,mask", [("RA303", dict(bound=jnp.array([3, 4], jnp.int32))),
                                       ("RA304", dict(causal=True))])
def test_sequence_lengths_are_read_from_axis_2(code, mask):
    """16 queries, 24 keys, 4 and 2 heads: "bhsd" refuses a bound or causal call with the true
    lengths (read as "bshd" the lengths would be the head counts, 4 and 2)."""
    q, k = _zeros(2, 4, 16, 16), _zeros(2, 2, 24, 16)
    err = _refused(code, lambda: ranker_attention(q, k, k, layout="bhsd", **mask))
    assert (err.params["q_seq_len"], err.params["kv_seq_len"]) == (16, 24)
    equal = _zeros(2, 2, 16, 16)
    assert ranker_attention(q, equal, equal, layout="bhsd", **mask).shape == q.shape


def test_the_rank_check_names_the_layouts_axes():
    for layout, axes in (("bshd", "batch, seq_len, num_heads, head_dim"),
                         ("bhsd", "batch, num_heads, seq_len, head_dim")):
        err = _refused("RA101", lambda: ranker_attention(_zeros(2, 16, 64), *[_zeros(2, 4, 16, 16)] * 2,
                                                         layout=layout))
        assert str(err) == f"q, k and v must all be 4D [{axes}], got: q_ndim=3, k_ndim=4, v_ndim=4"
        assert err.params["axes"] == axes


def test_head_dim_batch_and_bound_checks_read_their_axes_in_bhsd():
    """head_dim is axis 3 and batch axis 0 in both layouts (RA107, RA102, RA301)."""
    big = _zeros(2, 4, 16, 512)
    err = _refused("RA107", lambda: ranker_attention(big, big, big, implementation="pallas",
                                                     layout="bhsd"))
    assert err.params["head_dim"] == 512
    q, k = _zeros(2, 4, 16, 32), _zeros(2, 4, 16, 64)
    err = _refused("RA102", lambda: ranker_attention(q, k, k, layout="bhsd"))
    assert (err.params["q_shape"], err.params["k_shape"]) == ((2, 4, 16, 32), (2, 4, 16, 64))
    err = _refused("RA301", lambda: ranker_attention(q, q, q, bound=jnp.array([1, 2, 3]),
                                                     layout="bhsd"))
    assert err.params["batch"] == 2


def test_explicit_tiles_are_checked_at_the_true_head_dim_in_bhsd():
    """RA214 (an explicit config's tiles against a Hopper's shared memory) in "bhsd": the kernel's
    head_dim is axis 3, not the 4 heads of axis 1."""
    q, k = _zeros(1, 4, 1024, 16), _zeros(1, 2, 1024, 16)

    def f():
        return ranker_attention(q, k, k, config=BlockSizes(block_q=512, block_kv=1024),
                                implementation="pallas", layout="bhsd")

    with tuning.target("sm_90a"):
        err = _refused("RA214", lambda: jax.jit(f).trace())
    assert err.params["head_dim"] == 16


def _sharded_trace(q, k, shape, **kwargs):
    """sharded_ranker_attention traced and lowered for the CPU over an abstract mesh (RA404's
    worked example does the same): every check runs, no devices are needed."""
    mesh = AbstractMesh(shape, ("data", "model"))
    call = jax.jit(lambda q, k, v: sharded_ranker_attention(
        q, k, v, mesh=mesh, batch_axis="data", head_axis="model", implementation="xla", **kwargs))
    return call.trace(q, k, k).lower(lowering_platforms=("cpu",))


def test_the_head_mesh_axis_divides_the_kv_heads_of_axis_1():
    """3 kv heads over a head axis of 2: refused (RA404) with num_kv_heads=3; read as "bshd" the
    same arrays have 16 kv heads, which 2 divides."""
    q, k = _zeros(4, 6, 16, 16), _zeros(4, 3, 16, 16)
    err = _refused("RA404", lambda: _sharded_trace(q, k, (2, 2), layout="bhsd"))
    assert err.params == {"num_kv_heads": 3, "head_axis": "model", "head_axis_size": 2}
    _sharded_trace(q, k, (2, 2))  # "bshd": 16 heads
    _sharded_trace(_zeros(4, 8, 16, 16), _zeros(4, 4, 16, 16), (2, 2), layout="bhsd")
