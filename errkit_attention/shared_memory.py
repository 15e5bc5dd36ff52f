"""The least shared memory a Triton kernel of ranker attention needs for the tiles of a BlockSizes,
so that tiles that cannot fit a GPU are refused before compiling (RA214) instead of crashing in
Triton's compiler ("out of resource: shared memory").

A lower bound, not an estimate: each kernel loops over tiles of one operand pair (the forward and
the dQ kernel over key / value tiles, block_kv x head_dim each; the fused backward and the dK/dV
kernel over query / output-gradient tiles, block_q x head_dim each), and Triton's software
pipeline keeps at least ``max(1, num_stages - 1)`` buffers of that pair in shared memory. Every
other buffer (the resident tile, the probabilities, layout conversions) is left out: Triton
keeps some of them in registers or reuses their space. The bound is below what ptxas measured
for every kernel errkit_attention/compile_resources.md lists (tests/kernel/test_shared_memory.py) and every
kernel tests/kernel/test_compile.py compiles (when written: 638 kernels with the sweeps that
chose the rows, measured / bound 3.1x at the median, 8.5x at most), so it refuses only tiles that
are far too large (a TPU's 512 x 1024 tiles on a GPU, 256-row tiles at head_dim 256), and tiles
near the limit are still left to the compiler.
"""

from __future__ import annotations

from errkit_attention import tuning
from errkit_attention.triton_compile import TARGETS

# BlockSizes' fields of each kernel's tiles: (query tile, key tile)
FIELDS = {
    "fwd": ("block_q", "block_kv"),
    "dq": ("block_q_dq", "block_kv_dq"),
    "dkdv": ("block_q_dkv", "block_kv_dkv"),
    tuning.FUSED: ("block_q_dkv", "block_kv_dkv"),
}
NAMES = {"fwd": "forward", "dq": "dQ", "dkdv": "dK/dV", tuning.FUSED: "backward"}
ITEM_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def least_bytes(pass_: str, head_dim: int, dtype: str, block_q: int, block_kv: int,
                num_stages: int) -> int:
    """The shared memory (bytes per CTA) kernel `pass_` needs at least with these tiles."""
    width = tuning.padded_head_dim(head_dim)
    buffers = max(1, num_stages - 1)
    looped = block_kv if pass_ in ("fwd", "dq") else block_q
    return buffers * 2 * looped * width * ITEM_BYTES.get(dtype, 4)


def launch_params(arch: str, pass_: str, head_dim: int, dtype: str, tiles: tuple[int, int],
                  num_stages: int, fitting: tuple[int, int]) -> dict | None:
    """The params of errkit_attention/_validators.py's validate_launch (RA214) for one kernel on `arch`, None
    for an architecture without a Triton target. `fitting`: the tiles errkit_attention/tuning.py's table
    gives that kernel there (proven by tests/kernel/test_compile.py)."""
    target = TARGETS.get(arch)
    if target is None:
        return None
    needed = least_bytes(pass_, head_dim, dtype, *tiles, num_stages)
    q_field, kv_field = FIELDS[pass_]
    return {
        "kernel_pass": NAMES[pass_], "arch": arch, "head_dim": head_dim, "dtype": dtype,
        "num_stages": num_stages, "needed": needed, "available": target.shared_per_cta,
        "tiles": f"({q_field}={tiles[0]}, {kv_field}={tiles[1]})",
        "fit": f"({q_field}={fitting[0]}, {kv_field}={fitting[1]})",
    }
