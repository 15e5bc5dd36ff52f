"""Real errors of JAX's GPU attention kernels, recognised by `errkit explain`.

Every case calls the real upstream code on CPU with a bad input: jax.nn.dot_product_attention
(implementation 'xla', None, and 'cudnn' where the check fires before cuDNN is looked for), the
Pallas GPU kernels in interpret mode (attention.mha, decode_attention, paged_attention) and the
pure-Python validation of attention_mgpu. It captures str(exception) (the formatted traceback for
an exception raised without text), runs explain on it and checks the code and the values read back.

A second group ("simulated") runs the GPU-only Python checks of the cuDNN helper and of
attention_mgpu.attention with a fake `cuda_versions` object (no kernel runs), the way the inventory
verified them, and a third calls the cuDNN helper's validation functions directly.
"""

from __future__ import annotations

import contextlib
import traceback

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from support import explain_first, pasted_text, raised_by  # noqa: E402

F = jax.nn.dot_product_attention
B, T, S, N, K, H = 2, 4, 6, 4, 2, 8


def _qkv(dtype=jnp.float32):
    return jnp.ones((B, T, N, H), dtype), jnp.ones((B, S, K, H), dtype), jnp.ones((B, S, K, H), dtype)








def _check(fn, code, values, exception=None):
    err = raised_by(fn)
    if exception is not None:
        assert type(err).__name__ == exception, repr(err)
    res = explain_first(pasted_text(err))
    assert res["code"] == code, (str(err), res["code"], res["matched"]["wording"])
    assert res["confidence"] == "exact"
    for name, want in values.items():
        assert res["params"].get(name) == want, (name, res["params"], str(err))
    return err, res


# -- jax.nn.dot_product_attention -----------------------------------------------------------------

q, k, v = _qkv()
i32 = jnp.int32

NN_CASES = {
    "value-rank": (lambda impl: F(q, k, jnp.ones((1, B, S, K, H)), implementation=impl),
                   "RA530", {"name": "value", "expected_rank": 4, "rank": 5}),
    "query-rank": (lambda impl: F(jnp.ones((1, B, T, N, H)), k, v, implementation=impl),
                   "RA530", {"name": "query", "expected_rank": 4, "rank": 5}),
    "mask-rank": (lambda impl: F(q, k, v, mask=jnp.ones((1, B, N, T, S), bool), implementation=impl),
                  "RA530", {"name": "mask", "rank": 5}),
    "bias-rank": (lambda impl: F(q, k, v, bias=jnp.ones((1, B, N, T, S)), implementation=impl),
                  "RA530", {"name": "bias", "rank": 5}),
    "lengths-rank": (lambda impl: F(q, k, v, query_seq_lengths=jnp.array([[1, 2]], i32), implementation=impl),
                     "RA530", {"name": "query_seq_lengths", "expected_rank": 1, "rank": 2}),
    "value-dtype": (lambda impl: F(q, k, v.astype(jnp.float16), implementation=impl),
                    "RA531", {"name": "value", "expected_dtype": "float32", "dtype": "float16"}),
    "query-dtype": (lambda impl: F(q.astype(jnp.bfloat16), k, v, implementation=impl),
                    "RA531", {"name": "query", "expected_dtype": "float32", "dtype": "bfloat16"}),
    "mask-dtype": (lambda impl: F(q, k, v, mask=jnp.ones((B, N, T, S), i32), implementation=impl),
                   "RA531", {"name": "mask", "expected_dtype": "bool", "dtype": "int32"}),
    "lengths-dtype": (lambda impl: F(q, k, v, key_value_seq_lengths=jnp.array([1, 2], jnp.int16), implementation=impl),
                      "RA531", {"name": "key_value_seq_lengths", "expected_dtype": "int32", "dtype": "int16"}),
    "value-shape": (lambda impl: F(q, k, jnp.ones((B, S, K, H + 1)), implementation=impl),
                    "RA532", {"name": "value", "expected_shape": "[2, 6, 2, 8]", "input_shape": [2, 6, 2, 9]}),
    "query-shape": (lambda impl: F(jnp.ones((B + 1, T, N, H)), k, v, implementation=impl),
                    "RA532", {"name": "query", "expected_shape": "[2, -1, -1, 8]", "input_shape": [3, 4, 4, 8]}),
    "lengths-shape": (lambda impl: F(q, k, v, query_seq_lengths=jnp.array([1, 2, 3], i32), implementation=impl),
                      "RA532", {"name": "query_seq_lengths", "expected_shape": "[2]", "input_shape": [3]}),
    "gqa-heads": (lambda impl: F(jnp.ones((B, T, 3, H)), k, v, implementation=impl),
                  "RA105", {"num_q_heads": 3, "num_kv_heads": 2}),
    "mask-head-axis": (lambda impl: F(q, k, v, mask=jnp.ones((B, 3, T, S), bool), implementation=impl), "RA535", {}),
    "bias-head-axis": (lambda impl: F(q, k, v, bias=jnp.ones((B, K, T, S)), implementation=impl), "RA535", {}),
}


@pytest.mark.parametrize("impl", ["xla", None])
@pytest.mark.parametrize("case", sorted(NN_CASES))
def test_dot_product_attention(case, impl):
    call, code, values = NN_CASES[case]
    _check(lambda: call(impl), code, values)


def test_dot_product_attention_checks_run_before_cudnn():
    # jax.nn's own checks come first, so a cuDNN call reports them on CPU too.
    _check(lambda: F(q, k, v.astype(jnp.float16), implementation="cudnn"), "RA531", {"name": "value"})


@pytest.mark.parametrize("impl", ["flash", "pallas", "XLA"])
def test_dot_product_attention_unknown_implementation(impl):
    _check(lambda: F(q, k, v, implementation=impl), "RA533", {"implementation": impl})


@pytest.mark.parametrize("window,right", [((2, 1), 1), (3, 3)])
def test_dot_product_attention_cudnn_right_window(window, right):
    _check(lambda: F(q, k, v, implementation="cudnn", local_window_size=window), "RA534", {"r_window": right})


@pytest.mark.skipif(jax.default_backend() == "gpu", reason="cuDNN is present on a GPU")
def test_dot_product_attention_cudnn_not_detected():
    _check(lambda: F(q, k, v, implementation="cudnn"), "RA540", {}, exception="RuntimeError")


def test_dot_product_attention_full_traceback():
    """A whole pasted traceback works too (the source line printed in it is not mistaken for the message)."""
    err = raised_by(lambda: F(q, k, jnp.ones((B, S, K, H + 1))))
    res = explain_first("".join(traceback.format_exception(err)))
    assert res["code"] == "RA532" and res["params"]["input_shape"] == [2, 6, 2, 9]


# -- Pallas GPU kernels in interpret mode ---------------------------------------------------------


@pytest.fixture(scope="module")
def mha():
    from jax.experimental.pallas.ops.gpu import attention as A

    x = jax.random.normal(jax.random.key(0), (1, 32, 2, 16))
    bs = A.BlockSizes(block_q=16, block_k=16, block_q_dkv=16, block_kv_dkv=16, block_q_dq=16, block_kv_dq=16)
    return A, x, bs


def _grad(fn, x):
    return jax.grad(lambda x: fn(x).sum())(x)


MHA_CASES = {
    "head-dim": (lambda A, x, bs: A.mha(x, x, jnp.ones((1, 32, 2, 8)), None, block_sizes=bs, interpret=True),
                 "RA102", {"q_shape": [1, 32, 2, 16], "v_shape": [1, 32, 2, 8]}),
    "q-seq-len": (lambda A, x, bs: A.mha(jnp.ones((1, 24, 2, 16)), x, x, None, block_sizes=bs, interpret=True),
                  "RA230", {"q_seq_len": 24, "block_q": 16}),
    "kv-seq-len": (lambda A, x, bs: A.mha(x, jnp.ones((1, 40, 2, 16)), jnp.ones((1, 40, 2, 16)), None, block_sizes=bs, interpret=True),
                   "RA231", {"kv_seq_len": 40, "block_k": 16}),
    "grad-residuals": (lambda A, x, bs: _grad(lambda y: A.mha(y, x, x, None, block_sizes=bs, interpret=True, return_residuals=True)[0], x),
                       "RA500", {}),
    "grad-no-backward-blocks": (lambda A, x, bs: _grad(lambda y: A.mha(y, x, x, None, block_sizes=A.BlockSizes(block_q=16, block_k=16), interpret=True), x),
                                "RA223", {}),
    "grad-block-count": (lambda A, x, bs: _grad(lambda y: A.mha(y, x, x, None, interpret=True, block_sizes=A.BlockSizes(
        block_q=16, block_k=16, block_q_dkv=16, block_kv_dkv=8, block_q_dq=16, block_kv_dq=16)), x), "RA501", {}),
    "grad-backward-impl": (lambda A, x, bs: _grad(lambda y: A.mha(y, x, x, None, block_sizes=bs, backward_pass_impl="cuda", interpret=True), x),
                           "RA222", {"backward_pass_impl": "cuda"}),
}


@pytest.mark.parametrize("case", sorted(MHA_CASES))
def test_gpu_attention_mha(mha, case):
    call, code, values = MHA_CASES[case]
    _check(lambda: call(*mha), code, values)


@pytest.fixture(scope="module")
def decode():
    from jax.experimental.pallas.ops.gpu import decode_attention as D

    qd = jax.random.normal(jax.random.key(0), (2, 4, 16))
    kd = jax.random.normal(jax.random.key(1), (2, 64, 16))
    k4 = jax.random.normal(jax.random.key(1), (2, 64, 2, 16))
    return D, qd, kd, k4


DECODE_CASES = {
    "default-splits": (lambda D, qd, kd, k4: D.mqa(qd, kd, kd, interpret=True), "RA511", {"k_seq_len": 64, "k_splits": 16}),
    "splits-not-dividing": (lambda D, qd, kd, k4: D.mqa(qd, kd, kd, k_splits=3, block_k=16, interpret=True),
                            "RA510", {"k_seq_len": 64, "k_splits": 3}),
    "block-k-small": (lambda D, qd, kd, k4: D.mqa(qd, kd, kd, k_splits=4, block_k=8, interpret=True), "RA512", {}),
    "split-vs-block": (lambda D, qd, kd, k4: D.mqa(qd, jnp.ones((2, 96, 16)), jnp.ones((2, 96, 16)), k_splits=2, block_k=32, interpret=True),
                       "RA513", {"k_seq_len": 96, "k_splits": 2, "block_k": 32}),
    "unnormalized": (lambda D, qd, kd, k4: D.gqa(qd, k4, k4, k_splits=4, block_k=16, normalize_output=False, interpret=True),
                     "RA514", {}),
    "kv-heads-differ": (lambda D, qd, kd, k4: D.gqa(qd, k4, jnp.ones((2, 64, 1, 16)), k_splits=4, block_k=16, interpret=True), "RA515", {}),
    "q-heads-not-multiple": (lambda D, qd, kd, k4: D.gqa(qd, jnp.ones((2, 64, 3, 16)), jnp.ones((2, 64, 3, 16)), k_splits=4, block_k=16, interpret=True),
                             "RA515", {}),
    "start-idx-rank": (lambda D, qd, kd, k4: D.gqa(qd, k4, k4, start_idx=jnp.zeros((2, 1), jnp.int32), k_splits=4, block_k=16, interpret=True),
                       "RA515", {}),
}


@pytest.mark.parametrize("case", sorted(DECODE_CASES))
def test_gpu_decode_attention(decode, case):
    call, code, values = DECODE_CASES[case]
    _check(lambda: call(*decode), code, values)


@pytest.fixture(scope="module")
def paged():
    from jax.experimental.pallas.ops.gpu import paged_attention as P

    qp = jax.random.normal(jax.random.key(0), (2, 4, 16))
    kp = jax.random.normal(jax.random.key(1), (2, 8, 16, 16))  # [num_kv_heads, total_pages, page_size, head_dim]
    bt = jnp.arange(8, dtype=jnp.int32).reshape(2, 4) % 8
    ln = jnp.array([40, 64], jnp.int32)
    return P, qp, kp, bt, ln


KW = dict(k_splits=2, pages_per_compute_block=2, interpret=True)
PAGED_CASES = {
    "v-pages-shape": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, jnp.ones((2, 8, 16, 8)), bt, ln, **KW),
                      "RA103", {"k_shape": [2, 8, 16, 16], "v_shape": [2, 8, 16, 8]}),
    "q-heads": (lambda P, qp, kp, bt, ln: P.paged_attention(jnp.ones((2, 3, 16)), kp, kp, bt, ln, **KW),
                "RA105", {"num_q_heads": 3, "num_kv_heads": 2}),
    "head-dim": (lambda P, qp, kp, bt, ln: P.paged_attention(jnp.ones((2, 4, 8)), kp, kp, bt, ln, **KW),
                 "RA102", {"head_dim": 8, "head_dim_k": 16}),
    "block-tables-batch": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt[:1], ln, **KW), "RA520", {}),
    "lengths-batch": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln[:1], **KW), "RA521", {}),
    "lengths-dtype": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln.astype(jnp.float32), **KW), "RA522", {}),
    "block-h": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln, block_h=8, **KW), "RA523", {"block_h": 8}),
    "k-splits": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln, k_splits=3, pages_per_compute_block=2, interpret=True),
                 "RA510", {"pages_per_sequence": 4, "k_splits": 3}),
    "default-k-splits": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln, interpret=True),
                         "RA510", {"pages_per_sequence": 4, "k_splits": 16}),
    "compute-block": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln, k_splits=1, pages_per_compute_block=3, interpret=True),
                      "RA513", {"pages_per_partition": 4, "pages_per_compute_block": 3}),
    "scale-pages": (lambda P, qp, kp, bt, ln: P.paged_attention(qp, kp, kp, bt, ln, jnp.ones((2, 8, 17)), None, **KW), "RA524", {}),
}


@pytest.mark.parametrize("case", sorted(PAGED_CASES))
def test_gpu_paged_attention(paged, case):
    call, code, values = PAGED_CASES[case]
    _check(lambda: call(*paged), code, values)


# -- Mosaic GPU attention (needs absl-py to import: a test dependency) -----------------------------


@pytest.fixture(scope="module")
def mgpu():
    # jax is installed (without it the file is skipped): a module of it that does not import, absl-py
    # missing included (a test dependency in pyproject.toml), is an error of these tests, not a skip.
    from jax.experimental.pallas.ops.gpu import attention_mgpu as M

    return M


def _f16(*shape):
    return jnp.ones(shape, jnp.float16)


MGPU_CASES = {
    "block-q": (lambda M, cfg: M.TuningConfig(block_q=32, block_kv=64, max_concurrent_steps=2), "RA220", {"block_q": 32}),
    "block-kv": (lambda M, cfg: M.TuningConfig(block_q=64, block_kv=100, max_concurrent_steps=2), "RA220", {"block_kv": 100}),
    "concurrent-steps": (lambda M, cfg: M.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=1),
                         "RA221", {"max_concurrent_steps": 1}),
    "partial-backward-blocks": (lambda M, cfg: M.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2, block_q_dkv=64), "RA213", {}),
    "pipeline-causal": (lambda M, cfg: M.attention_with_pipeline_emitter(
        _f16(1, 256, 2, 64), _f16(1, 256, 2, 64), _f16(1, 256, 2, 64),
        M.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2, causal=True)), "RA225", {}),
    "rank": (lambda M, cfg: M.attention_with_pipeline_emitter(_f16(256, 2, 64), _f16(1, 256, 2, 64), _f16(1, 256, 2, 64), cfg),
             "RA101", {"q_ndim": 3, "k_ndim": 4, "v_ndim": 4}),
    "k-shape": (lambda M, cfg: M.attention_with_pipeline_emitter(_f16(1, 256, 2, 64), _f16(1, 256, 2, 128), _f16(1, 256, 2, 64), cfg),
                "RA102", {"k_shape": [1, 256, 2, 128], "kv_shape": [1, 256, 2, 64]}),
    "dtype-mix": (lambda M, cfg: M.attention_with_pipeline_emitter(
        _f16(1, 256, 2, 64), _f16(1, 256, 2, 64), jnp.ones((1, 256, 2, 64), jnp.bfloat16), cfg),
        "RA104", {"q_dtype": "float16", "v_dtype": "bfloat16"}),
    "gqa": (lambda M, cfg: M.attention_with_pipeline_emitter(_f16(1, 256, 3, 64), _f16(1, 256, 2, 64), _f16(1, 256, 2, 64), cfg),
            "RA105", {"num_q_heads": 3, "num_kv_heads": 2}),
    "head-dim": (lambda M, cfg: M.attention_with_pipeline_emitter(_f16(1, 256, 2, 32), _f16(1, 256, 2, 32), _f16(1, 256, 2, 32), cfg),
                 "RA109", {"head_dim": 32}),
    "float32": (lambda M, cfg: M.attention_with_pipeline_emitter(*(jnp.ones((1, 256, 2, 64)),) * 3, cfg), "RA106", {"dtype": "float32"}),
    "q-seq-len": (lambda M, cfg: M.attention_with_pipeline_emitter(_f16(1, 192, 2, 64), _f16(1, 256, 2, 64), _f16(1, 256, 2, 64), cfg),
                  "RA230", {"q_seq_len": 192, "block": 128}),
}


@pytest.mark.parametrize("case", sorted(MGPU_CASES))
def test_gpu_attention_mgpu(mgpu, case):
    call, code, values = MGPU_CASES[case]
    cfg = mgpu.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2)
    _check(lambda: call(mgpu, cfg), code, values)


def test_gpu_attention_mgpu_without_cuda_plugin(mgpu):
    if mgpu.cuda_versions is not None:
        pytest.skip("jaxlib has its CUDA plugin here")
    q4 = _f16(1, 256, 2, 64)
    cfg = mgpu.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2)
    err, res = _check(lambda: mgpu.attention(q4, q4, q4, cfg), "RA506", {}, exception="AssertionError")
    assert str(err) == ""


# -- GPU-only checks, simulated: fake cuda_versions, traced with jax.eval_shape -------------------


class _FakeCuda:
    def __init__(self, runtime=12000, cudnn=91000):
        self.runtime, self.cudnn = runtime, cudnn

    def cuda_runtime_get_version(self):
        return self.runtime

    def cudnn_get_version(self):
        return self.cudnn


@contextlib.contextmanager
def _fake_cuda(module, **versions):
    old = module.cuda_versions
    module.cuda_versions = _FakeCuda(**versions)
    try:
        yield
    finally:
        module.cuda_versions = old


@pytest.fixture()
def fa():
    from jax._src.cudnn import fused_attention_stablehlo as FA

    with _fake_cuda(FA):
        yield FA


bf = jnp.bfloat16
qb, kb, vb = _qkv(bf)
CUDNN = dict(implementation="cudnn")
SIMULATED_CUDNN_CASES = {
    "float32": (lambda: jax.eval_shape(lambda q, k, v: F(q, k, v, **CUDNN), *_qkv()), "RA541", {"q_dtype": "float32"}),
    "float32-with-mask": (lambda: jax.eval_shape(lambda q, k, v: F(q, k, v, mask=jnp.ones((B, N, T, S), bool), **CUDNN), *_qkv()),
                          "RA541", {}),
    "bias-broadcast-t": (lambda: jax.eval_shape(lambda q: F(q, kb, vb, bias=jnp.ones((B, N, 1, S), bf), **CUDNN), qb),
                         "RA543", {"bT": 1, "bS": 6}),
    "mask-broadcast-s": (lambda: jax.eval_shape(lambda q: F(q, kb, vb, mask=jnp.ones((B, N, T, 1), bool), **CUDNN), qb),
                         "RA543", {"bT": 4, "bS": 1}),
    "window-left-negative": (lambda: jax.eval_shape(lambda q: F(q, kb, vb, local_window_size=(-1, 0), **CUDNN), qb),
                             "RA545", {"sliding_window_length": 0}),
    "head-dim-12": (lambda: jax.eval_shape(lambda q, k, v: F(q, k, v, **CUDNN), *(jnp.ones(s[:3] + (12,), bf) for s in ((B, T, N, H), (B, S, K, H), (B, S, K, H)))),
                    "RA542", {"qH": 12}),
    "grad-bias-odd": (lambda: jax.eval_shape(lambda q: jax.grad(lambda q: F(q, kb, vb, bias=jnp.ones((B, N, 3, S), bf), **CUDNN).astype(jnp.float32).sum())(q),
                                             jnp.ones((B, 3, N, H), bf)), "RA544", {"T": 3, "S": 6}),
    "vmap-axis-1": (lambda: jax.eval_shape(jax.vmap(lambda q, k, v: F(q, k, v, **CUDNN), in_axes=1),
                                           jnp.ones((B, 3, T, N, H), bf), jnp.ones((B, 3, S, K, H), bf), jnp.ones((B, 3, S, K, H), bf)),
                    "RA546", {"batch_dim": 1}),
}


@pytest.mark.parametrize("case", sorted(SIMULATED_CUDNN_CASES))
def test_cudnn_simulated(fa, case):
    call, code, values = SIMULATED_CUDNN_CASES[case]
    _check(call, code, values)


def _z(*shape, dtype=bf):
    return jnp.zeros(shape, dtype)


DIRECT_CUDNN_CASES = {
    "layout": (lambda FA: FA._normalize_layout("BHSD"), "RA550", {"layout": "BHSD"}),
    "mask-type": (lambda FA: FA.convert_mask_type_to_string("causal"), "RA551", {"mask_type": "causal"}),
    "large-negative": (lambda FA: FA.get_large_negative_number(np.dtype("float32")), "RA541", {}),
    "q-rank": (lambda FA: FA.check_layout(_z(2, 4, 8), _z(2, 6, 2, 8), _z(2, 6, 2, 8), None, None, None, None, None, None, None,
                                          FA.AttentionLayout.BTNH), "RA530", {"rank": 3}),
    "qkv-dtype": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 6, 2, 8, dtype=jnp.float16), None, None, None, None,
                                             None, None, None, FA.AttentionLayout.BTNH),
                  "RA552", {"msg": "QKV dtype", "a": "bfloat16", "b": "bfloat16", "c": "bfloat16"}),  # jax < 0.11.2 prints k's dtype for v
    "qkv-batch": (lambda FA: FA.check_layout(_z(3, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 6, 2, 8), None, None, None, None, None, None, None,
                                             FA.AttentionLayout.BTNH), "RA552", {"msg": "QKV batch", "a": "3", "b": "2", "c": "2"}),
    "qk-head-dim": (lambda FA: FA.check_layout(_z(2, 4, 2, 16), _z(2, 6, 2, 8), _z(2, 6, 2, 8), None, None, None, None, None, None, None,
                                               FA.AttentionLayout.BTNH), "RA102", {"head_dim": 16, "head_dim_k": 8}),
    "kv-heads": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 6, 1, 8), None, None, None, None, None, None, None,
                                            FA.AttentionLayout.BTNH), "RA103", {"num_kv_heads": 2, "num_kv_heads_v": 1}),
    "kv-seq-len": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 5, 2, 8), None, None, None, None, None, None, None,
                                              FA.AttentionLayout.BTNH), "RA103", {"kv_seq_len": 6, "kv_seq_len_v": 5}),
    "seqlen-dtype": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 6, 2, 8), None, _z(2, dtype=jnp.float32), None,
                                                None, None, None, None, FA.AttentionLayout.BTNH),
                     "RA531", {"name": "q_seqlen", "dtype": "float32"}),
    "seqlen-rank": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 6, 2, 8), None, _z(2, 1, dtype=jnp.int32), None,
                                               None, None, None, None, FA.AttentionLayout.BTNH),
                    "RA530", {"name": "q_seqlen", "expected_rank": 1, "rank": 2}),
    "seqlen-batch": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(2, 6, 2, 8), _z(2, 6, 2, 8), None, None, _z(3, dtype=jnp.int32),
                                                None, None, None, None, FA.AttentionLayout.BTNH),
                     "RA532", {"name": "kv_seqlen", "b": 3}),
    "page-table-k": (lambda FA: FA.check_layout(_z(2, 4, 2, 8), _z(6, 4, 2, 8), _z(6, 4, 2, 8), None, None, None, None, None,
                                                _z(2, 1, 2, 1, dtype=jnp.int32), _z(2, 1, 2, 1, dtype=jnp.int32), FA.AttentionLayout.BTNH),
                     "RA553", {"k_blocks": 6, "table_blocks": 4}),
    "fp8-params-keys": (lambda FA: FA.check_fp8_params({}), "RA554", {}),
    "batch-dims": (lambda FA: FA._check_valid_batch_dims([0, 2]), "RA546", {"batch_dim": 2}),
    "qkv-sharding": (lambda FA: FA._check_qkv_bias_mask_spec(("x", None, None, None), (None,) * 4, (None,) * 4, None,
                                                             FA.AttentionLayout.BTNH.value), "RA557", {}),
    "seq-sharding": (lambda FA: FA._check_qkv_bias_mask_spec(*((None, "x", None, None),) * 3, None, FA.AttentionLayout.BTNH.value),
                     "RA558", {}),
    "head-dim-sharding": (lambda FA: FA._check_qkv_bias_mask_spec(*((None, None, None, "x"),) * 3, None, FA.AttentionLayout.BTNH.value),
                          "RA558", {}),
    "fp8-none-params": (lambda FA: FA.dot_product_attention(_z(2, 4, 2, 128), _z(2, 4, 2, 128), _z(2, 4, 2, 128), use_fp8=True),
                        "RA554", {}),
    "fp8-padding-mask": (lambda FA: FA.dot_product_attention(_z(2, 4, 2, 128), _z(2, 4, 2, 128), _z(2, 4, 2, 128), use_fp8=True,
                                                             fp8_params={}, mask_type=FA.MaskType.PADDING), "RA555", {}),
    "fp8-seqlens": (lambda FA: FA.dot_product_attention(_z(2, 4, 2, 128), _z(2, 4, 2, 128), _z(2, 4, 2, 128), use_fp8=True,
                                                        fp8_params={}, q_seqlen=jnp.array([4, 4], jnp.int32)),
                    "RA555", {"bias": None, "q_seqlen": "[4 4]"}),
    "padding-no-seqlens": (lambda FA: FA.dot_product_attention(_z(2, 4, 2, 8), _z(2, 4, 2, 8), _z(2, 4, 2, 8), mask_type=FA.MaskType.PADDING),
                           "RA548", {}),
    "packed-no-seqlens": (lambda FA: FA.dot_product_attention(_z(2, 4, 2, 8), _z(2, 4, 2, 8), _z(2, 4, 2, 8),
                                                              q_offsets=jnp.zeros((2, 2), jnp.int32)), "RA548", {}),
}


@pytest.mark.parametrize("case", sorted(DIRECT_CUDNN_CASES))
def test_cudnn_helper_direct(fa, case):
    call, code, values = DIRECT_CUDNN_CASES[case]
    _check(lambda: call(fa), code, values)


@pytest.fixture()
def mgpu_sim(mgpu):
    with _fake_cuda(mgpu):
        yield mgpu


def _mgpu_grad(M, **config):
    cfg = M.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2, **config)
    q4 = _f16(1, 256, 2, 64)
    return jax.eval_shape(lambda q: jax.grad(lambda q: M.attention(q, q, q, cfg).astype(jnp.float32).sum())(q), q4)


BW = dict(block_q_dkv=64, block_kv_dkv=64, block_q_dq=64, block_kv_dq=64)
SIMULATED_MGPU_CASES = {
    "kv-seq-len": (lambda M: jax.eval_shape(lambda q: M.attention(q, _f16(1, 96, 2, 64), _f16(1, 96, 2, 64),
                                                                  M.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2)),
                                            _f16(1, 256, 2, 64)), "RA231", {"kv_seq_len": 96, "block_kv": 64}),
    "grad-causal": (lambda M: _mgpu_grad(M, causal=True), "RA224", {}),
    "grad-no-backward-blocks": (lambda M: _mgpu_grad(M), "RA223", {}),
    "grad-dq-blocks": (lambda M: _mgpu_grad(M, compute_wgs_bwd=3, **BW), "RA230",
                       {"q_seq_len": 256, "block_q_dq": 64, "compute_wgs": 3}),
    "grad-dkv-q-block": (lambda M: _mgpu_grad(M, **{**BW, "block_q_dkv": 96}), "RA230", {"q_seq_len": 256, "block_q_dkv": 96}),
    "grad-dkv-kv-block": (lambda M: _mgpu_grad(M, **{**BW, "block_kv_dkv": 96}), "RA231", {"kv_seq_len": 256, "compute_wgs": 1}),
    "grad-dq-kv-block": (lambda M: _mgpu_grad(M, **{**BW, "block_kv_dq": 96}), "RA231", {"kv_seq_len": 256}),
}


@pytest.mark.parametrize("case", sorted(SIMULATED_MGPU_CASES))
def test_gpu_attention_mgpu_simulated(mgpu_sim, case):
    call, code, values = SIMULATED_MGPU_CASES[case]
    _check(lambda: call(mgpu_sim), code, values)


def test_gpu_attention_mgpu_causal_cuda_version(mgpu):
    q4 = _f16(1, 256, 2, 64)
    cfg = mgpu.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2, causal=True)
    with _fake_cuda(mgpu, runtime=12085):
        _check(lambda: jax.eval_shape(lambda q: mgpu.attention(q, q, q, cfg), q4), "RA505", {})
