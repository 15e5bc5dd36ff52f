"""The TPU kernels (errkit_attention/pallas_tpu.py) lower for TPU (Mosaic), forward and backward, from
this CPU machine, and compute the reference in interpret mode.

The kernels are reached through errkit_attention.pallas_attention.pallas_attention (its block clamping;
nothing is padded) with its ``_flash_attention`` replaced by ``pallas_tpu.flash_attention``; where
``_call`` has the "tpu" branch of the platform choice, the unpatched function is checked too.

No TPU is needed: ``jax.jit(f).trace(...).lower(lowering_platforms=("tpu",))`` runs JAX's
Pallas -> Mosaic lowering on the host (the Mosaic compiler passes themselves run on a TPU host,
at compile time). Each case asserts that the lowered module calls the Mosaic kernels
(``tpu_custom_call``, one per pallas_call) and holds no ``stablehlo.while`` (the loop interpret
mode runs the grid with). JAX's own ``ops.tpu.flash_attention`` is lowered the same way as a
control. The numerics of the TPU kernels (errkit_attention/pallas_tpu.py) are checked by running the same
pallas_calls with ``interpret=True`` on the CPU against errkit_attention.reference.
"""

from __future__ import annotations

import inspect
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from errkit_attention import BlockSizes, pallas_attention as pa, pallas_tpu
from errkit_attention.reference import attention_reference
from tests.kernel.test_lowering import (BLOCKS, CAPS, HEADS, INTERPRETER_LOOP, MASKS,
                                        TRITON_CALL, _args, _loss, grad_calls)

MOSAIC_CALL = "tpu_custom_call"
HAS_TPU_BRANCH = "tpu" in inspect.signature(pa._call).parameters


def _route(monkeypatch, interpret=False):
    """pallas_attention runs the TPU kernels (with interpret=True: in interpret mode)."""
    def flash(q, k, v, bound, st):
        return pallas_tpu.flash_attention(q, k, v, bound, st, interpret)
    monkeypatch.setattr(pa, "_flash_attention", flash)


def _attention(mask, cap, block):
    """pallas_attention with the options of a case (sm_scale 1/sqrt(head_dim))."""
    options = dict(MASKS[mask])
    has_bound = options.pop("bound", False)
    options = dict(causal=False, cap=None, cap_method="tanh") | options | CAPS[cap]

    def f(q, k, v, bound):
        return pa.pallas_attention(q, k, v, bound=bound if has_bound else None,
                                   sm_scale=q.shape[-1] ** -0.5,
                                   config=BLOCKS[block] or BlockSizes(), **options)
    return f


def _grid():
    """dtype x head_dim x head layout in full; the mask, the cap method and the block
    configuration rotate with them, so that each meets every dtype, head_dim and head layout
    (the full product, 768 cases, lowers as well but takes minutes)."""
    masks, caps, blocks = sorted(MASKS), sorted(CAPS), sorted(BLOCKS)
    for (i, dtype), (j, head_dim), (k, heads) in itertools.product(
            enumerate(("float32", "bfloat16")), enumerate((64, 128, 256, 48)),
            enumerate(sorted(HEADS))):
        yield (dtype, head_dim, heads, masks[(i + j + k) % len(masks)],
               caps[(2 * i + j + k // 2) % len(caps)], blocks[(i + j + k) // 2 % len(blocks)])


GRID = list(_grid())


def _lower_tpu(f, args):
    return jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",)).as_text()


def _assert_mosaic(text, calls):
    assert text.count(MOSAIC_CALL) == calls, text.count(MOSAIC_CALL)
    assert INTERPRETER_LOOP not in text
    assert TRITON_CALL not in text


@pytest.mark.parametrize("dtype,head_dim,heads,mask,cap,block", GRID,
                         ids=["-".join(map(str, case)) for case in GRID])
def test_forward_and_backward_lower_for_tpu(monkeypatch, dtype, head_dim, heads, mask, cap,
                                            block):
    _route(monkeypatch)
    args = _args(dtype, head_dim, heads)
    f = _attention(mask, cap, block)
    _assert_mosaic(_lower_tpu(f, args), calls=1)
    # forward with residuals, dq, dk/dv
    _assert_mosaic(_lower_tpu(jax.grad(_loss(f), argnums=(0, 1, 2)), args), calls=3)


def test_the_grid_covers_every_value():
    for axis, values in enumerate((("float32", "bfloat16"), (64, 128, 256, 48), HEADS,
                                   MASKS, CAPS, BLOCKS)):
        assert {case[axis] for case in GRID} == set(values)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_control_jax_flash_attention_lowers_for_tpu(dtype):
    from jax.experimental.pallas.ops.tpu import flash_attention

    q = jax.ShapeDtypeStruct((1, 4, 256, 128), jnp.dtype(dtype))  # [b, h, s, d]

    def f(q, k, v):
        return flash_attention.flash_attention(q, k, v, causal=True)

    _assert_mosaic(_lower_tpu(f, (q, q, q)), calls=1)
    # forward with residuals, dk/dv, dq
    _assert_mosaic(_lower_tpu(jax.grad(_loss(f), argnums=(0, 1, 2)), (q, q, q)), calls=3)


@pytest.mark.skipif(not HAS_TPU_BRANCH, reason="_call has no tpu branch (see the module doc)")
def test_one_trace_lowers_per_platform():
    """The same traced function: interpret mode for CPU, Triton for CUDA, Mosaic for TPU
    (chosen at lowering, not at tracing)."""
    args = _args("bfloat16", 64, "gqa")
    traced = jax.jit(jax.grad(_loss(_attention("bound_causal", "tanh", "small")),
                              argnums=(0, 1, 2))).trace(*args)
    cpu = traced.lower(lowering_platforms=("cpu",)).as_text()
    assert MOSAIC_CALL not in cpu and TRITON_CALL not in cpu and INTERPRETER_LOOP in cpu
    cuda = traced.lower(lowering_platforms=("cuda",)).as_text()
    assert cuda.count(TRITON_CALL) == grad_calls(64, "bfloat16") and MOSAIC_CALL not in cuda
    assert INTERPRETER_LOOP not in cuda
    _assert_mosaic(traced.lower(lowering_platforms=("tpu",)).as_text(), calls=3)


# --------------------------------------------------------------------------
# Numerics of the TPU kernels, run in interpret mode on the CPU.
# --------------------------------------------------------------------------


SMALL = BlockSizes(block_q=16, block_kv=32, block_q_dkv=32, block_kv_dkv=16,
                   block_q_dq=16, block_kv_dq=16)
# (dtype, head_dim, (hq, hkv), causal, bound, cap, cap_method, blocks); S = 72: partial last blocks
NUMERICS = [
    ("float32", 64, (4, 2), True, True, 5.0, "tanh", SMALL),
    ("float32", 48, (4, 1), False, True, 5.0, "soft_sign", BlockSizes()),
    ("float32", 32, (2, 2), True, False, None, "tanh", SMALL),
    ("float32", 32, (2, 1), False, False, 5.0, "none", SMALL),
    ("bfloat16", 64, (4, 2), True, True, 5.0, "tanh", SMALL),
]


@pytest.mark.parametrize("dtype,head_dim,heads,causal,bound,cap,cap_method,blocks", NUMERICS)
def test_tpu_kernels_match_the_reference_in_interpret_mode(
        monkeypatch, dtype, head_dim, heads, causal, bound, cap, cap_method, blocks):
    _route(monkeypatch, interpret=True)
    seq, (hq, hkv) = 72, heads
    dt = jnp.dtype(dtype)
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    q = jax.random.normal(keys[0], (2, seq, hq, head_dim), dt)
    k = jax.random.normal(keys[1], (2, seq, hkv, head_dim), dt)
    v = jax.random.normal(keys[2], (2, seq, hkv, head_dim), dt)
    do = jax.random.normal(keys[3], q.shape, dt)
    options = dict(bound=jnp.array([30, 5], jnp.int32) if bound else None, causal=causal,
                   sm_scale=head_dim ** -0.5, cap=cap, cap_method=cap_method)

    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, config=blocks, **options)

    def reference(q, k, v):
        return attention_reference(q, k, v, **options)

    names = str(jax.make_jaxpr(jax.vjp(kernel, q, k, v)[1])(do))
    assert "ranker_attention_dq_tpu" in names and "ranker_attention_dkdv_tpu" in names
    out, vjp = jax.vjp(kernel, q, k, v)
    grads = vjp(do)
    want, ref_vjp = jax.vjp(reference, q, k, v)
    want_grads = ref_vjp(do)
    tol = 1e-5 if dtype == "float32" else 6e-2
    for name, got, ref in zip(("o", "dq", "dk", "dv"), (out, *grads), (want, *want_grads)):
        got, ref = np.asarray(got, np.float32), np.asarray(ref, np.float32)
        scale = max(1.0, float(np.max(np.abs(ref))))
        err = float(np.max(np.abs(got - ref))) / scale
        assert err < tol, (name, err)
