"""The Pallas kernel lowers for CUDA (Triton), forward and backward, from this CPU machine.

No GPU is needed: ``jax.jit(f).trace(...).lower(lowering_platforms=("cuda",))`` runs the
Triton lowering on the host. Each case asserts that the lowered module calls the Triton
kernels (``@__gpu$xla.gpu.triton`` custom calls, one per pallas_call) and holds no
``stablehlo.while`` (the loop interpret mode runs the grid with). JAX's own
``ops.gpu.attention.mha`` is lowered the same way as a control, so a change in how JAX
lowers Pallas for GPU shows up there first. Lowering only: nothing is executed.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import pytest
from support import kernel_equations, pairwise

from errkit_attention import BlockSizes, ranker_attention, tuning

TRITON_CALL = "@__gpu$xla.gpu.triton"
INTERPRETER_LOOP = "stablehlo.while"

B, S = 1, 200  # a sequence that is not a multiple of any block: partial last blocks
HEADS = {"mha": (4, 4), "gqa": (4, 2), "mqa": (4, 1)}
MASKS = {"none": dict(), "causal": dict(causal=True), "bound": dict(bound=True),
         "bound_causal": dict(causal=True, bound=True)}
CAPS = {"nocap": dict(), "tanh": dict(cap=5.0, cap_method="tanh"),
        "soft_sign": dict(cap=5.0, cap_method="soft_sign"),
        "none": dict(cap=5.0, cap_method="none")}
BLOCKS = {"default": None,
          "small": BlockSizes(block_q=32, block_kv=64, block_q_dkv=64, block_kv_dkv=32,
                              block_q_dq=32, block_kv_dq=32)}


AXES = (("float32", "bfloat16"), (64, 128, 256, 48), tuple(sorted(HEADS)), tuple(sorted(MASKS)),
        tuple(sorted(CAPS)), tuple(sorted(BLOCKS)))
# dtype x head_dim x head layout x mask x cap method x blocks, every pair of values in at least
# one case: 19 cases (the full product, 768, lowers as well but takes ten minutes; test_compile.py
# lowers and compiles the heaviest variant of every tuning cell besides).
GRID = pairwise(*AXES)


@pytest.fixture(autouse=True)
def _triton_forward():
    """Every test here is about the Triton kernels: on sm_90a, this CPU host's default target, a
    forward of 16-bit inputs at head_dim 64 / 128 / 256 with the default tiles would be Mosaic
    GPU's (errkit_attention/tuning.py gpu_forward; tests/kernel/test_mosaic_gpu.py)."""
    with tuning.forward_kernel("triton"):
        yield


def _args(dtype, head_dim, heads):
    hq, hk = HEADS[heads]
    dt = jnp.dtype(dtype)
    return (jax.ShapeDtypeStruct((B, S, hq, head_dim), dt),
            jax.ShapeDtypeStruct((B, S, hk, head_dim), dt),
            jax.ShapeDtypeStruct((B, S, hk, head_dim), dt),
            jax.ShapeDtypeStruct((B,), jnp.int32))


def _attention(mask, cap, block, implementation="pallas"):
    options = dict(MASKS[mask])
    has_bound = options.pop("bound", False)
    options.update(CAPS[cap])

    def f(q, k, v, bound):
        return ranker_attention(q, k, v, bound=bound if has_bound else None,
                                config=BLOCKS[block], implementation=implementation,
                                **options)
    return f


def _loss(f):
    return lambda *args: f(*args).astype(jnp.float32).sum()


def _lower(f, args, platform="cuda"):
    return jax.jit(f).trace(*args).lower(lowering_platforms=(platform,)).as_text()


def grad_calls(head_dim, dtype, arch=tuning.DEFAULT_ARCH):
    """Triton calls of a forward + backward lowering: the forward with residuals, then the fused
    backward or dQ and dK/dV, as errkit_attention/tuning.py's table picks for the cell."""
    return len(tuning.passes(arch, head_dim, dtype))


def _assert_triton(text, calls):
    assert text.count(TRITON_CALL) == calls, text.count(TRITON_CALL)
    assert INTERPRETER_LOOP not in text


@pytest.mark.parametrize("dtype,head_dim,heads,mask,cap,block", GRID,
                         ids=["-".join(map(str, case)) for case in GRID])
def test_forward_and_backward_lower_for_cuda(dtype, head_dim, heads, mask, cap, block):
    args = _args(dtype, head_dim, heads)
    f = _attention(mask, cap, block)
    _assert_triton(_lower(f, args), calls=1)
    # forward with residuals, then the fused backward or dq and dk/dv
    _assert_triton(_lower(jax.grad(_loss(f), argnums=(0, 1, 2)), args),
                   calls=grad_calls(head_dim, dtype))


def test_the_grid_covers_every_pair_of_values():
    for (i, first), (j, second) in itertools.combinations(enumerate(AXES), 2):
        met = {(case[i], case[j]) for case in GRID}
        assert met == set(itertools.product(first, second)), (i, j)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_control_jax_mha_lowers_for_cuda(dtype):
    from jax.experimental.pallas.ops.gpu import attention

    q = jax.ShapeDtypeStruct((B, 256, 4, 64), jnp.dtype(dtype))  # mha needs whole blocks
    k = v = q

    def f(q, k, v):
        return attention.mha(q, k, v, segment_ids=None, causal=True)

    _assert_triton(_lower(f, (q, k, v)), calls=1)
    # forward with residuals, backward preprocessing (delta), one fused backward kernel
    _assert_triton(_lower(jax.grad(_loss(f), argnums=(0, 1, 2)), (q, k, v)), calls=3)


def test_cpu_lowering_is_interpret_mode():
    """The same traced function, lowered for the CPU, runs the interpreter (chosen at
    lowering, not at tracing)."""
    args = _args("float32", 64, "gqa")
    traced = jax.jit(jax.grad(_loss(_attention("bound_causal", "tanh", "small")),
                              argnums=(0, 1, 2))).trace(*args)
    cpu = traced.lower(lowering_platforms=("cpu",)).as_text()
    assert TRITON_CALL not in cpu and INTERPRETER_LOOP in cpu
    _assert_triton(traced.lower(lowering_platforms=("cuda",)).as_text(),
                   calls=grad_calls(64, "float32"))


def test_default_implementation_on_a_gpu_lowers(monkeypatch):
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    args = _args("bfloat16", 128, "gqa")
    _assert_triton(_lower(_attention("causal", "nocap", "default", implementation=None),
                          args), calls=1)


def _not_tpu(name):
    return name.endswith("_tpu")


def _dots(jaxpr):
    """Operand dtypes of every dot_general inside the interpret and Triton pallas_call kernels of a
    jaxpr (the Mosaic TPU path's kernels compute float16 in float32: no float16 MXU on v5e)."""
    return [tuple(str(x.aval.dtype) for x in eqn.invars) for eqn in kernel_equations(jaxpr, _not_tpu)
            if eqn.primitive.name == "dot_general"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dots_take_the_input_dtype(dtype):
    """Tensor-core dots: every dot of the forward and backward kernels (Triton path) takes
    16-bit operands (accumulating in float32), none is float32 x float32."""
    args = _args(dtype, 64, "gqa")
    f = _attention("bound_causal", "tanh", "small")
    dots = _dots(jax.make_jaxpr(jax.grad(_loss(f), argnums=(0, 1, 2)))(*args))
    assert len(dots) >= 2 * (2 + 5)  # fwd 2, fused bwd 5 (or dq 3 + dk/dv 4) per path (interpret, Triton)
    assert set(dots) == {(dtype, dtype)}, set(dots)


def _matmuls_per_loop_body(jaxpr):
    """{pallas_call name: the set of dot_general counts of its loop bodies} of a closed jaxpr:
    what each kernel computes per tile it streams (every loop of a kernel: masked, unmasked,
    partial tiles)."""
    found = {}

    def dots(jaxpr):
        count = 0
        for eqn in jaxpr.eqns:
            count += eqn.primitive.name == "dot_general"
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    sub = getattr(sub, "jaxpr", sub)
                    if hasattr(sub, "eqns"):
                        count += dots(sub)
        return count

    def loops(jaxpr, name):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name in ("while", "scan"):
                body = eqn.params["body_jaxpr" if eqn.primitive.name == "while" else "jaxpr"]
                found.setdefault(name, set()).add(dots(body.jaxpr))
            inner = eqn.params["name"] if eqn.primitive.name == "pallas_call" else name
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    sub = getattr(sub, "jaxpr", sub)
                    if hasattr(sub, "eqns"):
                        loops(sub, inner)
    loops(jaxpr.jaxpr, None)
    found.pop(None, None)
    return found


@pytest.mark.parametrize("backward,matmuls", [
    ("split", {"ranker_attention_fwd": {2}, "ranker_attention_dq": {3},
               "ranker_attention_dkdv": {4}}),
    ("fused", {"ranker_attention_fwd": {2}, "ranker_attention_bwd": {5}}),
])
def test_matmuls_per_tile(backward, matmuls):
    """The backward's matmuls per (query tile, key tile): split, the dQ kernel recomputes QK^T
    and dO V^T that the dK/dV kernel computes too (3 + 4 = 7: QK^T, dO V^T, dS K; QK^T, P^T dO,
    dO V^T, dS^T Q); fused, one kernel does each once and adds dS K into dQ (5). Every loop body
    (masked, unmasked, partial tiles) of the Triton kernels, MHA (no loop over a group)."""
    from errkit_attention import pallas_attention as pa

    q = jax.ShapeDtypeStruct((B, S, 2, 64), jnp.bfloat16)

    def f(q, k, v, bound):
        return pa.pallas_attention(q, k, v, bound=bound, causal=True, sm_scale=0.125, cap=5.0,
                                   cap_method="tanh", interpret=False, backward=backward)

    bound = jax.ShapeDtypeStruct((B,), jnp.int32)
    jaxpr = jax.make_jaxpr(jax.grad(_loss(f), argnums=(0, 1, 2)))(q, q, q, bound)
    assert _matmuls_per_loop_body(jaxpr) == matmuls


def test_softmax_in_base_2():
    """exp2 with log2(e) folded into the scale: the kernels hold exp2 and no exp (the one
    log per row, of the softmax denominator, is jnp.log2's log(x) / log(2))."""
    args = _args("bfloat16", 64, "mha")
    f = _attention("causal", "nocap", "small")
    names = {eqn.primitive.name
             for eqn in kernel_equations(jax.make_jaxpr(jax.grad(_loss(f), argnums=(0, 1, 2)))(*args))}
    assert "exp2" in names and "exp" not in names, names


def _pallas_outputs(jaxpr):
    """(shape, dtype) of every pallas_call output in a closed jaxpr (both paths)."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "pallas_call":
                found.extend((v.aval.shape, str(v.aval.dtype)) for v in eqn.outvars)
            for param in eqn.params.values():
                for sub in param if isinstance(param, (tuple, list)) else (param,):
                    sub = getattr(sub, "jaxpr", sub)
                    if hasattr(sub, "eqns"):
                        walk(sub)
    walk(jaxpr.jaxpr)
    return found


@pytest.mark.parametrize("num_kv_heads", [1, 2])
def test_gqa_backward_has_no_per_query_head_partials(num_kv_heads):
    """dK/dV accumulate each kv head's query group in the kernel: the kernels' outputs
    are q-, lse- or k-shaped, never a float32 [b, s, num_q_heads, d] partial of dk/dv."""
    q = jax.ShapeDtypeStruct((1, 256, 8, 64), jnp.bfloat16)
    k = jax.ShapeDtypeStruct((1, 256, num_kv_heads, 64), jnp.bfloat16)

    def f(k, v):
        return ranker_attention(q_value, k, v, implementation="pallas").astype(
            jnp.float32).sum()

    q_value = jnp.zeros(q.shape, q.dtype)
    outputs = _pallas_outputs(jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(k, k))
    tpu = {((1, 8, 256, 64), "bfloat16"), ((1, num_kv_heads, 256, 64), "bfloat16"),  # [b, h, s, d] layout
           ((1, 8, 256, 128), "float32"),  # Mosaic: lse per row across 128 lanes
           ((1, 8, 1, 256), "float32")}  # or, as a row of the sequence (errkit_attention/pallas_tpu.py Options)
    allowed = {(q.shape, "bfloat16"), ((1, 8, 256), "float32"), (k.shape, "bfloat16")} | tpu
    fused = tuning.fused(tuning.current_arch(), 64, "bfloat16")
    if fused:  # the fused backward's dq, float32, the one output every kv tile's program adds to
        allowed.add((q.shape, "float32"))
        assert outputs.count((q.shape, "float32")) == 2  # of the interpret and Triton paths
    assert set(outputs) <= allowed, set(outputs) - allowed
    assert outputs.count((k.shape, "bfloat16")) == 2 * 2  # dk, dv of the interpret and Triton paths
    assert outputs.count(((1, num_kv_heads, 256, 64), "bfloat16")) == 2  # and of the Mosaic TPU one


def _backward_temp_bytes(num_q_heads, num_kv_heads):
    """Temporary bytes of the compiled (CPU, interpret-mode) forward + backward program."""
    q = jax.ShapeDtypeStruct((1, 256, num_q_heads, 64), jnp.float32)
    k = jax.ShapeDtypeStruct((1, 256, num_kv_heads, 64), jnp.float32)
    grad = jax.grad(_loss(lambda q, k, v: ranker_attention(q, k, v, implementation="pallas")),
                    argnums=(0, 1, 2))
    return jax.jit(grad).trace(q, k, k).lower().compile().memory_analysis().temp_size_in_bytes


def test_gqa_backward_temporary_memory_does_not_grow_with_the_group_size():
    """With 8 query heads, sharing kv heads in groups of 2, 4 or 8 needs no more temporary memory
    than MHA (groups of 1), but for a few small buffers: per-query-head dk/dv partials (the former GQA backward) added two
    float32 [b, s, num_q_heads, d] buffers, +1 MiB here, as soon as the group exceeded 1."""
    mha = _backward_temp_bytes(8, 8)
    grouped = [_backward_temp_bytes(8, 8 // g) for g in (2, 4, 8)]
    # a few hundred bytes more than MHA: the forward's stacked query heads (GQA: their lse rows,
    # transposed in the tile) in the interpreter's program (1,207,960 B vs 1,207,688 B); no slab
    assert all(t <= mha + 4096 for t in grouped), (mha, grouped)
    assert max(grouped) - min(grouped) < 4096, grouped  # a few small buffers differ, no slab
