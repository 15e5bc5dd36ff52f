"""Generated validation vs the same checks written inline by hand (the seed kernel's style).

Both run the full input validation of one ranker_attention call on the same jax arrays.
Target: ratio <= 1.10.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks._timing import Result, Target, compare, fmt_time, report  # noqa: E402
from kernel import BlockSizes, _validators  # noqa: E402


def generated(q, k, v, bound, config):
    _validators.validate_options("xla", None, 30.0, "tanh", False)
    _validators.validate_qkv(q, k, v, "xla")
    _validators.validate_mask(bound, False, q, k)
    _validators.validate_config(config, "xla")


def _pow2_in_range(b):
    return isinstance(b, int) and b > 0 and b & (b - 1) == 0 and 16 <= b <= 1024


def hand_written(q, k, v, bound, config, implementation="xla", sm_scale=None, cap=30.0, cap_method="tanh", causal=False):
    # The same conditions as the catalogue, inline, in the style of the seed kernel.
    if implementation is not None and implementation not in ("pallas", "xla"):
        raise ValueError(f"implementation must be 'pallas', 'xla' or None, got {implementation!r}")
    if sm_scale is not None and not (isinstance(sm_scale, (int, float)) and math.isfinite(sm_scale)):
        raise ValueError(f"sm_scale must be a finite number or None, got {sm_scale!r}")
    if cap is not None and not (isinstance(cap, (int, float)) and math.isfinite(cap) and cap > 0):
        raise ValueError(f"cap must be a positive finite number or None, got {cap!r}")
    if cap_method not in ("tanh", "soft_sign", "none"):
        raise ValueError(f"cap_method must be one of 'tanh', 'soft_sign', 'none', got {cap_method!r}")
    if type(causal) is not bool:
        raise TypeError(f"causal must be True or False, got a {type(causal).__name__}")
    for x in (q, k, v):
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError("q, k and v must be arrays")
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"q, k, and v should all be 4D, got: {q.ndim=}, {k.ndim=}, {v.ndim=}")
    if min(q.shape) <= 0 or min(k.shape) <= 0 or min(v.shape) <= 0:
        raise ValueError("empty dimension")
    batch, q_seq_len, num_q_heads, head_dim = q.shape
    _, kv_seq_len, num_kv_heads, _ = k.shape
    if k.shape[0] != batch or k.shape[3] != head_dim:
        raise ValueError(f"Expected {k.shape=} to match q")
    if v.shape != k.shape:
        raise ValueError(f"Expected {v.shape=} to be {k.shape}")
    if (dtype := q.dtype) != k.dtype or dtype != v.dtype:
        raise ValueError(f"q, k, and v should all have the same dtype, got: {q.dtype}, {k.dtype}, {v.dtype}")
    if num_q_heads % num_kv_heads:
        raise ValueError(f"{num_q_heads=} must be divisible by {num_kv_heads=}")
    if dtype.name not in ("float32", "bfloat16", "float16"):
        raise NotImplementedError(f"dtype {dtype} is not supported")
    if implementation == "pallas" and head_dim > 256:
        raise ValueError(f"{head_dim=} too large")
    if bound is not None:
        if bound.dtype.name not in ("int32", "int16", "int8", "int64", "uint8", "uint16", "uint32"):
            raise TypeError("bound must be an integer array")
        if tuple(bound.shape) != (batch,):
            raise ValueError(f"Expected bound to have shape ({batch},), got {bound.shape}")
        if int(np.asarray(bound).min()) < 0:
            raise ValueError("bound must be >= 0")
        if q_seq_len != kv_seq_len:
            raise ValueError("bound requires equal lengths")
    if causal and q_seq_len != kv_seq_len:
        raise ValueError("causal requires equal lengths")
    if config is not None:
        if type(config).__name__ != "BlockSizes":
            raise TypeError("config must be a BlockSizes")
        if not (_pow2_in_range(config.block_q) and _pow2_in_range(config.block_kv)):
            raise ValueError("block sizes")
        backward = (config.block_q_dkv, config.block_kv_dkv, config.block_q_dq, config.block_kv_dq)
        if len({b is None for b in backward}) != 1:
            raise ValueError("Backward block sizes must either all be specified or all be None.")
        if backward[0] is not None and not all(_pow2_in_range(b) for b in backward):
            raise ValueError("backward block sizes")


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
