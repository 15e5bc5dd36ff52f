"""Launch configurations of the Triton kernels: tiles, num_warps and num_stages per (architecture,
head_dim, dtype, pass), each proven to fit its target by the compile check.

A row of TABLE is what the kernel of one pass (``fwd``: the forward, with or without the
log-sum-exp; ``bwd``: the fused backward, FlashAttention-2's, dK/dV with dQ added atomically; or,
where that does not fit, the split backward's ``dq`` and ``dkdv``) uses on one architecture for
one padded head_dim, the width of its tiles (64; 128, which serves 80 and 96 too, masked past
head_dim; 256) and one dtype, when ranker_attention is called with ``config=None``. A cell
(architecture, head_dim, dtype) has a ``fwd`` row and either a ``bwd`` row or ``dq`` and
``dkdv`` rows: the backward it runs (``fused``, ``passes``).
``block_q`` / ``block_kv`` are that pass's BlockSizes fields (for ``dkdv`` and ``bwd``,
``block_kv`` is the program's own key tile and ``block_q`` the query tile it loops over, the
BlockSizes' block_kv_dkv and block_q_dkv; for ``fwd`` and ``dq`` the other way round). An
explicit ``config`` replaces the tiles, not the num_warps / num_stages.

tests/kernel/test_compile.py lowers the public API for CUDA and compiles every kernel with
Triton for both targets with these parameters (errkit_attention/triton_compile.py): each row holds on its
target's per-CTA shared memory and spills no register. The figures after each row are what that
check measured (shared memory bytes per CTA, registers per thread) for the heaviest variant
(bound + causal, tanh cap, GQA, sequences that are not a multiple of the tile); re-measure with
``python benchmarks/bench_kernel.py --compile``.

Which architecture: that of the first local GPU when there is one (compute capability 9.0 and up
take the sm_90a rows, 8.x the sm_80 ones: 8.6 / 8.9 have 99 KiB per CTA, not 163, and are not
proven), the TPU rows (``TPU_TABLE``, tiles only) on a TPU host, and sm_90a otherwise: what jax 0.10's
Triton lowering itself assumes when it lowers for CUDA without a GPU (compute capability 9.0).
``target(arch)`` overrides the choice for the functions traced inside it (the compile check
lowers for sm_80 that way).

Which forward kernel on a CUDA GPU (``gpu_forward``): on Hopper (sm_90a), for bfloat16 / float16
inputs at head_dim 64, 128 or 256 whose sequence lengths are multiples of 8, with the default
tiles (``config=None``), the Mosaic GPU kernel of errkit_attention/mosaic_gpu.py (its own tiles, CONFIGS
there); Triton (this table) for everything else: float32, other head dims, other lengths (Mosaic
GPU's TMA copies into swizzled tiles of 8 rows refuse them), sm_80, an explicit ``config``
(whose tiles are Triton's), ROCm. The backward is Triton's either way. ``forward_kernel("triton")`` forces Triton for the functions
traced inside it (the Triton lowering and compile checks), ``forward_kernel("mosaic_gpu")`` the
Mosaic GPU kernel wherever it can run (16-bit, head_dim 64 / 128 / 256, lengths multiples of 8),
whatever the target and config.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses

from errkit_attention.config import BlockSizes

ARCHES = ("sm_90a", "sm_80")
DEFAULT_ARCH = "sm_90a"
TPU = "tpu"
PASSES = ("fwd", "dq", "dkdv")  # the forward, and the two kernels of a split backward
FUSED = "bwd"  # the fused backward's one kernel (dQ by atomic adds in the dK/dV pass)
DTYPES = ("bfloat16", "float16", "float32")
HEAD_DIMS = (64, 128, 256)  # padded head_dim: the next power of two >= 16


@dataclasses.dataclass(frozen=True)
class Launch:
    block_q: int
    block_kv: int
    num_warps: int
    num_stages: int


# How the rows were chosen: for each cell, candidates from the largest tiles down (fwd / dq: 128 x 64,
# 64 x 64, 64 x 32, 32 x 32, 32 x 16; dkdv: 64 x 64 own keys down to 16 x 32; bwd: 64 x 64, 32 x 64,
# 16 x 64, 32 x 32, 16 x 32, 16 x 16), 8 or 4 warps, 3 stages down to 1; the first that fits (no
# spill, within the CTA's shared memory) is the row. The float16 rows are bfloat16's (their
# figures are bfloat16's; the check compiles both). The fused backward fits every cell of both
# architectures, so no cell keeps the split one (its dq / dkdv rows, before: errkit_attention/compile_resources.md).
# A call whose tiles are all whole (every sequence a multiple of its blocks, head_dim a power of
# two) takes the row; a call with masked tiles (a partial last block, or head_dim 80 / 96 in
# 128-wide tiles), the row's "masked" launch where it names one: the masked loads / stores cost
# registers, and in these cells the row's launch spilled with them (the kernels stopped padding
# q, k, v, issue 24), so the masked launch is the first candidate down the list that fits every
# masked case of tests/kernel/test_compile.py (S=1000; head_dim 80 / 96 for the 128 rows), while
# the whole-tile launch keeps its pipelining (the check compiles those cells at S=1024 too).
# arch   head_dim dtype    pass  block_q block_kv warps stages  measured: shared B, registers
_ROWS = """
sm_90a    64  bfloat16  fwd    128   64  8  3   #  65,536 B 150 regs
sm_90a    64  bfloat16  bwd    64   64  8  1   #  40,960 B 247 regs
sm_90a    64  float16   fwd    128   64  8  3   #  65,536 B 150 regs  (bfloat16's)
sm_90a    64  float16   bwd    64   64  8  1   #  40,960 B 247 regs  (bfloat16's)
sm_90a    64  float32   fwd    128   64  8  3   # 131,072 B 180 regs
sm_90a    64  float32   bwd    64   64  8  1  masked   32   64  8  3  # whole: 114,688 B 255 regs; masked:  90,624 B 232 regs
sm_90a   128  bfloat16  fwd    128   64  8  3   # 131,072 B 200 regs
sm_90a   128  bfloat16  bwd    32   64  8  3  masked   32   64  8  1  # whole:  90,624 B 205 regs; masked:  81,920 B 182 regs
sm_90a   128  float16   fwd    128   64  8  3   # 131,072 B 200 regs  (bfloat16's)
sm_90a   128  float16   bwd    32   64  8  3  masked   32   64  8  1  # whole:  90,624 B 205 regs; masked:  81,920 B 182 regs  (bfloat16's)
sm_90a   128  float32   fwd    128   64  8  2   # 196,608 B 255 regs
sm_90a   128  float32   bwd    32   64  8  1   # 163,840 B 176 regs
sm_90a   256  bfloat16  fwd    128   64  8  2  pack 1  # 196,608 B 255 regs
sm_90a   256  bfloat16  bwd    16   64  8  1   # 131,072 B 238 regs
sm_90a   256  float16   fwd    128   64  8  2  pack 1  # 196,608 B 255 regs  (bfloat16's)
sm_90a   256  float16   bwd    16   64  8  1   # 131,072 B 238 regs  (bfloat16's)
sm_90a   256  float32   fwd     64   32  8  2  pack 1  # 196,608 B 255 regs
sm_90a   256  float32   bwd    32   32  8  3   # 229,888 B 178 regs
sm_80     64  bfloat16  fwd    128   64  8  3   #  49,152 B 160 regs
sm_80     64  bfloat16  bwd    32   32  8  3  masked   32   32  8  2  # whole:  39,424 B 187 regs; masked:  30,976 B 227 regs
sm_80     64  float16   fwd    128   64  8  3   #  49,152 B 160 regs  (bfloat16's)
sm_80     64  float16   bwd    32   32  8  3  masked   32   32  8  2  # whole:  39,424 B 187 regs; masked:  30,976 B 227 regs  (bfloat16's)
sm_80      64  float32   fwd   128  64  8  3  masked   64   64  8  2  # whole:  98,304 B 255 regs; masked:  49,152 B 255 regs
sm_80     64  float32   bwd    16   64  8  3  masked   32   32  8  1  # whole:  65,792 B 255 regs; masked:  57,344 B 218 regs
sm_80     128  bfloat16  fwd   64   64  4  3  masked   64   64  4  1  # whole:  90,112 B 240 regs; masked:  40,960 B 243 regs
sm_80    128  bfloat16  bwd    32   64  8  2  masked   32   64  8  1  # whole:  86,272 B 230 regs; masked:  77,824 B 239 regs
sm_80     128  float16   fwd   64   64  4  3  masked   64   64  4  1  # whole:  90,112 B 240 regs; masked:  40,960 B 243 regs  (bfloat16's)
sm_80    128  float16   bwd    32   64  8  2  masked   32   64  8  1  # whole:  86,272 B 230 regs; masked:  77,824 B 239 regs  (bfloat16's)
sm_80    128  float32   fwd     64   64  4  2   # 115,200 B 255 regs
sm_80    128  float32   bwd    32   64  8  3   # 164,352 B 243 regs
sm_80    256  bfloat16  fwd     64   32  8  2   #  69,632 B 200 regs
sm_80    256  bfloat16  bwd    32   32  8  1   # 100,352 B 220 regs
sm_80    256  float16   fwd     64   32  8  2   #  69,632 B 200 regs  (bfloat16's)
sm_80    256  float16   bwd    32   32  8  1   # 100,352 B 220 regs  (bfloat16's)
sm_80    256  float32   fwd     32   32  4  2   # 102,912 B 202 regs
sm_80    256  float32   bwd    16   32  8  3   # 164,096 B 249 regs
"""


def _parse(rows: str) -> tuple[dict, dict, dict]:
    """(TABLE, MASKED, PACK): a row's launch; the launch of its calls with masked tiles where the
    row names one ("masked b_q b_kv warps stages"), else the row's own; and, for a forward row
    that names one ("pack n"), the most query heads its tiles may stack (GQA: see ``max_pack``)."""
    table, masked, pack = {}, {}, {}
    for line in rows.strip().splitlines():
        line = line.split("#")[0].split()
        if not line:
            continue
        arch, head_dim, dtype, pass_, *numbers = line
        key = (arch, int(head_dim), dtype, pass_)
        table[key] = Launch(*map(int, numbers[:4]))
        options = numbers[4:]
        masked[key] = table[key]
        if options[:1] == ["masked"]:
            masked[key], options = Launch(*map(int, options[1:5])), options[5:]
        if options[:1] == ["pack"]:
            pack[key[:3]] = int(options[1])
    return table, masked, pack


TABLE, MASKED, PACK = _parse(_ROWS)

# Any other platform (the CPU's interpret mode): the BlockSizes defaults; Triton's parameters are
# then never read.
_PLAIN = Launch(BlockSizes.block_q, BlockSizes.block_kv, 4, 3)

# TPU (Mosaic, errkit_attention/pallas_tpu.py): tiles only, per padded head_dim, 16-bit or float32 (float16
# computes in float32 there: its rows), and pass. Every row measured on a TPU v5e (jax 0.10.2,
# libtpu 0.0.42.1), each pass timed alone with its XLA transposes (benchmarks/kernel_tpu_profile.py,
# every pass at the same tiles; for dkdv, block_q is the query tile it streams), in ms
# (fwd / dq / dkdv):
# - bfloat16, D=128, B=4 S=4096 Hq=32 Hk=8, not causal: 1024 x 1024 9.65 / 11.20 / 14.12,
#   1024 x 512 9.62 / 11.74 / 14.74, 512 x 1024 9.94 / 11.77 / 14.80, 512 x 512 10.30 / 12.78 /
#   15.95, 256 x 1024 10.46 / 12.87 / 17.53 (the kernel before issue 49, at 512 x 1024: 10.84 /
#   12.54 / 15.61).
# - bfloat16, D=64, B=4 S=4096 H=16, causal: 1024 x 1024 4.58 / 4.96 / 6.35, 1024 x 512 4.66 /
#   5.15 / 6.38, 512 x 512 4.71 / 5.28 / 6.65, 512 x 1024 4.73 / 5.01 / 6.60, 256 x 1024 5.30 /
#   5.63 / 7.31.
# - bfloat16, D=256, B=4 S=2048 H=16, causal: 512 x 512 2.91 / 3.28 / 4.34 (the one row measured
#   free of the run's compiles there; before issue 49 the table's unmeasured 256 x 512).
# - float32, B=2 S=2048 Hq=16 Hk=4, not causal: D=64 512 x 1024 1.55 / 1.49 / 1.81, 1024 x 512
#   1.56 / 1.46 / 1.84, 512 x 512 1.67 / 1.57 / 1.88, 256 x 1024 1.83 / 1.75 / 2.02, 256 x 512
#   2.06 / 1.90 / 2.23, 128 x 512 2.82 / 2.64 / 2.56; D=128 512 x 1024 1.62 / 1.63 / 1.91,
#   1024 x 512 1.64 / 1.61 / 1.96, 512 x 512 1.65 / 1.68 / 1.97, 256 x 512 1.97 / 1.94 / 2.33;
#   D=256 512 x 1024 2.20 / 2.45 / 2.99, 1024 x 512 2.24 / 2.46 / 2.92, 512 x 512 2.23 / 2.50 /
#   3.00, 256 x 512 2.34 / 2.61 / 3.15.
# head_dim dtype     pass  block_q block_kv
_TPU_ROWS = """
   64  bfloat16  fwd   1024  1024
   64  bfloat16  dq    1024  1024
   64  bfloat16  dkdv  1024  1024
  128  bfloat16  fwd   1024  1024
  128  bfloat16  dq    1024  1024
  128  bfloat16  dkdv  1024  1024
  256  bfloat16  fwd    512   512
  256  bfloat16  dq     512   512
  256  bfloat16  dkdv   512   512
   64  float32   fwd    512  1024
   64  float32   dq     512  1024
   64  float32   dkdv   512  1024
  128  float32   fwd    512  1024
  128  float32   dq     512  1024
  128  float32   dkdv   512  1024
  256  float32   fwd    512  1024
  256  float32   dq     512  1024
  256  float32   dkdv   512  1024
"""
TPU_TABLE = {(int(d), dtype, pass_): (int(bq), int(bkv))
             for d, dtype, pass_, bq, bkv in (line.split("#")[0].split()
                                             for line in _TPU_ROWS.strip().splitlines())}


def padded_head_dim(head_dim: int) -> int:
    return max(16, 1 << max(head_dim - 1, 0).bit_length())


def _cell(arch: str, head_dim: int, dtype) -> tuple[str, int, str]:
    """(arch, padded head_dim within HEAD_DIMS, dtype name) of a call."""
    dtype = getattr(dtype, "name", None) or str(dtype)
    if dtype not in DTYPES:  # float64 never reaches the Pallas path (validators); be safe
        dtype = "float32"
    return arch, min(max(padded_head_dim(head_dim), HEAD_DIMS[0]), HEAD_DIMS[-1]), dtype


def fused(arch: str, head_dim: int, dtype) -> bool:
    """Whether a call's backward is the fused kernel: its cell has a "bwd" row (every other
    cell has a "dq" and a "dkdv" row: the fused kernel did not fit there)."""
    return arch in ARCHES and (*_cell(arch, head_dim, dtype), FUSED) in TABLE


def max_pack(arch: str, head_dim: int, dtype) -> int | None:
    """The most query heads of one kv head a forward (or dQ) tile may stack (GQA,
    errkit_attention/pallas_attention.py ``_pack``), None for no limit but the tile's: the cell's forward
    row names one where stacking made its launch spill (and a smaller launch would load each
    key / value tile for fewer query rows than the unstacked tile does)."""
    return PACK.get(_cell(arch, head_dim, dtype)) if arch in ARCHES else None


def passes(arch: str, head_dim: int, dtype) -> tuple[str, ...]:
    """The kernels of a call's forward + backward, as named in the table: ("fwd", "bwd") with a
    fused backward, else ("fwd", "dq", "dkdv")."""
    return ("fwd", FUSED) if fused(arch, head_dim, dtype) else PASSES


def launch(arch: str, head_dim: int, dtype, pass_: str, masked: bool = False, *,
           fused: bool | None = None) -> Launch:
    """The row for a kernel; head_dim as the caller's (padded here), dtype a name or dtype;
    masked: the call has masked tiles (a partial last block, or head_dim below the tiles' width).
    pass_: one of PASSES or FUSED. fused (None: the table's choice): with a fused backward, "dq"
    and "dkdv" name its kernel's row. A backward the table does not choose for the cell (forced:
    ``backward_kernel``) takes the rows it has, unproven: the split dK/dV the fused kernel's, dQ
    the forward's (a query tile streaming keys too); the fused kernel the dK/dV's."""
    if arch not in ARCHES and arch != TPU:
        return _PLAIN
    cell = _cell(arch, head_dim, dtype)
    if arch == TPU:  # the Mosaic kernels: a split backward (dq, dkdv) whatever `fused`
        _, dp, dtype = cell
        pass_ = "dkdv" if pass_ == FUSED else pass_
        # float16 computes in float32 there (errkit_attention/pallas_tpu.py compute_dtype): its rows
        block_q, block_kv = TPU_TABLE[(dp, "float32" if dtype == "float16" else dtype, pass_)]
        return Launch(block_q, block_kv, _PLAIN.num_warps, _PLAIN.num_stages)
    if pass_ != "fwd":
        if fused is None:
            fused = (*cell, FUSED) in TABLE
        pass_ = FUSED if fused else pass_
        if (*cell, pass_) not in TABLE:
            pass_ = {"dq": "fwd", "dkdv": FUSED, FUSED: "dkdv"}[pass_]
    return (MASKED if masked else TABLE)[(*cell, pass_)]


def block_sizes(arch: str, head_dim: int, dtype, masked: bool = False, *,
                fused: bool | None = None) -> BlockSizes:
    """The default BlockSizes of a call (``config=None``) on an architecture; fused as for
    ``launch`` (a fused backward's tiles are block_q_dkv / block_kv_dkv; the dq ones repeat them,
    unused)."""
    fwd, dq, dkdv = (launch(arch, head_dim, dtype, p, masked, fused=fused) for p in PASSES)
    return BlockSizes(block_q=fwd.block_q, block_kv=fwd.block_kv,
                      block_q_dkv=dkdv.block_q, block_kv_dkv=dkdv.block_kv,
                      block_q_dq=dq.block_q, block_kv_dq=dq.block_kv)


_TARGET: contextvars.ContextVar[str | None] = contextvars.ContextVar("kernel_target", default=None)


@contextlib.contextmanager
def target(arch: str):
    """Calls traced inside pick their defaults for `arch`: one of ARCHES, TPU for the TPU rows,
    or any other name for the BlockSizes defaults."""
    token = _TARGET.set(arch)
    try:
        yield
    finally:
        _TARGET.reset(token)


FORWARDS = ("mosaic_gpu", "triton")
MOSAIC_GPU_ARCHES = ("sm_90a",)  # wgmma and TMA: Hopper
MOSAIC_GPU_HEAD_DIMS = (64, 128, 256)  # errkit_attention/mosaic_gpu.py CONFIGS
MOSAIC_GPU_DTYPES = ("bfloat16", "float16")  # wgmma's 16-bit operands
MOSAIC_GPU_SEQ_MULTIPLE = 8  # q_len and kv_len: rows of a TMA into (8, 64)-tiled shared memory

_FORWARD: contextvars.ContextVar[str | None] = contextvars.ContextVar("kernel_forward",
                                                                     default=None)


@contextlib.contextmanager
def forward_kernel(kind: str):
    """Calls traced inside take `kind` ("triton" or "mosaic_gpu", one of FORWARDS) for their
    forward on a CUDA GPU (see ``gpu_forward``); nested ``target()`` calls keep it."""
    token = _FORWARD.set(kind)
    try:
        yield
    finally:
        _FORWARD.reset(token)


def current_forward() -> str | None:
    """The forward kernel ``forward_kernel()`` forces now; None: each call's own choice."""
    return _FORWARD.get()


BACKWARDS = ("fused", "split")
_BACKWARD: contextvars.ContextVar[str | None] = contextvars.ContextVar("kernel_backward",
                                                                      default=None)


@contextlib.contextmanager
def backward_kernel(kind: str):
    """Calls traced inside take `kind` ("fused" or "split", one of BACKWARDS) for their Triton
    backward, whatever the table chooses for the cell (``fused``): the GPU benchmark's comparison
    of the two. The launch of a backward the table does not choose is unproven (``launch``)."""
    token = _BACKWARD.set(kind)
    try:
        yield
    finally:
        _BACKWARD.reset(token)


def current_backward() -> str | None:
    """The backward ``backward_kernel()`` forces now; None: the table's choice."""
    return _BACKWARD.get()


def gpu_forward(arch: str, head_dim: int, dtype, lengths: tuple[int, int], *,
                default_tiles: bool = True, forced: str | None = None) -> str:
    """"mosaic_gpu" or "triton": the kernel of a call's forward on a CUDA GPU (module docstring).
    lengths: (q_len, kv_len); default_tiles: the call takes the default tiles (config=None);
    forced: current_forward()."""
    dtype = getattr(dtype, "name", None) or str(dtype)
    if (forced == "triton" or dtype not in MOSAIC_GPU_DTYPES or head_dim not in MOSAIC_GPU_HEAD_DIMS
            or any(n % MOSAIC_GPU_SEQ_MULTIPLE for n in lengths)):
        return "triton"
    if forced == "mosaic_gpu" or (arch in MOSAIC_GPU_ARCHES and default_tiles):
        return "mosaic_gpu"
    return "triton"


def arch_of(compute_capability: str) -> str:
    """"9.0" -> "sm_90a", "8.0" -> "sm_80" (see the module docstring for the others)."""
    major = int(str(compute_capability).split(".")[0])
    return "sm_90a" if major >= 9 else "sm_80"


def gpu_targeted(arch: str | None) -> bool:
    """Whether the calls traced now target a CUDA GPU of `arch` (one of ARCHES): ``target()``
    chose it, or no target is chosen and jax's default backend is a GPU."""
    if arch not in ARCHES:
        return False
    if _TARGET.get() is not None:
        return True
    import jax

    return jax.default_backend() == "gpu"


def current_arch() -> str:
    """The architecture a call traced now picks its defaults for."""
    chosen = _TARGET.get()
    if chosen is not None:
        return chosen
    import jax

    backend = jax.default_backend()
    if backend == "gpu":
        try:
            capability = getattr(jax.local_devices(backend="gpu")[0], "compute_capability", "")
            return arch_of(capability)
        except (RuntimeError, ValueError):  # no GPU client after all; or not an NVIDIA
            return DEFAULT_ARCH  # "major.minor" (ROCm's "gfx90a"): the CUDA default
    if backend == "tpu":
        return TPU
    return DEFAULT_ARCH
