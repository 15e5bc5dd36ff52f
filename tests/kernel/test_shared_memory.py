"""RA214: an explicit config whose tiles cannot fit a GPU's shared memory is refused when traced for
that GPU (errkit_attention/shared_memory.py), never the tiles the table proves, and only when a GPU is the
target; the lower bound it uses stays below what ptxas measured for every kernel compiled so far
(errkit_attention/compile_resources.md; tests/kernel/test_compile.py holds it to every kernel it compiles)."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import errkit_attention
from errkit_attention import shared_memory, triton_compile, tuning

RESOURCES = Path(__file__).resolve().parents[2] / "errkit_attention" / "compile_resources.md"
TILES = re.compile(r"(\d+)x(\d+), (\d+)/(\d+)")


def measured_kernels() -> list[tuple]:
    """(kernel, head_dim, dtype, target, block_q, block_kv, num_stages, shared bytes) of every
    before / after figure in errkit_attention/compile_resources.md's tables."""
    found = []
    for line in RESOURCES.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 13 and cells[0].isdigit():  # head_dim | dtype | target | kernel | tiles | shared | ...
            figures = [(cells[3], cells[4], cells[5]), (cells[8], cells[9], cells[10])]
            head_dim, dtype, target = int(cells[0]), cells[1], cells[2]
        elif len(cells) == 12 and cells[0] in ("fwd", "dq", "dkdv", "bwd"):  # kernel | head_dim | dtype | target | ...
            figures = [(cells[0], cells[4], cells[5]), (cells[0], cells[8], cells[9])]
            head_dim, dtype, target = int(cells[1]), cells[2], cells[3]
        else:
            continue
        for name, tiles, shared in figures:
            m = TILES.fullmatch(tiles)
            if m and shared.replace(",", "").isdigit():
                block_q, block_kv, _, stages = map(int, m.groups())
                found.append((name, head_dim, dtype, target, block_q, block_kv, stages,
                              int(shared.replace(",", ""))))
    return found


def test_the_bound_is_below_every_measured_kernel():
    kernels = measured_kernels()
    assert len(kernels) > 200 and {k[0] for k in kernels} == {"fwd", "dq", "dkdv", "bwd"}
    over = [k for k in kernels if shared_memory.least_bytes(k[0], k[1], k[2], k[4], k[5], k[6]) > k[7]]
    assert not over


def test_the_tables_tiles_are_never_refused():
    for masked in (False, True):
        for (arch, head_dim, dtype, pass_), _ in tuning.TABLE.items():
            if arch not in tuning.ARCHES:
                continue
            row = tuning.launch(arch, head_dim, dtype, pass_, masked)
            needed = shared_memory.least_bytes(pass_, head_dim, dtype, row.block_q, row.block_kv, row.num_stages)
            assert needed <= triton_compile.TARGETS[arch].shared_per_cta, (arch, head_dim, dtype, pass_, row)


def _traced(config, *, arch: str | None = "sm_90a", grad: bool = False, head_dim: int = 128, seq: int = 1024):
    shapes = [jax.ShapeDtypeStruct((1, seq, 2, head_dim), jnp.bfloat16)] * 3

    def f(q, k, v):
        return errkit_attention.ranker_attention(q, k, v, config=config, implementation="pallas")

    if grad:
        f = jax.grad(lambda q, k, v, f=f: f(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))
    if arch is None:
        return jax.jit(f).trace(*shapes)
    with tuning.target(arch):
        return jax.jit(f).trace(*shapes)


@pytest.mark.parametrize("arch", tuning.ARCHES)
def test_tiles_past_the_limit_are_refused_when_traced_for_a_gpu(arch):
    with pytest.raises(ValueError) as caught:
        _traced(errkit_attention.BlockSizes(block_q=512, block_kv=1024), arch=arch)
    assert caught.value.code == "RA214"
    row = tuning.launch(arch, 128, "bfloat16", "fwd")
    assert caught.value.params["fit"] == f"(block_q={row.block_q}, block_kv={row.block_kv})"
    assert caught.value.params["available"] == triton_compile.TARGETS[arch].shared_per_cta
    # the suggested tiles are traced without a complaint
    _traced(errkit_attention.BlockSizes(block_q=row.block_q, block_kv=row.block_kv), arch=arch)


def test_backward_tiles_are_checked_under_grad_only():
    config = errkit_attention.BlockSizes(block_q=128, block_kv=64, block_q_dkv=512, block_kv_dkv=64,
                               block_q_dq=128, block_kv_dq=64)
    _traced(config)  # the forward alone runs no backward kernel
    with pytest.raises(ValueError) as caught:
        _traced(config, grad=True)
    assert caught.value.code == "RA214" and caught.value.params["kernel_pass"] == "backward"


def test_tiles_clipped_to_the_sequence_are_what_is_checked():
    _traced(errkit_attention.BlockSizes(block_q=1024, block_kv=1024), seq=128)


def test_no_gpu_target_no_check():
    """On a CPU host without errkit_attention.tuning.target the call runs in interpret mode: nothing to fit."""
    if jax.default_backend() != "cpu":
        pytest.skip("on a GPU host every call targets the GPU")
    _traced(errkit_attention.BlockSizes(block_q=512, block_kv=1024), arch=None)


def test_a_trace_without_a_target_is_not_reused_for_one():
    """errkit_attention/attention.py's jitted dispatch caches traces by its static arguments: the one made
    on the CPU without a target (no check) must not answer the same call traced for a GPU."""
    if jax.default_backend() != "cpu":
        pytest.skip("on a GPU host every call targets the GPU")
    q = k = v = jnp.zeros((1, 1024, 2, 128), jnp.bfloat16)
    config = errkit_attention.BlockSizes(block_q=512, block_kv=1024)
    call = jax.jit(lambda q, k, v: errkit_attention.ranker_attention(q, k, v, config=config, implementation="pallas"))
    call.trace(q, k, v)
    with tuning.target("sm_90a"), pytest.raises(ValueError) as caught:
        jax.jit(lambda q, k, v: errkit_attention.ranker_attention(q, k, v, config=config, implementation="pallas")).trace(q, k, v)
    assert caught.value.code == "RA214"
