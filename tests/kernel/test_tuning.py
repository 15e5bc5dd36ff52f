"""errkit_attention/tuning.py's table reaches the kernels, and errkit_attention/triton_compile.py reads what it should.

Fast: no Triton compile here (tests/kernel/test_compile.py compiles every row, marked slow).
"""

from __future__ import annotations

import itertools
import pathlib
import re

import jax
import jax.numpy as jnp
import pytest

from errkit_attention import BlockSizes, ranker_attention, triton_compile, tuning

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_table_has_a_row_for_every_cell():
    rows = [line.split("#")[0].split()[:4] for line in tuning._ROWS.strip().splitlines()]
    rows = [tuple(r) for r in rows if r]
    assert len(rows) == len(set(rows)), "a cell written twice"
    # every cell: a forward row, and a fused backward's row ("bwd") or the two of a split one
    for cell in itertools.product(tuning.ARCHES, tuning.HEAD_DIMS, tuning.DTYPES):
        have = {key[3] for key in tuning.TABLE if key[:3] == cell}
        assert have in ({"fwd", tuning.FUSED}, {"fwd", *tuning.PASSES}), (cell, have)
        assert tuning.passes(*cell) == ("fwd", tuning.FUSED) if tuning.fused(*cell) else tuning.PASSES
    assert {key[:3] for key in tuning.TABLE} == set(
        itertools.product(tuning.ARCHES, tuning.HEAD_DIMS, tuning.DTYPES))
    for row in tuning.TABLE.values():
        for block in (row.block_q, row.block_kv):
            assert block >= 16 and block & (block - 1) == 0, row
        assert row.num_warps in (1, 2, 4, 8, 16) and row.num_stages >= 1, row


@pytest.mark.parametrize("head_dim,padded", [(64, 64), (80, 128), (96, 128), (128, 128),
                                             (256, 256), (48, 64), (16, 64), (200, 256)])
def test_head_dims_take_the_row_of_their_padded_size(head_dim, padded):
    for arch, dtype in itertools.product(tuning.ARCHES, tuning.DTYPES):
        for pass_ in tuning.passes(arch, padded, dtype):
            assert tuning.passes(arch, head_dim, dtype) == tuning.passes(arch, padded, dtype)
            assert tuning.launch(arch, head_dim, dtype, pass_) == tuning.TABLE[
                (arch, padded, dtype, pass_)]


def test_architectures():
    assert tuning.arch_of("9.0") == "sm_90a" and tuning.arch_of("10.0") == "sm_90a"
    assert tuning.arch_of("8.0") == "sm_80"
    assert jax.default_backend() == "cpu"
    assert tuning.current_arch() == tuning.DEFAULT_ARCH == "sm_90a"
    with tuning.target("sm_80"):
        assert tuning.current_arch() == "sm_80"
    assert tuning.current_arch() == "sm_90a"
    with tuning.target("tpu"):
        assert tuning.current_arch() == "tpu"
    # A TPU takes its own rows (tiles only; head_dim 80 the 128 rows; float16 float32's: it
    # computes in float32 there, errkit_attention/pallas_tpu.py compute_dtype).
    def rows(dtype):
        fwd, dq, dkdv = (tuning.TPU_TABLE[(128, dtype, p)] for p in tuning.PASSES)
        return BlockSizes(block_q=fwd[0], block_kv=fwd[1], block_q_dkv=dkdv[0],
                          block_kv_dkv=dkdv[1], block_q_dq=dq[0], block_kv_dq=dq[1])

    assert tuning.block_sizes("tpu", 128, "bfloat16") == rows("bfloat16")
    assert tuning.block_sizes("tpu", 80, "bfloat16") == rows("bfloat16")
    assert tuning.block_sizes("tpu", 80, "float16") == rows("float32")
    assert set(tuning.TPU_TABLE) == {
        (d, t, p) for d in tuning.HEAD_DIMS for t in ("bfloat16", "float32") for p in tuning.PASSES}
    # Any other name (the CPU's interpret mode) keeps the BlockSizes defaults.
    assert tuning.block_sizes("cpu", 128, "bfloat16") == BlockSizes(
        block_q=128, block_kv=128, block_q_dkv=128, block_kv_dkv=128, block_q_dq=128,
        block_kv_dq=128)


def _calls(arch, dtype, head_dim, config=None, seq=1000):
    q = jax.ShapeDtypeStruct((1, seq, 4, head_dim), jnp.dtype(dtype))
    k = jax.ShapeDtypeStruct((1, seq, 2, head_dim), jnp.dtype(dtype))

    def loss(q, k, v):
        return ranker_attention(q, k, v, causal=True, config=config,
                                implementation="pallas").astype(jnp.float32).sum()

    with tuning.target(arch), tuning.forward_kernel("triton"):  # (sm_90a: not Mosaic GPU's)
        lowered = triton_compile.lower_for_cuda(jax.grad(loss, argnums=(0, 1, 2)), q, k, k)
    return triton_compile.triton_calls(lowered)


@pytest.mark.parametrize("arch,dtype,head_dim", [("sm_90a", "bfloat16", 128),
                                                 ("sm_80", "float32", 256),
                                                 ("sm_80", "float16", 80)])
def test_the_lowered_kernels_carry_the_rows(arch, dtype, head_dim):
    """The custom calls hold the row's num_warps / num_stages, and their grids its tiles."""
    seq = 1024
    calls = _calls(arch, dtype, head_dim, seq=seq)
    passes = tuning.passes(arch, head_dim, dtype)
    assert [c.name for c in calls] == [f"ranker_attention_{p}" for p in passes]
    masked = head_dim != tuning.padded_head_dim(head_dim)  # 80 in 128-wide tiles
    q_blocks = [tuning.launch(arch, head_dim, dtype, p, masked).block_q for p in passes
                if p in ("fwd", "dq")]  # the tiles that stack query heads
    for call, pass_ in zip(calls, passes):
        row = tuning.launch(arch, head_dim, dtype, pass_, masked)
        assert (call.num_warps, call.num_stages) == (row.num_warps, row.num_stages)
        grid = _grid(pass_, row.block_q, row.block_kv, seq, min_q_block=min(q_blocks))
        assert call.grid == grid, (call.grid, row)


@pytest.mark.parametrize("seq,masked", [(1024, False), (4096, False), (1000, True), (1040, True)])
def test_a_call_with_a_partial_last_block_takes_the_masked_launch(seq, masked):
    """sm_80, bfloat16, head_dim 128: the forward's row pipelines 3 stages; with masked tiles
    (1000 and 1040 are not a multiple of its 64-row blocks) it spills, and its masked launch has 1."""
    calls = _calls("sm_80", "bfloat16", 128, seq=seq)
    whole = tuning.launch("sm_80", 128, "bfloat16", "fwd")
    partial = tuning.launch("sm_80", 128, "bfloat16", "fwd", masked=True)
    assert whole.num_stages > partial.num_stages  # a cell whose two launches differ, or the check is vacuous
    assert calls[0].num_stages == (partial if masked else whole).num_stages


def _grid(pass_, block_q, block_kv, seq, min_q_block):
    """CUDA's (x, y, z) of a kernel of _calls (4 query heads over 2 kv heads, batch 1): the grid
    (tiles, batch x heads), the tile axis first (CUDA's x, the fastest), z unused; the forward and dQ stack the group's 2 query heads
    in a tile when it keeps 16 rows of each (errkit_attention/pallas_attention.py _pack), so their tiles hold
    block_q / 2 rows of each head; dK/dV (or the fused backward) run one program per kv head."""
    if pass_ in ("dkdv", tuning.FUSED):
        return (seq // block_kv, 2, 1)
    pack = 2 if min_q_block >= 32 else 1
    return (seq // (block_q // pack), 4 // pack, 1)


def test_an_explicit_config_replaces_the_tiles_not_the_launch_parameters():
    config = BlockSizes(block_q=32, block_kv=32)
    calls = _calls("sm_90a", "bfloat16", 64, config=config, seq=1024)
    for call, pass_ in zip(calls, tuning.passes("sm_90a", 64, "bfloat16")):
        row = tuning.launch("sm_90a", 64, "bfloat16", pass_)
        assert (call.num_warps, call.num_stages) == (row.num_warps, row.num_stages)
        assert call.grid == _grid(pass_, 32, 32, 1024, min_q_block=32), call.grid


def test_backward_kernel_forces_the_split_backward():
    """tuning.backward_kernel("split") (the GPU benchmark's comparison) lowers a fused cell's
    backward as the dQ and dK/dV kernels, with the launches tuning.launch falls back to: dQ the
    forward row's, dK/dV the fused row's; the table's choice is back outside the context."""
    assert tuning.fused("sm_90a", 128, "bfloat16")  # a fused cell, or the check is vacuous
    with tuning.backward_kernel("split"):
        calls = _calls("sm_90a", "bfloat16", 128, seq=1024)
    assert [c.name for c in calls] == [f"ranker_attention_{p}" for p in tuning.PASSES]
    fwd, bwd = (tuning.launch("sm_90a", 128, "bfloat16", p) for p in ("fwd", tuning.FUSED))
    assert [(c.num_warps, c.num_stages) for c in calls] == [
        (fwd.num_warps, fwd.num_stages), (fwd.num_warps, fwd.num_stages),
        (bwd.num_warps, bwd.num_stages)]
    assert [c.name for c in _calls("sm_90a", "bfloat16", 128, seq=1024)] == [
        "ranker_attention_fwd", "ranker_attention_bwd"]


def test_the_pinned_triton_is_the_extra():
    """pyproject.toml's gpu-compile extra, and the test extra the README's test command installs, pin
    the release errkit_attention/triton_compile.py reads."""
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^gpu-compile = \["triton==([\d.]+)"\]$', text, re.M).group(1) == \
        triton_compile.TRITON_VERSION
    test_extra = text.split("\ntest = [", 1)[1].split("\n]", 1)[0]
    assert re.search(r'"triton==([\d.]+);', test_extra).group(1) == triton_compile.TRITON_VERSION


PTXAS_LOG = """\
ptxas info    : 11 bytes gmem, 8 bytes cmem[4]
ptxas info    : Compiling entry function 'ranker_attention_dq' for 'sm_80'
ptxas info    : Function properties for ranker_attention_dq
    280 bytes stack frame, 664 bytes spill stores, 520 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 280 bytes cumulative stack size, 424 bytes cmem[0]
"""


def test_ptxas_reports_are_read():
    assert triton_compile.parse_ptxas(PTXAS_LOG) == dict(
        registers=255, stack=280, spill_stores=664, spill_loads=520, smem=0)
    log = PTXAS_LOG.replace("used 1 barriers,", "used 1 barriers, 1024 bytes smem,")
    assert triton_compile.parse_ptxas(log)["smem"] == 1024
    assert triton_compile.parse_ptxas("ptxas info    : 11 bytes gmem\n") is None
    silent = triton_compile.Resources("k", "sm_80", 4, 2, 0, -1, -1, -1, -1, "")
    assert "no resource report" in silent.problems()[0]


def test_what_does_not_fit_is_told():
    def used(target, shared, spills):
        return triton_compile.Resources("k", target, 8, 3, shared, 200, spills, 0, 0, "")

    assert triton_compile.TARGETS["sm_90a"].shared_per_cta == 232_448
    assert triton_compile.TARGETS["sm_80"].shared_per_cta == 166_912
    assert not used("sm_90a", 232_448, 0).problems()
    assert used("sm_90a", 232_449, 0).problems()
    assert used("sm_80", 166_913, 0).problems()
    assert "spills" in used("sm_80", 1024, 8).problems()[0]


def test_tpu_defaults_tile_the_benchmark_shape():
    """On a TPU host (tuning.target("tpu")) the 16-bit head_dim 128 rows give 1024 x 1024 tiles,
    and a causal call without a bound walks the compacted grid (errkit_attention/pallas_tpu.py): at B=1,
    S=4096, Hq=4, Hk=2 the forward's grid is (1, 4, 10), one step per needed tile (1 + 2 + 3 + 4),
    40 steps (the rectangle of these tiles: 64; 512 x 1024 tiles before issue 49: 128; 128 x 128
    tiles: 4,096), and forward+backward 120 (dK/dV: (1, 2, 10, 2), its kv heads' query groups)."""
    from benchmarks.kernel_tpu import grid_steps, pallas_grids

    q = jax.ShapeDtypeStruct((1, 4096, 4, 128), jnp.bfloat16)
    k = jax.ShapeDtypeStruct((1, 4096, 2, 128), jnp.bfloat16)

    def f(q, k, v):
        return ranker_attention(q, k, v, causal=True, implementation="pallas")

    def both(q, k, v):
        out, pullback = jax.vjp(f, q, k, v)
        return pullback(out)

    def ours(name):
        return name.endswith("_tpu")

    with tuning.target(tuning.TPU):
        assert pallas_grids(f, q, k, k, keep=ours) == [("ranker_attention_fwd_tpu", (1, 4, 10))]
        assert pallas_grids(both, q, k, k, keep=ours) == [
            ("ranker_attention_fwd_tpu", (1, 4, 10)), ("ranker_attention_dq_tpu", (1, 4, 10)),
            ("ranker_attention_dkdv_tpu", (1, 2, 10, 2))]
        assert grid_steps(pallas_grids(both, q, k, k, keep=ours)) == 3 * 40
