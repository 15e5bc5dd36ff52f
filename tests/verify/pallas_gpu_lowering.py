"""Runners of the Pallas GPU lowering rules met by any kernel (not only the attention kernels): a
copy kernel `o_ref[...] = x_ref[...] * 2` over a (8, 3) grid, with the block shape the params say,
lowered for CUDA from the CPU (`jax.jit(f).trace(x).lower(lowering_platforms=("cuda",))`).

The array is the block tiled over the grid, so a changed block (a suggested value) gets an array it
divides: what the lowering checks is the block. A plain pallas_call goes to Mosaic GPU (RA831);
`compiler_params=plgpu.CompilerParams()` from jax.experimental.pallas.triton selects the Triton
backend (RA832). Neither compiler runs (no GPU): only the lowering's own rules are seen.
"""

from __future__ import annotations

import math
import re

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu_triton

from verify import register

GRID = (8, 3)


def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def lower_copy(block: tuple[int, int], **backend):
    """The copy kernel with this block, its array block * GRID, lowered for CUDA."""
    shape = (block[0] * GRID[0], block[1] * GRID[1])
    spec = pl.BlockSpec(tuple(block), lambda i, j: (i, j))
    f = pl.pallas_call(_copy, grid=GRID, in_specs=[spec], out_specs=spec,
                       out_shape=jax.ShapeDtypeStruct(shape, jnp.float32), **backend)
    return jax.jit(f).trace(jnp.zeros(shape, jnp.float32)).lower(lowering_platforms=("cuda",))


@register("RA831")
def mosaic_gpu_block(p: dict):
    """Mosaic GPU: the block's other dims from the memref (memref<8x100xf32, ...>: 8 rows), its last
    dim as given (a suggested value replaces it)."""
    dims = [int(d) for d in re.match(r"memref<((?:[0-9]+x)+)", p["memref"]).group(1).split("x") if d]
    rows = math.prod(dims[:-1])
    return lower_copy((rows, p["block_last_dim"]))


@register("RA832")
def triton_block(p: dict):
    """Pallas Triton: the block is the array_shape the message printed (a 2-d block)."""
    return lower_copy(tuple(p["array_shape"]), compiler_params=plgpu_triton.CompilerParams())
