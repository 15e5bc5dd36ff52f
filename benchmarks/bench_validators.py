"""Generated validation vs the same checks written inline by hand, on equal footing.

Both run the full input validation of one ranker_attention call on the same jax arrays: the same
conditions in the same order (is an array, rank, empty axes, shapes, dtypes, heads, the supported
dtypes with xla's float64, bound's dtype, shape, minimum and maximum (the int32 range) unless traced
or empty, sequence lengths, the BlockSizes type and powers of two), with the same dtype-name cache (numpy's `dtype.name` is
slow: errkit.core.runtime.dtype_name caches it, so the hand-written code does too). The hand-written
code is what one writes without a generator: one function, each shape and dtype read once into a
local. The generated code is four validate functions, each reading its params off its own
arguments. Target: ratio <= 1.10.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import Result, Target, compare, fmt_time, report  # noqa: E402
from errkit_attention import BlockSizes, _validators  # noqa: E402


def generated(q, k, v, bound, config):
    _validators.validate_options("xla", None, 30.0, "tanh", False, "bshd")
    _validators.validate_qkv(q, k, v, "xla", "bshd")
    _validators.validate_mask(bound, False, q, k, "bshd")
    _validators.validate_config(config, "xla")


_DTYPE_NAMES: dict = {}


def _dtype_name(dtype) -> str:
    try:
        return _DTYPE_NAMES[dtype]
    except KeyError:
        name = _DTYPE_NAMES[dtype] = dtype.name  # numpy's dtype.name is slow: once per dtype
        return name


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _pow2_in_range(b) -> bool:
    return isinstance(b, int) and not isinstance(b, bool) and b > 0 and b & (b - 1) == 0 and 16 <= b <= 1024


def hand_written(q, k, v, bound, config, implementation="xla", sm_scale=None, cap=30.0, cap_method="tanh", causal=False):
    if implementation is not None and implementation not in ("pallas", "xla"):
        raise ValueError(f"implementation must be 'pallas', 'xla' or None, got {implementation!r}")
    if sm_scale is not None and not _finite(sm_scale):
        raise ValueError(f"sm_scale must be a finite number or None, got {sm_scale!r}")
    if cap is not None and not (_finite(cap) and cap > 0):
        raise ValueError(f"cap must be a positive finite number or None, got {cap!r}")
    if cap_method not in ("tanh", "soft_sign", "none"):
        raise ValueError(f"cap_method must be one of 'tanh', 'soft_sign', 'none', got {cap_method!r}")
    if type(causal) is not bool:
        raise TypeError(f"causal must be True or False, got a {type(causal).__name__}")
    for x in (q, k, v):
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"q, k and v must be arrays, got {type(x).__name__}")
    q_shape, k_shape, v_shape = q.shape, k.shape, v.shape
    if len(q_shape) != 4 or len(k_shape) != 4 or len(v_shape) != 4:
        raise ValueError(f"q, k and v must all be 4D, got: {q_shape=}, {k_shape=}, {v_shape=}")
    if min(q_shape) <= 0 or min(k_shape) <= 0 or min(v_shape) <= 0:
        raise ValueError(f"q, k and v must not have empty dimensions, got {q_shape=}, {k_shape=}, {v_shape=}")
    batch, q_seq_len, num_q_heads, head_dim = q_shape
    _, kv_seq_len, num_kv_heads, _ = k_shape
    if k_shape[0] != batch or k_shape[3] != head_dim:
        raise ValueError(f"k must share q's batch and head_dim: {q_shape=}, {k_shape=}")
    if v_shape != k_shape:
        raise ValueError(f"v must have the same shape as k: {k_shape=}, {v_shape=}")
    dtype, k_dtype, v_dtype = _dtype_name(q.dtype), _dtype_name(k.dtype), _dtype_name(v.dtype)
    if dtype != k_dtype or k_dtype != v_dtype:
        raise ValueError(f"q, k and v must have the same dtype, got: {dtype}, {k_dtype}, {v_dtype}")
    if num_q_heads % num_kv_heads:
        raise ValueError(f"{num_q_heads=} must be divisible by {num_kv_heads=}")
    if dtype not in ("float32", "bfloat16", "float16") and not (implementation == "xla" and dtype == "float64"):
        raise NotImplementedError(f"dtype {dtype} is not supported by implementation={implementation!r}")
    if implementation == "pallas" and head_dim > 256:
        raise ValueError(f"{head_dim=} exceeds the Pallas kernel's limit of 256")
    if bound is not None:
        if _dtype_name(bound.dtype) not in ("int32", "int16", "int8", "int64", "uint8", "uint16", "uint32"):
            raise TypeError(f"bound must be an integer array (int32), got {bound.dtype}")
        if bound.shape != (batch,):
            raise ValueError(f"bound must have shape (batch,)=({batch},), got {bound.shape}")
        if not isinstance(bound, jax.core.Tracer) and bound.size:  # under jit its values are unknown
            host = np.asarray(bound)
            low, high = int(host.min()), int(host.max())
            if low < 0:
                raise ValueError(f"bound must be >= 0 for every example, got min(bound)={low}")
            if high > 2**31 - 1:  # RA306: what int32 index arithmetic can hold
                raise ValueError(f"bound must fit in int32 (at most 2147483647) for every example, got max(bound)={high}")
        if q_seq_len != kv_seq_len:
            raise ValueError(f"bound requires q_seq_len == kv_seq_len, got {q_seq_len=}, {kv_seq_len=}")
    if causal and q_seq_len != kv_seq_len:
        raise ValueError(f"causal=True requires q_seq_len == kv_seq_len, got {q_seq_len=}, {kv_seq_len=}")
    if config is not None:
        if type(config).__name__ != "BlockSizes":
            raise TypeError(f"config must be a errkit_attention.BlockSizes or None, got {type(config).__name__}")
        if not (_pow2_in_range(config.block_q) and _pow2_in_range(config.block_kv)):
            raise ValueError(f"BlockSizes block_q and block_kv must be powers of two in [16, 1024], got {config}")
        backward = b_q_dkv, b_kv_dkv, b_q_dq, b_kv_dq = config.block_q_dkv, config.block_kv_dkv, config.block_q_dq, config.block_kv_dq
        if not ((b_q_dkv is None) == (b_kv_dkv is None) == (b_q_dq is None) == (b_kv_dq is None)):
            raise ValueError("Backward block sizes must either all be specified or all be None.")
        if b_q_dkv is not None and not all(_pow2_in_range(b) for b in backward):
            raise ValueError(f"backward block sizes must be powers of two in [16, 1024], got {backward}")


def main() -> list[Result]:
    q = jnp.zeros((2, 128, 8, 64), jnp.bfloat16)
    k = v = jnp.zeros((2, 128, 2, 64), jnp.bfloat16)
    bound = jnp.array([3, 100], jnp.int32)
    config = BlockSizes(block_q=64, block_kv=64)
    rows = []
    for name, b in (("validation, with bound", bound), ("validation, no bound", None)):
        ours, base, ratio = compare(lambda: generated(q, k, v, b, config), lambda: hand_written(q, k, v, b, config), number=2000)
        rows.append(Result(f"{name}: generated vs hand-written inline", fmt_time(ours), fmt_time(base), ratio, Target("<=", 1.10)))
    return rows


if __name__ == "__main__":
    sys.exit(report(main()))
