"""The Triton-layout kernels (blocked BlockSpecs, masked loads and stores), run by Pallas'
interpreter on the CPU, against errkit_attention.reference.

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

from errkit_attention import BlockSizes, pallas_attention as pa
from errkit_attention.reference import attention_reference

S, D = 200, 80  # 200 = 3 * 64 + 8: a partial last block; 80 -> tiles of 128 columns
B64 = BlockSizes(block_q=64, block_kv=64)
MIXED = BlockSizes(block_q=64, block_kv=32, block_q_dkv=32, block_kv_dkv=64,
                   block_q_dq=32, block_kv_dq=64)
GQA = (4, 2)  # query heads, kv heads

# (dtype, causal, bound, cap, blocks, q_len, kv_len, heads): every case runs with the backward
# split (dQ kernel + dK/dV kernel) and fused (dQ added atomically by the dK/dV kernel), whichever
# errkit_attention/tuning.py's table picks on a GPU.
CASES = [
    ("float32", True, False, None, B64, S, S, GQA),
    ("float32", False, True, None, B64, S, S, GQA),
    ("float32", True, True, 5.0, MIXED, S, S, GQA),
    ("float32", False, False, None, MIXED, 72, S, GQA),  # q_len != kv_len: cross attention
    ("bfloat16", True, False, None, B64, S, S, GQA),
    ("bfloat16", True, True, 5.0, B64, S, S, GQA),
]
# Query heads stacked in the forward / dQ tiles (_pack): 4 heads of 16 rows in a 64-row tile
# (8 over 2 kv heads, and MQA), 2 of 16 in the 32-row dQ tiles of MIXED; a group of 3 stacks none.
GROUPED = [
    ("float32", True, True, 5.0, B64, S, S, (8, 2)),
    ("float32", True, False, None, B64, S, S, (4, 1)),
    ("bfloat16", True, True, 5.0, MIXED, S, S, (8, 2)),
    ("float32", False, True, None, MIXED, 72, S, (6, 2)),
]
BACKWARDS = ("split", "fused")
ALL = [(*case, backward) for case in CASES + GROUPED for backward in BACKWARDS]
IDS = [f"{d}-{'causal' if c else 'full'}{'-bound' if b else ''}{'-cap' if cap else ''}-"
       f"{'b64' if blocks is B64 else 'mixed'}-{ql}x{kl}-{hq}q{hk}kv-{backward}"
       for d, c, b, cap, blocks, ql, kl, (hq, hk), backward in ALL]
TOL = {"float32": 1e-5, "bfloat16": 6e-2}


def _inputs(dtype, q_len, kv_len, heads=GQA):
    hq, hkv = heads
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    dt = jnp.dtype(dtype)
    q = jax.random.normal(keys[0], (1, q_len, hq, D), dt)
    k = jax.random.normal(keys[1], (1, kv_len, hkv, D), dt)
    v = jax.random.normal(keys[2], (1, kv_len, hkv, D), dt)
    do = jax.random.normal(keys[3], q.shape, dt)
    return q, k, v, do


def _kernel(blocks, backward, options, interpret="blocked"):
    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, config=blocks, interpret=interpret,
                                   backward=backward, **options)
    return kernel


@pytest.mark.parametrize("dtype,causal,bound,cap,blocks,q_len,kv_len,heads,backward", ALL,
                         ids=IDS)
def test_blocked_kernels_match_the_reference(dtype, causal, bound, cap, blocks, q_len,
                                             kv_len, heads, backward):
    q, k, v, do = _inputs(dtype, q_len, kv_len, heads)
    options = dict(bound=jnp.array([70], jnp.int32) if bound else None, causal=causal,
                   sm_scale=D ** -0.5, cap=cap, cap_method="tanh")
    kernel = _kernel(blocks, backward, options)

    def reference(q, k, v):
        return attention_reference(q, k, v, **options)

    # the Triton kernels' pallas_calls (not the interpret-mode ones, nor the Mosaic ones)
    jaxpr = jax.make_jaxpr(lambda *a: jax.vjp(kernel, *a[:3])[1](a[3]))(q, k, v, do)
    names = (["ranker_attention_fwd", "ranker_attention_bwd"] if backward == "fused" else
             ["ranker_attention_fwd", "ranker_attention_dq", "ranker_attention_dkdv"])
    assert _pallas_calls(jaxpr) == [(name, True) for name in names]

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


@pytest.mark.parametrize("heads,blocks,pack,grid", [
    ((8, 2), B64, 4, (13, 2)),  # 4 heads x 16 rows a tile: cdiv(200, 16) tiles, 8 / 4 packs
    ((4, 1), B64, 4, (13, 1)),
    ((8, 2), MIXED, 2, (7, 4)),  # the dQ tiles have 32 rows: 2 heads x 16 (forward: 2 x 32)
    ((6, 2), B64, 1, (4, 6)),  # a group of 3: one head a tile
    ((4, 4), B64, 1, (4, 4)),
])
def test_a_group_of_query_heads_shares_each_program(heads, blocks, pack, grid):
    """One forward (and dQ) program serves `pack` query heads of one kv head: its grid is
    (query tiles, batch x packs), the tile axis first (CUDA's fastest), and its q block holds
    the pack's heads."""
    q, k, v, do = _inputs("float32", S, S, heads)
    kernel = _kernel(blocks, "split", dict(bound=None, causal=True, sm_scale=D ** -0.5, cap=None,
                                           cap_method="tanh"), interpret=False)
    jaxpr = jax.make_jaxpr(lambda *a: jax.vjp(kernel, *a[:3])[1](a[3]))(q, k, v, do)
    calls = {eqn.params["name"]: eqn.params["grid_mapping"] for eqn in _pallas_eqns(jaxpr)}
    fwd, dq = calls["ranker_attention_fwd"], calls["ranker_attention_dq"]
    assert fwd.grid == grid
    for call, rows in ((fwd, blocks.block_q), (dq, blocks.block_q_dq or blocks.block_q)):
        # q's block: [rows of each head, the pack's heads (squeezed: one), head_dim]
        _, q_rows, q_heads, _ = call.block_mappings[0].block_shape
        assert q_rows.block_size == rows // pack and call.grid[1:] == grid[1:]
        assert getattr(q_heads, "block_size", 1) == pack


def _pallas_eqns(jaxpr):
    """Every pallas_call equation of a closed jaxpr, in order."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "pallas_call":
                found.append(eqn)
                continue
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    sub = getattr(sub, "jaxpr", sub)
                    if hasattr(sub, "eqns"):
                        walk(sub)
    walk(jaxpr.jaxpr)
    return found


def _pallas_calls(jaxpr):
    """(name, is a Triton call: Triton compiler parameters) of every pallas_call of a closed
    jaxpr, in order."""
    return [(eqn.params["name"], isinstance(eqn.params["compiler_params"], plgpu.CompilerParams))
            for eqn in _pallas_eqns(jaxpr)]


def _kernel_accesses(jaxpr):
    """(primitive name, has a mask, shape) of every ref read and write in the pallas_call
    kernels of a closed jaxpr."""
    found = []
    for eqn in kernel_equations(jaxpr):
        name = eqn.primitive.name
        if name not in ("get", "swap", "masked_load", "masked_swap", "atomic_rmw"):
            continue
        mask = None
        if name.startswith("masked") or name == "atomic_rmw":
            mask = eqn.params["args_tree"].unflatten(eqn.invars)[2 if name == "masked_load" else 3]
        shape = eqn.outvars[0].aval.shape if eqn.outvars else ()
        found.append((name, mask is not None, shape))
    return found


@pytest.mark.parametrize("backward", BACKWARDS)
@pytest.mark.parametrize("bound", [False, True])
def test_every_tile_access_is_masked(bound, backward):
    """At head_dim 80 (tiles of 128 columns) and S=200 (a partial last block), every write and
    every read of a [rows, 128] tile (or [rows, heads, 128]: query heads stacked, GQA) in the
    Triton kernels is masked, and so is every atomic add of the fused backward's dQ. Plain
    reads: the bound's scalar, and row vectors (lse, delta) of blocks wholly inside the
    sequence (dK/dV's loop over full query blocks), whose masked counterparts the numerics test
    above checks."""
    q, k, v, do = _inputs("bfloat16", S, S)

    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, bound=jnp.array([70], jnp.int32) if bound else None,
                                   causal=True, sm_scale=D ** -0.5, cap=None,
                                   cap_method="tanh", config=MIXED, interpret=False,
                                   backward=backward)

    jaxpr = jax.make_jaxpr(lambda *a: jax.vjp(kernel, *a[:3])[1](a[3]))(q, k, v, do)
    accesses = _kernel_accesses(jaxpr)
    assert any(name == "masked_swap" for name, _, _ in accesses)  # the stores were seen
    writes = [a for a in accesses if "swap" in a[0] or a[0] == "atomic_rmw"]
    assert all(masked for _, masked, _ in writes), writes
    atomics = [a for a in writes if a[0] == "atomic_rmw"]
    assert bool(atomics) == (backward == "fused"), atomics
    plain = [a for a in accesses if not a[1]]
    assert all(name == "get" and len(shape) <= 1 for name, _, shape in plain), plain
    kernels = 2 if backward == "fused" else 3
    assert sum(shape == () for _, _, shape in plain) == (kernels if bound else 0)  # bound[b]
    tiles = [a for a in accesses if len(a[2]) >= 2 and a[2][-1] == 128]
    assert any(len(shape) == 3 for _, _, shape in tiles)  # GQA: 2 heads a forward tile
    assert tiles and all(masked for _, masked, _ in tiles), tiles
    # the rest of rank 2: lse / delta rows of the 2 stacked heads, [2, rows]
    rows = [a for a in accesses if len(a[2]) >= 2 and a not in tiles]
    assert rows and all(masked and shape[0] == 2 for _, masked, shape in rows), rows
