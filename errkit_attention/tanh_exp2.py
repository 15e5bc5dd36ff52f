"""The soft-cap's tanh from one exp2 (``tanh_exp2``) and its error bound, shared by the kernels
that take it: the Triton / interpret kernels (errkit_attention/pallas_attention.py) and the Mosaic GPU
forward (errkit_attention/mosaic_gpu.py), which import it from here rather than from each other.

Why: jnp.tanh lowers for CUDA to libdevice's __nv_tanhf, a range-split polynomial + exp per
element; one exp2 (__nv_exp2f, ex2.approx) and a division serve instead. Pallas'
plgpu.approx_tanh (PTX tanh.approx.f32) would be cheaper still, but its documented error is 2^-11
relative (cap * 5e-4 on a capped logit, ~1000x this one's), and inline PTX has no interpret-mode
rule: the CPU tests could not run the kernels. Limits: tests/kernel/test_tanh_exp2.py.
"""

from __future__ import annotations

import jax.numpy as jnp

_LOG2E = 1.4426950408889634  # log2(e)

TANH_EXP2_MAX_ABS_ERROR = 3e-7  # vs float64, ex2 and division at 2 ulp: tests/kernel/test_tanh_exp2.py


def tanh_exp2(x):
    """tanh(x), float32, from one exp2: sign(x) * (1 - t) / (1 + t), t = 2^(-2 |x| log2 e).

    t lies in [0, 1]: no overflow for any x (|x| > 44.4 gives t = 0, tanh = +-1 exactly, as
    float32's tanh is from |x| > 9.01); near 0, 1 - t cancels, the error stays absolute (a
    few 1e-8, well under TANH_EXP2_MAX_ABS_ERROR), which is what a capped logit
    (cap * tanh(s / cap)) needs.
    """
    t = jnp.exp2(jnp.abs(x) * (-2.0 * _LOG2E))
    y = (1.0 - t) / (1.0 + t)
    return jnp.where(x < 0, -y, y)
