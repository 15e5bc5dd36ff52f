"""Runner of Mosaic GPU's one-dtype rule for matrix multiplication (RA834): a Pallas kernel calling
`plgpu.wgmma` on two (64, 64) shared-memory blocks, tiled and swizzled the way wgmma reads them,
with the operands' dtypes the params say, lowered for CUDA from the CPU
(`jax.jit(f).trace(a, b).lower(lowering_platforms=("cuda",))`): tracing runs Pallas's check, the
lowering Mosaic GPU's own; no GPU is needed.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from verify import register

MLIR_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


def _kernel(a_ref, b_ref, o_ref):
    def scope(acc_ref):
        plgpu.wgmma(acc_ref, a_ref, b_ref)
        plgpu.wgmma_wait(0)
        return acc_ref[...]

    o_ref[...] = pl.run_scoped(scope, plgpu.ACC((64, 64), jnp.float32))


def _spec(dtype):
    return plgpu.BlockSpec((64, 64), lambda: (0, 0), transforms=(
        plgpu.TilingTransform((8, 128 // jnp.dtype(dtype).itemsize)), plgpu.SwizzleTransform(128)))


def lower_wgmma(lhs, rhs):
    a = jnp.zeros((64, 64), jnp.dtype(MLIR_NAMES.get(lhs, lhs)))
    b = jnp.zeros((64, 64), jnp.dtype(MLIR_NAMES.get(rhs, rhs)))
    f = pl.pallas_call(_kernel, in_specs=[_spec(a.dtype), _spec(b.dtype)], out_specs=pl.BlockSpec((64, 64), lambda: (0, 0)),
                       out_shape=jax.ShapeDtypeStruct((64, 64), jnp.float32))
    return jax.jit(f).trace(a, b).lower(lowering_platforms=("cuda",))


@register("RA834")
def wgmma_dtypes(p: dict):
    return lower_wgmma(p["lhs_dtype"], p["rhs_dtype"])
