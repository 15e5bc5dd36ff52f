"""The Triton-layout kernels (blocked BlockSpecs, masked loads and stores), run by Pallas'
interpreter on the CPU, against kernel.reference.

Every other numerics test runs the whole-operand interpret kernels (``blocked=False``), whose
operands interpret mode pads; the kernels a GPU runs take q, k, v unpadded (cdiv grids, a
partial last block, [rows, dp] tiles read and written with masks past head_dim and past the
end of the sequence). ``pallas_attention(..., interpret="blocked")`` runs those very kernels
with ``interpret=True``: the interpreter pads every block that runs past its array with NaN
(and reads past the array through a masked load with NaN too), so a read past the end that
is not masked, or whose probabilities are not, poisons the result.

The interpreter drops writes past the end of an array (it slices its padding off), so it
cannot see a store that misses its mask; on a GPU such a store overwrites the next row
(columns >= head_dim) or the next head. ``test_every_tile_access_is_masked`` checks those
structurally: at head_dim 80 every tile load and store of the Triton kernels is a masked one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.pallas import triton as plgpu
from support import kernel_equations

from kernel import BlockSizes, pallas_attention as pa
from kernel.reference import attention_reference

S, D = 200, 80  # 200 = 3 * 64 + 8: a partial last block; 80 -> tiles of 128 columns
B64 = BlockSizes(block_q=64, block_kv=64)
MIXED = BlockSizes(block_q=64, block_kv=32, block_q_dkv=32, block_kv_dkv=64,
                   block_q_dq=32, block_kv_dq=64)

# (dtype, causal, bound, cap, blocks, q_len, kv_len)
CASES = [
    ("float32", True, False, None, B64, S, S),
    ("float32", False, True, None, B64, S, S),
    ("float32", True, True, 5.0, MIXED, S, S),
    ("float32", False, False, None, MIXED, 72, S),  # q_len != kv_len: cross attention
    ("bfloat16", True, False, None, B64, S, S),
    ("bfloat16", True, True, 5.0, B64, S, S),
]
IDS = [f"{d}-{'causal' if c else 'full'}{'-bound' if b else ''}{'-cap' if cap else ''}-"
       f"{'b64' if blocks is B64 else 'mixed'}-{ql}x{kl}"
       for d, c, b, cap, blocks, ql, kl in CASES]
TOL = {"float32": 1e-5, "bfloat16": 6e-2}


def _inputs(dtype, q_len, kv_len, hq=4, hkv=2):
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    dt = jnp.dtype(dtype)
    q = jax.random.normal(keys[0], (1, q_len, hq, D), dt)
    k = jax.random.normal(keys[1], (1, kv_len, hkv, D), dt)
    v = jax.random.normal(keys[2], (1, kv_len, hkv, D), dt)
    do = jax.random.normal(keys[3], q.shape, dt)
    return q, k, v, do


@pytest.mark.parametrize("dtype,causal,bound,cap,blocks,q_len,kv_len", CASES, ids=IDS)
def test_blocked_kernels_match_the_reference(dtype, causal, bound, cap, blocks, q_len,
                                             kv_len):
    q, k, v, do = _inputs(dtype, q_len, kv_len)
    options = dict(bound=jnp.array([70], jnp.int32) if bound else None, causal=causal,
                   sm_scale=D ** -0.5, cap=cap, cap_method="tanh")

    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, config=blocks, interpret="blocked", **options)

    def reference(q, k, v):
        return attention_reference(q, k, v, **options)

    # the Triton kernels' pallas_calls (not the interpret-mode ones, nor the Mosaic ones)
    jaxpr = jax.make_jaxpr(lambda *a: jax.vjp(kernel, *a[:3])[1](a[3]))(q, k, v, do)
    assert _pallas_calls(jaxpr) == [("ranker_attention_fwd", True), ("ranker_attention_dq", True),
                                    ("ranker_attention_dkdv", True)]

    out, vjp = jax.jit(lambda q, k, v: jax.vjp(kernel, q, k, v))(q, k, v)
    grads = jax.jit(vjp)(do)
    want, ref_vjp = jax.vjp(reference, q, k, v)
    want_grads = ref_vjp(do)
    for name, got, ref in zip(("o", "dq", "dk", "dv"), (out, *grads), (want, *want_grads)):
        assert got.shape == ref.shape and got.dtype == ref.dtype, name
        got, ref = np.asarray(got, np.float32), np.asarray(ref, np.float32)
        assert np.isfinite(got).all(), name
        scale = max(1.0, float(np.max(np.abs(ref))))
        err = float(np.max(np.abs(got - ref))) / scale
        assert err < TOL[dtype], (name, err)


def _pallas_calls(jaxpr):
    """(name, is a Triton call: Triton compiler parameters) of every pallas_call of a closed
    jaxpr, in order."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "pallas_call":
                found.append((eqn.params["name"],
                              isinstance(eqn.params["compiler_params"], plgpu.CompilerParams)))
                continue
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    sub = getattr(sub, "jaxpr", sub)
                    if hasattr(sub, "eqns"):
                        walk(sub)
    walk(jaxpr.jaxpr)
    return found


def _kernel_accesses(jaxpr):
    """(primitive name, has a mask, shape) of every ref read and write in the pallas_call
    kernels of a closed jaxpr."""
    found = []
    for eqn in kernel_equations(jaxpr):
        name = eqn.primitive.name
        if name not in ("get", "swap", "masked_load", "masked_swap"):
            continue
        mask = None
        if name.startswith("masked"):
            mask = eqn.params["args_tree"].unflatten(eqn.invars)[2 if name == "masked_load" else 3]
        shape = eqn.outvars[0].aval.shape if eqn.outvars else ()
        found.append((name, mask is not None, shape))
    return found


@pytest.mark.parametrize("bound", [False, True])
def test_every_tile_access_is_masked(bound):
    """At head_dim 80 (tiles of 128 columns) and S=200 (a partial last block), every write and
    every read of a [rows, 128] tile in the Triton kernels is masked. Plain reads: the bound's
    scalar, and row vectors (lse, delta) of blocks wholly inside the sequence (dK/dV's loop
    over full query blocks), whose masked counterparts the numerics test above checks."""
    q, k, v, do = _inputs("bfloat16", S, S)

    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, bound=jnp.array([70], jnp.int32) if bound else None,
                                   causal=True, sm_scale=D ** -0.5, cap=None,
                                   cap_method="tanh", config=MIXED, interpret=False)

    jaxpr = jax.make_jaxpr(lambda *a: jax.vjp(kernel, *a[:3])[1](a[3]))(q, k, v, do)
    accesses = _kernel_accesses(jaxpr)
    assert any(name == "masked_swap" for name, _, _ in accesses)  # the stores were seen
    assert all(masked for name, masked, _ in accesses if "swap" in name), accesses
    plain = [a for a in accesses if not a[1]]
    assert all(name == "get" and len(shape) <= 1 for name, _, shape in plain), plain
    assert sum(shape == () for _, _, shape in plain) == (3 if bound else 0)  # bound[b]
    tiles = [a for a in accesses if len(a[2]) == 2]
    assert tiles and all(masked and shape[1] == 128 for _, masked, shape in tiles), tiles
