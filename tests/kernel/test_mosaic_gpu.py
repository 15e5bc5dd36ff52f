"""The Mosaic GPU forward for Hopper (errkit_attention/mosaic_gpu.py): lowered for CUDA from this CPU host,
and run by Mosaic GPU's interpreter against the float64 reference.

Lowering (no GPU): ``jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`` runs Pallas'
Mosaic GPU lowering on the host (jax's Lane semantics: the register layouts of every value, the
wgmma operand checks, TMA descriptors' shapes). Each case asserts one Mosaic GPU custom call
(``mosaic_gpu_v2``) for the forward and no Triton forward, with ``jax.grad`` the Triton dQ and
dK/dV calls besides, no interpreter loop, and reads the launch back from the serialized kernel:
three warpgroups (384 threads), the grid (q tiles, heads, batch) and its dynamic shared memory,
within a Hopper CTA's 227 KiB. Nothing is compiled: the Mosaic GPU module's own passes to PTX
and ptxas run in jax's CUDA plugin when XLA compiles for a GPU, and neither is on this host,
so its registers and spills are not measured here (Triton's kernels: tests/kernel/test_compile.py).

Numerics: ``pallas_attention(..., interpret="mosaic_gpu")`` runs this very kernel (its three
warpgroups as threads, barriers, TMA copies, the pipeline and masks) in the interpreter, with the
four leaf operations the interpreter lacks swapped (errkit_attention/mosaic_gpu.py ``_Ops``: the wgmmas
become jnp dots of the same shared-memory tiles). Their GPU form is held structurally instead
(``test_the_matmuls_are_wgmmas``). The interpreter drops a TMA store that runs past the end of
an array (the GPU writes the rows inside it), so the query length is a whole number of CTA tiles
(128) there; key lengths need not be (reads past the end are zero-filled, as TMA does). Each
case runs in a subprocess with a timeout: a barrier protocol bug deadlocks the kernel (a phase
that never completes), which fails the case instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from support import ROOT, pairwise

from errkit_attention import BlockSizes, mosaic_gpu, ranker_attention, tuning
from errkit_attention import pallas_attention as pa
from errkit_attention.reference import attention_reference
from tests.kernel.test_lowering import CAPS, HEADS, INTERPRETER_LOOP, MASKS, TRITON_CALL
from tests.kernel.test_no_padding import SLICING

MOSAIC_CALL = "@" + mosaic_gpu.MOSAIC_GPU_CALL
B = 2

# dtype x head_dim x head layout x mask x cap x sequence (256: whole tiles; 1000 and 1064: partial
# last q and kv tiles), every pair of values in at least one case; forward and jax.grad lowered
# for each.
AXES = (("bfloat16", "float16"), tuple(mosaic_gpu.CONFIGS),
        tuple(sorted(HEADS)), tuple(sorted(MASKS)), ("nocap", "tanh", "soft_sign", "none"),
        (256, 1000, 1064))
GRID = pairwise(*AXES)
# and every head_dim x mask x cap, forward only (bfloat16, GQA, partial tiles)
FULL = list(itertools.product(tuple(mosaic_gpu.CONFIGS), tuple(sorted(MASKS)),
                              ("nocap", "tanh", "soft_sign")))


def _avals(dtype, head_dim, heads, seq):
    hq, hk = HEADS[heads]
    dt = jnp.dtype(dtype)
    return (jax.ShapeDtypeStruct((B, seq, hq, head_dim), dt),
            jax.ShapeDtypeStruct((B, seq, hk, head_dim), dt),
            jax.ShapeDtypeStruct((B, seq, hk, head_dim), dt),
            jax.ShapeDtypeStruct((B,), jnp.int32))


def _attention(mask, cap, config=None):
    options = dict(MASKS[mask])
    has_bound = options.pop("bound", False)
    options.update(CAPS[cap])

    def f(q, k, v, bound):
        return ranker_attention(q, k, v, bound=bound if has_bound else None, config=config,
                                implementation="pallas", **options)
    return f


def _grad(f):
    return jax.grad(lambda *a: f(*a).astype(jnp.float32).sum(), argnums=(0, 1, 2))


def _lower(f, avals, arch=tuning.DEFAULT_ARCH):
    with tuning.target(arch):  # the host's default, named: sm_90a
        return jax.jit(f).trace(*avals).lower(lowering_platforms=("cuda",))


def _check_lowered(lowered, avals, *, triton_calls):
    text = lowered.as_text()
    assert text.count(MOSAIC_CALL) == 1, text.count(MOSAIC_CALL)
    assert text.count(TRITON_CALL) == triton_calls, text.count(TRITON_CALL)
    assert INTERPRETER_LOOP not in text
    (launch,) = mosaic_gpu.launches(lowered)
    batch, seq, hq, head_dim = avals[0].shape
    tiles = -(-seq // (mosaic_gpu.COMPUTE_WGS * mosaic_gpu.CONFIGS[head_dim].block_q))
    assert launch.grid == (tiles, hq, batch), launch  # CUDA's x: the q tile, fastest
    assert launch.threads == 128 * (mosaic_gpu.COMPUTE_WGS + 1), launch
    assert launch.smem <= mosaic_gpu.SMEM_PER_CTA, launch
    return text


@pytest.mark.parametrize("dtype,head_dim,heads,mask,cap,seq", GRID,
                         ids=["-".join(map(str, case)) for case in GRID])
def test_forward_and_backward_lower_for_cuda(dtype, head_dim, heads, mask, cap, seq):
    avals = _avals(dtype, head_dim, heads, seq)
    f = _attention(mask, cap)
    _check_lowered(_lower(f, avals), avals, triton_calls=0)
    # forward with the lse (Mosaic GPU), then Triton's backward: fused, or dq and dk/dv
    text = _check_lowered(_lower(_grad(f), avals), avals,
                          triton_calls=len(tuning.passes("sm_90a", head_dim, dtype)) - 1)
    # nothing is padded or sliced in XLA (partial tiles are the TMA's)
    assert not [line for line in text.splitlines() if SLICING.search(line)]


@pytest.mark.parametrize("head_dim,mask,cap", FULL, ids=["-".join(map(str, c)) for c in FULL])
def test_every_head_dim_mask_and_cap_lowers(head_dim, mask, cap):
    avals = _avals("bfloat16", head_dim, "gqa", 1000)
    _check_lowered(_lower(_attention(mask, cap), avals), avals, triton_calls=0)


def test_the_grid_covers_every_pair_of_values():
    for (i, first), (j, second) in itertools.combinations(enumerate(AXES), 2):
        assert {(c[i], c[j]) for c in GRID} == set(itertools.product(first, second)), (i, j)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("head_dim", tuple(mosaic_gpu.CONFIGS))
def test_shared_memory_fits_a_hopper_cta(dtype, head_dim):
    """The heaviest variant (with the lse, bound + causal, tanh cap): the launch's shared memory,
    as lowered, is smem_bytes' count of the scratch plus Mosaic's own reserve (a few KiB), within
    SMEM_PER_CTA (planted: 3 stages at head_dim 128 -> 232,536 B, over)."""
    avals = _avals(dtype, head_dim, "gqa", 1000)
    (launch,) = mosaic_gpu.launches(_lower(_grad(_attention("bound_causal", "tanh")), avals))
    assert mosaic_gpu.smem_bytes(head_dim) <= launch.smem <= mosaic_gpu.smem_bytes(head_dim) + 4096
    assert launch.smem <= mosaic_gpu.SMEM_PER_CTA


def test_the_matmuls_are_wgmmas():
    """The GPU kernel's matmuls, which the interpreter replaces: per step S = Q K^T, a wgmma of
    two shared-memory operands, K transposed; O += P V, P from registers in the input dtype, V
    from shared memory as it is (planted: K^T without transpose_ref lowers at head_dim 64,
    square tiles hide it, this fails)."""
    for head_dim in mosaic_gpu.CONFIGS:
        cfg = mosaic_gpu.CONFIGS[head_dim]
        avals = _avals("bfloat16", head_dim, "gqa", 1000)
        with tuning.target(tuning.DEFAULT_ARCH):
            jaxpr = jax.make_jaxpr(_attention("causal", "tanh"))(*avals)
        wgmmas = [eqn for eqn in _equations(jaxpr.jaxpr) if eqn.primitive.name == "wgmma_ref"]
        assert wgmmas and len(wgmmas) % 2 == 0, len(wgmmas)
        for qk, pv in zip(wgmmas[::2], wgmmas[1::2]):
            assert qk.invars[0].aval.shape == (cfg.block_q, cfg.block_kv)
            assert "smem" in str(qk.invars[1].aval) and "smem" in str(qk.invars[2].aval)
            assert str(qk.params["b_transforms_tree"]).endswith("TransposeTransform[((1, 0),)], [])))")
            assert pv.invars[0].aval.shape == (cfg.block_q, head_dim)
            assert pv.invars[1].aval.shape == (cfg.block_q, cfg.block_kv)
            assert pv.invars[1].aval.dtype == jnp.bfloat16  # registers, not a ref
            assert "Transpose" not in str(pv.params["b_transforms_tree"])


def _equations(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for param in eqn.params.values():
            for sub in param if isinstance(param, (tuple, list)) else (param,):
                sub = getattr(sub, "jaxpr", sub)
                if hasattr(sub, "eqns"):
                    yield from _equations(sub)


# --------------------------------------------------------------------------
# Which forward a call takes.
# --------------------------------------------------------------------------


@pytest.mark.parametrize("what,arch,dtype,head_dim,seq,config,forced,want", [
    ("hopper 16-bit", "sm_90a", "bfloat16", 128, 256, None, None, "mosaic_gpu"),
    ("hopper float16 256", "sm_90a", "float16", 256, 1000, None, None, "mosaic_gpu"),
    ("float32", "sm_90a", "float32", 128, 256, None, None, "triton"),
    ("head_dim 80", "sm_90a", "bfloat16", 80, 256, None, None, "triton"),
    ("head_dim 32", "sm_90a", "bfloat16", 32, 256, None, None, "triton"),
    ("length 1001", "sm_90a", "bfloat16", 128, 1001, None, None, "triton"),
    ("ampere", "sm_80", "bfloat16", 128, 256, None, None, "triton"),
    ("explicit config", "sm_90a", "bfloat16", 128, 256, BlockSizes(64, 64), None, "triton"),
    ("forced triton", "sm_90a", "bfloat16", 128, 256, None, "triton", "triton"),
    ("forced mosaic_gpu", "sm_80", "bfloat16", 128, 256, BlockSizes(64, 64), "mosaic_gpu",
     "mosaic_gpu"),
    ("forced, float32", "sm_90a", "float32", 128, 256, None, "mosaic_gpu", "triton"),
    ("forced, length 1001", "sm_90a", "bfloat16", 128, 1001, None, "mosaic_gpu", "triton"),
])
def test_the_forward_is_chosen_by_architecture_dtype_head_dim_and_length(
        what, arch, dtype, head_dim, seq, config, forced, want):
    """errkit_attention/tuning.py's choice, and what the lowering then holds (planted: an explicit config
    taking Mosaic GPU fails here)."""
    assert tuning.gpu_forward(arch, head_dim, jnp.dtype(dtype), (seq, seq),
                              default_tiles=config is None, forced=forced) == want
    avals = _avals(dtype, head_dim, "gqa", seq)
    with tuning.forward_kernel(forced) if forced else contextlib.nullcontext():
        text = _lower(_attention("causal", "nocap", config), avals, arch).as_text()
    assert text.count(MOSAIC_CALL) == (want == "mosaic_gpu")
    assert text.count(TRITON_CALL) == (want == "triton")


def test_the_routing_names_the_kernels_head_dims():
    assert set(tuning.MOSAIC_GPU_HEAD_DIMS) == set(mosaic_gpu.CONFIGS)


def test_forward_kernel_is_read_outside_the_jit_cache():
    """forward_kernel() reaches ranker_attention's jitted dispatch through a static argument, as
    the target architecture does: the same call, with the same shapes and options, traced again
    inside and outside it, lowers both kernels. (Like tuning.target(), it is read when the
    caller's function is traced: a function the caller jitted and traced before keeps its trace.)"""
    avals = _avals("bfloat16", 64, "mha", 256)
    assert MOSAIC_CALL in _lower(_attention("none", "nocap"), avals).as_text()
    with tuning.forward_kernel("triton"):
        assert MOSAIC_CALL not in _lower(_attention("none", "nocap"), avals).as_text()
    assert MOSAIC_CALL in _lower(_attention("none", "nocap"), avals).as_text()


# --------------------------------------------------------------------------
# Numerics through Mosaic GPU's interpreter.
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    dtype: str
    head_dim: int
    q_len: int
    kv_len: int
    batch: int
    num_q_heads: int
    num_kv_heads: int
    causal: bool = False
    bound: tuple[int, ...] | None = None
    cap: float | None = None
    cap_method: str = "tanh"
    grad: bool = False


# Each crosses its head_dim's K/V ring more than once (blocks > num_stages), so buffers are
# refilled behind their "consumed" barriers.
NUMERICS = {
    # 4 CTAs visiting 1-4 key blocks (causal skipping; the heaviest first) through 3 stages; GQA
    "d64-gqa-causal-tanh": Case("bfloat16", 64, 512, 512, 1, 2, 1, causal=True, cap=5.0),
    # a bound per example, its diagonal blocks after the context, 3 blocks through 2 stages
    "d128-mha-bound-causal-soft_sign-f16": Case("float16", 128, 384, 384, 2, 1, 1, causal=True,
                                                bound=(100, 300), cap=5.0, cap_method="soft_sign"),
    # 4 blocks of 64 keys through 2 stages, MQA, the two consumers' diagonals in different blocks
    "d256-mqa-bound-tanh": Case("bfloat16", 256, 256, 256, 1, 2, 1, bound=(90,), cap=5.0),
    # keys past kv_len (200 = 128 + 72): TMA's zero fill, masked (no causal mask to hide them);
    # cross attention (q_len < kv_len)
    "d64-partial-kv-soft_sign-f16": Case("float16", 64, 128, 200, 1, 2, 2, cap=5.0,
                                         cap_method="soft_sign"),
    # the lse handed to the Triton backward (run in interpret mode): gradients against the reference
    "d64-grad-gqa-bound-causal-tanh": Case("bfloat16", 64, 256, 256, 1, 2, 1, causal=True,
                                           bound=(70,), cap=5.0, grad=True),
}
TOL = {"bfloat16": 1e-2, "float16": 2e-3}  # max |error| / max(1, max |reference|), vs float64
GRAD_TOL = 3e-2
TIMEOUT_S = 300  # a case takes 5-25 s alone, up to 3x that on a loaded host


def numerics(case: Case) -> dict:
    """Runs a case (in this process): {"ran": the Mosaic GPU kernel is the forward that ran,
    "errors": {output: max |error| / max(1, max |reference|)} against errkit_attention.reference in
    float64}."""
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    dt = jnp.dtype(case.dtype)
    q = jax.random.normal(keys[0], (case.batch, case.q_len, case.num_q_heads, case.head_dim), dt)
    k = jax.random.normal(keys[1], (case.batch, case.kv_len, case.num_kv_heads, case.head_dim), dt)
    v = jax.random.normal(keys[2], k.shape, dt)
    do = jax.random.normal(keys[3], q.shape, dt)
    options = dict(bound=None if case.bound is None else jnp.array(case.bound, jnp.int32),
                   causal=case.causal, sm_scale=case.head_dim ** -0.5, cap=case.cap,
                   cap_method=case.cap_method)

    def kernel(q, k, v):
        return pa.pallas_attention(q, k, v, interpret="mosaic_gpu", arch="sm_90a", **options)

    # the interpreted Mosaic GPU kernel: an mpmd_map (plgpu.kernel's) of TMA copies and barriers
    names = [eqn.primitive.name for eqn in _equations(jax.make_jaxpr(kernel)(q, k, v).jaxpr)]
    ran = names.count("mpmd_map") == 1 and {"copy_gmem_to_smem", "barrier_wait"} <= set(names)
    if case.grad:
        out, vjp = jax.vjp(kernel, q, k, v)
        got = (out, *vjp(do))
    else:
        got = (kernel(q, k, v),)
    with jax.enable_x64(True):
        wide = [x.astype(jnp.float64) for x in (q, k, v)]

        def reference(q, k, v):
            return attention_reference(q, k, v, **options)

        if case.grad:
            out, vjp = jax.vjp(reference, *wide)
            want = (out, *vjp(do.astype(jnp.float64)))
        else:
            want = (reference(*wide),)
        errors = {}
        for name, g, w in zip(("o", "dq", "dk", "dv"), got, want):
            g, w = np.asarray(g, np.float64), np.asarray(w)
            errors[name] = float(np.max(np.abs(g - w))) / max(1.0, float(np.max(np.abs(w))))
    return {"ran": ran, "errors": errors}


def _in_subprocess(name: str) -> dict:
    code = ("import json, sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']; "
            "from tests.kernel import test_mosaic_gpu as t; "
            "print(json.dumps(t.numerics(t.NUMERICS[sys.argv[2]])))")
    try:
        done = subprocess.run([sys.executable, "-c", code, str(ROOT), name], cwd=ROOT,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: no result in {TIMEOUT_S} s: the kernel deadlocked (a barrier "
                    "phase that never completes)")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(NUMERICS))
def test_the_interpreted_kernel_matches_the_float64_reference(name):
    case = NUMERICS[name]
    result = _in_subprocess(name)
    assert result["ran"], "the forward was not the Mosaic GPU kernel"
    errors = result["errors"]
    assert set(errors) == ({"o", "dq", "dk", "dv"} if case.grad else {"o"})
    assert errors["o"] < TOL[case.dtype], errors
    for grad in ("dq", "dk", "dv")[:3 if case.grad else 0]:
        assert errors[grad] < GRAD_TOL, errors
