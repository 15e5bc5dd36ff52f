"""Numerics of ranker_attention: both implementations against a float64 NumPy
oracle of the documented semantics, and Pallas gradients against the XLA path.

The oracle below is written from the specification only (it does not use
errkit_attention/reference.py). Shapes are small: the Pallas path runs in interpret mode.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from errkit_attention import BlockSizes, ranker_attention
from errkit_attention import _validators

KERNEL_DIR = pathlib.Path(__file__).resolve().parents[2] / "errkit_attention"

FWD_TOL = {"float32": 1e-4, "bfloat16": 2e-2, "float16": 5e-3}
GRAD_TOL = {"float32": 2e-4, "bfloat16": 3e-2}


# ----------------------------------------------------------------------------
# Float64 NumPy oracle.
# ----------------------------------------------------------------------------


def oracle(q, k, v, *, bound=None, causal=False, sm_scale=None, cap=None,
           cap_method="tanh"):
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    batch, q_len, num_q_heads, head_dim = q.shape
    kv_len, num_kv_heads = k.shape[1], k.shape[2]
    group = num_q_heads // num_kv_heads
    # query head h reads kv head h // group
    k = np.repeat(k, group, axis=2)
    v = np.repeat(v, group, axis=2)
    scale = 1.0 / math.sqrt(head_dim) if sm_scale is None else sm_scale
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if cap is not None and cap_method == "tanh":
        s = cap * np.tanh(s / cap)
    elif cap is not None and cap_method == "soft_sign":
        s = s / (1.0 + np.abs(s) / cap)
    allowed = np.zeros((batch, q_len, kv_len), dtype=bool)
    for b in range(batch):
        for i in range(q_len):
            for j in range(kv_len):
                if bound is None:
                    allowed[b, i, j] = (j <= i) if causal else True
                else:
                    ctx = j < int(bound[b]) and (not causal or j <= i)
                    allowed[b, i, j] = (j == i) or ctx
    s = np.where(allowed[:, None], s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


# ----------------------------------------------------------------------------
# Cases.
# ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    batch: int = 2
    q_len: int = 32
    kv_len: int = 32
    num_q_heads: int = 2
    num_kv_heads: int = 2
    head_dim: int = 32
    dtype: str = "float32"
    bound: tuple | None = None
    causal: bool = False
    sm_scale: float | None = None
    cap: float | None = None
    cap_method: str = "tanh"
    config: BlockSizes | None = dataclasses.field(
        default_factory=lambda: BlockSizes(block_q=16, block_kv=16))

    def options(self):
        bound = None if self.bound is None else jnp.asarray(self.bound, jnp.int32)
        return dict(bound=bound, causal=self.causal, sm_scale=self.sm_scale,
                    cap=self.cap, cap_method=self.cap_method, config=self.config)

    def oracle_options(self):
        return dict(bound=self.bound, causal=self.causal, sm_scale=self.sm_scale,
                    cap=self.cap, cap_method=self.cap_method)

    def inputs(self, seed=0):
        rng = np.random.default_rng(seed)
        dtype = jnp.dtype(self.dtype)

        def draw(seq, heads):
            x = rng.standard_normal((self.batch, seq, heads, self.head_dim))
            return jnp.asarray(x, dtype)

        # Large-ish logits so that capping and masking visibly matter.
        q = draw(self.q_len, self.num_q_heads) * jnp.asarray(2.0, dtype)
        k = draw(self.kv_len, self.num_kv_heads)
        v = draw(self.kv_len, self.num_kv_heads)
        return q, k, v


B16 = BlockSizes(block_q=16, block_kv=16)
B16_32 = BlockSizes(block_q=16, block_kv=32)
BWD_SPLIT = BlockSizes(block_q=32, block_kv=16, block_q_dkv=16, block_kv_dkv=32,
                       block_q_dq=16, block_kv_dq=16)

CASES = [
    Case("mha"),
    Case("gqa2_causal", num_q_heads=4, num_kv_heads=2, causal=True),
    Case("gqa4_tanh", num_q_heads=8, num_kv_heads=2, cap=3.0, head_dim=16),
    Case("mqa_causal_softsign", num_q_heads=4, num_kv_heads=1, causal=True,
         cap=2.0, cap_method="soft_sign"),
    Case("bound_mixed", batch=3, q_len=40, kv_len=40, bound=(0, 17, 40),
         config=B16_32),
    Case("bound_mixed_causal_gqa", batch=3, q_len=48, kv_len=48,
         num_q_heads=4, num_kv_heads=2, bound=(33, 5, 100), causal=True,
         cap=4.0, config=BWD_SPLIT),
    Case("bound_zero", bound=(0, 0)),
    Case("bound_full_causal", bound=(32, 64), causal=True),
    Case("cap_method_none", cap=0.5, cap_method="none", causal=True),
    Case("pad_seq_and_head_dim", q_len=40, kv_len=40, head_dim=48, causal=True,
         num_q_heads=4, num_kv_heads=2, config=B16_32),
    Case("head_dim_96_cross", q_len=24, kv_len=40, head_dim=96, config=B16_32,
         sm_scale=0.3),
    Case("default_blocks_clamped", q_len=40, kv_len=40, bound=(7, 23),
         config=None),
    Case("bwd_blocks_causal", q_len=64, kv_len=64, causal=True, config=BWD_SPLIT),
    Case("bf16_bound_causal", dtype="bfloat16", q_len=40, kv_len=40,
         num_q_heads=4, num_kv_heads=2, bound=(9, 40), causal=True, cap=5.0),
    Case("bf16_mha", dtype="bfloat16", cap=2.0, cap_method="soft_sign"),
    Case("f16_gqa", dtype="float16", num_q_heads=4, num_kv_heads=1),
]
CASES_BY_NAME = {c.name: c for c in CASES}
# Together: GQA 1/2/4 and MQA, every cap method, bound with/without causal
# (bound 0, mid-block and >= seq_len), causal alone, padding of seq and
# head_dim, q_len != kv_len, separate backward blocks, bfloat16.
GRAD_CASES = [
    "gqa4_tanh", "mqa_causal_softsign", "bound_mixed", "bound_mixed_causal_gqa",
    "pad_seq_and_head_dim", "head_dim_96_cross", "bwd_blocks_causal",
    "bf16_bound_causal",
]


def compiled(fn, *args):
    """``jax.jit(fn)`` compiled for ``args`` at XLA's lowest backend optimisation
    level: the shapes here are tiny, and the interpret-mode kernels otherwise
    spend most of the test time in the XLA compiler."""
    lowered = jax.jit(fn).lower(*args)
    return lowered.compile(compiler_options={"xla_backend_optimization_level": 0})


def run_jitted(fn, *args):
    return compiled(fn, *args)(*args)


def _close(actual, expected, tol, what):
    actual = np.asarray(jnp.asarray(actual, jnp.float32), dtype=np.float64)
    err = np.max(np.abs(actual - expected))
    assert err <= tol, f"{what}: max abs error {err:.3g} > {tol:g}"


# ----------------------------------------------------------------------------
# Forward against the oracle.
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["xla", "pallas"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward_matches_oracle(case, impl):
    q, k, v = case.inputs()
    options = case.options()
    bound = options.pop("bound")
    fn = lambda q, k, v, bound: ranker_attention(q, k, v, bound=bound,
                                                 implementation=impl, **options)
    out = run_jitted(fn, q, k, v, bound)
    assert out.shape == q.shape and out.dtype == q.dtype
    expected = oracle(q, k, v, **case.oracle_options())
    _close(out, expected, FWD_TOL[case.dtype], f"{impl} forward")


def test_cases_discriminate():
    """The options of the cases change the answer by far more than the
    tolerance, so the forward test fails if the kernel ignores them."""
    checks = [
        ("bound_mixed", dict(bound=None)),
        ("bound_mixed", dict(bound=(0, 17, 39))),  # only the >= seq_len example differs
        ("bound_zero", dict(bound=(1, 0))),
        ("bound_mixed_causal_gqa", dict(causal=False)),
        ("gqa2_causal", dict(causal=False)),
        ("gqa4_tanh", dict(cap=None)),
        ("mqa_causal_softsign", dict(cap_method="tanh")),
        ("head_dim_96_cross", dict(sm_scale=None)),
    ]
    for name, change in checks:
        case = CASES_BY_NAME[name]
        q, k, v = case.inputs()
        base = oracle(q, k, v, **case.oracle_options())
        other = oracle(q, k, v, **{**case.oracle_options(), **change})
        assert np.max(np.abs(base - other)) > 1e-2, (name, change)


# ----------------------------------------------------------------------------
# Gradients: Pallas custom_vjp against autodiff of the XLA path.
# ----------------------------------------------------------------------------


def _out_and_grads(case, impl, q, k, v, cotangent):
    options = case.options()
    bound = options.pop("bound")

    def run(q, k, v, bound, cotangent):
        def f(q, k, v):
            return ranker_attention(q, k, v, bound=bound, implementation=impl, **options)

        out, vjp = jax.vjp(f, q, k, v)
        return out, vjp(cotangent)

    return run_jitted(run, q, k, v, bound, cotangent)


@pytest.mark.parametrize("name", GRAD_CASES)
def test_pallas_gradients_match_xla(name):
    case = CASES_BY_NAME[name]
    q, k, v = case.inputs()
    rng = np.random.default_rng(1)
    cotangent = jnp.asarray(rng.standard_normal(q.shape), q.dtype)
    out, grads = _out_and_grads(case, "pallas", q, k, v, cotangent)
    _, ref_grads = _out_and_grads(case, "xla", q, k, v, cotangent)
    # The forward of the differentiated path (it also writes the softmax residuals).
    _close(out, oracle(q, k, v, **case.oracle_options()), FWD_TOL[case.dtype],
           "pallas forward under vjp")
    tol = GRAD_TOL[case.dtype]
    for label, g, ref in zip("qkv", grads, ref_grads):
        assert g.dtype == q.dtype
        ref = np.asarray(jnp.asarray(ref, jnp.float32), np.float64)
        scale = max(1.0, float(np.max(np.abs(ref))))
        _close(g, ref, tol * scale, f"d{label}")


def test_gradient_tolerance_is_meaningful():
    """A wrong softmax-capping derivative would be caught: the tanh cap changes
    dq by far more than GRAD_TOL."""
    case = CASES_BY_NAME["gqa4_tanh"]
    q, k, v = case.inputs()

    def dq(cap):
        f = lambda q: jnp.sum(ranker_attention(q, k, v, cap=cap, implementation="xla") ** 2)
        return np.asarray(run_jitted(jax.grad(f), q))

    assert np.max(np.abs(dq(3.0) - dq(None))) > 1e-1


# ----------------------------------------------------------------------------
# Transformations: jit with a traced bound, vmap over the batch.
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["xla", "pallas"])
def test_jit_with_traced_bound(impl):
    case = CASES_BY_NAME["bound_mixed_causal_gqa"]
    q, k, v = case.inputs()
    options = case.options()
    bound = options.pop("bound")
    fn = compiled(lambda q, k, v, bound: ranker_attention(
        q, k, v, bound=bound, implementation=impl, **options), q, k, v, bound)
    expected = oracle(q, k, v, **case.oracle_options())
    _close(fn(q, k, v, bound), expected, FWD_TOL["float32"], "jit")
    # The same executable, other bound values: bound is a traced input.
    other = jnp.asarray([48, 0, 20], jnp.int32)
    expected = oracle(q, k, v, **{**case.oracle_options(), "bound": (48, 0, 20)})
    _close(fn(q, k, v, other), expected, FWD_TOL["float32"], "jit, new bound")


@pytest.mark.parametrize("impl", ["xla", "pallas"])
def test_vmap_over_examples(impl):
    case = Case("vmap", batch=3, q_len=40, kv_len=40, num_q_heads=4, num_kv_heads=2,
                bound=(0, 19, 40), causal=True, cap=3.0, config=B16_32)
    q, k, v = case.inputs()
    options = case.options()
    bound = options.pop("bound")

    def one_example(q1, k1, v1, b1):  # q1: [seq, heads, dim], b1: scalar
        out = ranker_attention(q1[None], k1[None], v1[None], bound=b1[None],
                               implementation=impl, **options)
        return out[0]

    out = run_jitted(jax.vmap(one_example), q, k, v, bound)
    _close(out, oracle(q, k, v, **case.oracle_options()), FWD_TOL["float32"], "vmap")


def test_vmap_of_pallas_gradient():
    case = Case("vmap_grad", batch=2, num_q_heads=4, num_kv_heads=2, bound=(5, 20),
                cap=3.0)
    q, k, v = case.inputs()
    options = case.options()
    bound = options.pop("bound")

    def loss(impl, q1, k1, v1, b1):
        out = ranker_attention(q1[None], k1[None], v1[None], bound=b1[None],
                               implementation=impl, **options)
        return jnp.sum(jnp.sin(out))

    grads = {impl: run_jitted(jax.vmap(jax.grad(functools.partial(loss, impl),
                                                argnums=(0, 1, 2))), q, k, v, bound)
             for impl in ("pallas", "xla")}
    for g, ref in zip(grads["pallas"], grads["xla"]):
        _close(g, np.asarray(ref, np.float64), GRAD_TOL["float32"], "vmap(grad)")


# ----------------------------------------------------------------------------
# Contract with errkit_attention/_validators.py.
# ----------------------------------------------------------------------------


def test_validators_called_in_order(monkeypatch):
    calls = []
    for name in ("validate_options", "validate_qkv", "validate_mask", "validate_config"):
        monkeypatch.setattr(_validators, name,
                            lambda *a, _n=name: calls.append((_n, a)))
    case = CASES_BY_NAME["bound_zero"]
    q, k, v = case.inputs()
    config = BlockSizes(block_q=16, block_kv=16)
    bound = jnp.asarray([1, 2], jnp.int32)
    ranker_attention(q, k, v, bound=bound, causal=True, sm_scale=0.5, cap=2.0,
                     cap_method="soft_sign", config=config, implementation=None)
    expected_impl = "pallas" if jax.default_backend() in ("gpu", "tpu") else "xla"
    assert [c[0] for c in calls] == ["validate_options", "validate_qkv",
                                     "validate_mask", "validate_config"]
    assert calls[0][1] == (None, 0.5, 2.0, "soft_sign", True, "bshd")
    assert calls[1][1][:3] == (q, k, v) and calls[1][1][3] == expected_impl
    assert calls[2][1][0] is bound and calls[2][1][1] is True
    assert calls[3][1] == (config, expected_impl)


def test_kernel_has_no_raise_or_assert():
    """Input errors come from the generated validators only."""
    offenders = []
    for path in sorted(KERNEL_DIR.glob("*.py")):
        if path.name == "_validators.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.Raise, ast.Assert)):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, offenders
