"""The Triton kernels of a CUDA lowering, compiled by Triton's own compiler on a host without a GPU.

jax 0.10's Triton lowering (jax/_src/pallas/triton/pallas_call_registration.py) puts each
pallas_call into the lowered module as a ``__gpu$xla.gpu.triton`` custom call whose
``mhlo.backend_config`` dictionary holds the kernel as MLIR bytecode of the Triton dialect
(``ir``), with ``num_warps``, ``num_stages`` and the grid; XLA compiles that bytecode when the
module is compiled for a GPU. ``triton_calls`` reads those custom calls back out of a
``jax.stages.Lowered``; ``compile_call`` hands the bytecode, byte for byte, to the ``triton``
package's compiler for a target (every stage from TTIR on: TTGIR, LLVM IR, PTX, then the
ptxas its wheel ships, with ``-v``) under the call's own num_warps / num_stages, and returns the
resource use: the shared memory the kernel asks for at launch (Triton's metadata, plus any
static shared memory ptxas reports), registers, spill stores / loads and the stack frame, read
from ptxas' report.

Which Triton: TRITON_VERSION, the release whose Triton dialect reads jaxlib 0.10.2's bytecode
as written. Its header says "MLIR23.0.0git"; triton 3.7.1 and 3.8.0 are both built on LLVM
23.0.0git, 3.9.0 on 24.0.0git, and of the three only 3.8.0 parses the bytecode: 3.7.1 fails
("expected mlir::detail::DenseArrayAttrImpl<int32_t>, but got: 1 : i32"), 3.9.0 fails
("expected mlir::BoolAttr, but got: 1 : i32"). The textual form parses in all three, which
is why the check feeds the bytecode and not a re-printed text: a release that only reads the
text would compile an IR XLA is never given.

What XLA would do differs in one way: XLA runs its own copy of Triton's pass pipeline (its
pinned Triton commit, its pass options), so a figure here is Triton 3.8.0's for the same IR,
not necessarily XLA's to the byte.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io

import re
import tempfile

TRITON_VERSION = "3.8.0"
TRITON_CALL_TARGET = "__gpu$xla.gpu.triton"


@dataclasses.dataclass(frozen=True)
class Target:
    """A CUDA architecture the check compiles for, and what one CTA may use there."""

    name: str  # ptxas' --gpu-name
    capability: int  # triton.backends.compiler.GPUTarget's arch
    shared_per_cta: int  # bytes: cudaDevAttrMaxSharedMemoryPerBlockOptin


# The opt-in maximum of shared memory per block (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability"): 227 KiB on 9.0 (H100 / H200 report
# sharedMemPerBlockOptin = 232448, of 228 KiB per SM less 1 KiB reserved per block), 163 KiB on
# 8.0 (A100; 164 KiB per SM less the reserved 1 KiB).
TARGETS = {
    "sm_90a": Target("sm_90a", 90, 227 * 1024),
    "sm_80": Target("sm_80", 80, 163 * 1024),
}


@dataclasses.dataclass(frozen=True)
class TritonCall:
    """One pallas_call of a CUDA lowering, as XLA receives it."""

    name: str
    ir: bytes  # MLIR bytecode, Triton dialect
    num_warps: int
    num_stages: int
    grid: tuple[int, int, int]

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.ir).hexdigest()[:16]


def triton_calls(lowered) -> list[TritonCall]:
    """Every Triton custom call of a ``jax.stages.Lowered`` (lowered for "cuda"), in module
    order (a forward + backward lowering: the forward with residuals, dQ, dK/dV)."""
    from jax._src.lib.mlir import ir

    calls = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    if (inner.name == "stablehlo.custom_call"
                            and ir.StringAttr(inner.attributes["call_target_name"]).value
                            == TRITON_CALL_TARGET):
                        config = ir.DictAttr(inner.attributes["mhlo.backend_config"])

                        def number(key):
                            return ir.IntegerAttr(config[key]).value

                        calls.append(TritonCall(
                            name=ir.StringAttr(config["name"]).value,
                            ir=ir.StringAttr(config["ir"]).value_bytes,
                            num_warps=number("num_warps"), num_stages=number("num_stages"),
                            grid=(number("grid_x"), number("grid_y"), number("grid_z"))))
                    walk(inner)

    walk(lowered.compiler_ir("stablehlo").operation)
    return calls


@dataclasses.dataclass(frozen=True)
class Resources:
    """What one compiled kernel uses, for one target."""

    kernel: str
    target: str
    num_warps: int
    num_stages: int
    shared: int  # bytes per CTA: Triton's dynamic shared memory + ptxas' static smem
    registers: int  # per thread
    spill_stores: int  # bytes
    spill_loads: int  # bytes
    stack: int  # bytes of stack frame
    ptxas_log: str

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads

    def problems(self) -> list[str]:
        """Why the kernel does not fit its target: empty when it does."""
        limit = TARGETS[self.target].shared_per_cta
        found = []
        if self.registers < 0:
            return [f"{self.kernel}: no resource report from ptxas:\n{self.ptxas_log}"]
        if self.shared > limit:
            found.append(f"{self.kernel} needs {self.shared:,} B of shared memory per CTA, "
                         f"{self.target} has {limit:,} B")
        if self.spills:
            found.append(f"{self.kernel} spills on {self.target}: {self.spill_stores} B stores, "
                         f"{self.spill_loads} B loads ({self.registers} registers)")
        return found


_PTXAS = {
    "registers": re.compile(r"Used (\d+) registers"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
    "smem": re.compile(r"(\d+) bytes smem"),
}


def parse_ptxas(log: str) -> dict[str, int] | None:
    """ptxas -v's figures for the (one) entry function of a report; None if it has none."""
    found = {}
    for key, pattern in _PTXAS.items():
        values = [int(v) for v in pattern.findall(log)]
        if key != "smem" and not values:
            return None
        found[key] = sum(values) if key == "smem" else max(values)
    return found


def triton_version() -> str | None:
    """The installed triton's version, None without one (never imports jax's own copy)."""
    try:
        import triton
    except ImportError:
        return None
    return triton.__version__


_CACHE: dict[tuple, Resources] = {}


def compile_call(call: TritonCall, target: str | Target, *, num_warps: int | None = None,
                 num_stages: int | None = None) -> Resources:
    """Compiles a call's IR with Triton for a target (by default with the call's own
    num_warps / num_stages) and returns what ptxas reports. Results are kept for the process,
    keyed by the IR's digest, the target and the parameters."""
    target = TARGETS[target] if isinstance(target, str) else target
    num_warps = call.num_warps if num_warps is None else num_warps
    num_stages = call.num_stages if num_stages is None else num_stages
    key = (call.digest, call.ir, target.name, num_warps, num_stages)
    if key not in _CACHE:
        _CACHE[key] = _compile(call, target, num_warps, num_stages)
    return _CACHE[key]


def _compile(call: TritonCall, target: Target, num_warps: int, num_stages: int) -> Resources:
    from triton import knobs
    from triton.backends.compiler import GPUTarget, Language
    from triton.compiler import compiler
    from triton._C.libtriton import ir as triton_ir

    class BytecodeSource(compiler.ASTSource):
        """Triton IR bytecode as a compile() source that starts at the TTIR stage and runs it
        (an IRSource skips its file's own stage, and reads text only)."""

        def __init__(self):  # noqa: D107 (ASTSource's needs a Python function)
            self.name, self.ext, self.language = call.name, "ttir", Language.TRITON
            self.signature, self.constants, self.attrs = {}, {}, {}

        def hash(self):
            return hashlib.sha256(call.ir).hexdigest()

        def make_ir(self, target, options, codegen_fns, module_map, context):
            with tempfile.NamedTemporaryFile(suffix=".mlirbc") as f:
                f.write(call.ir)
                f.flush()
                module = triton_ir.parse_mlir_module(f.name, context)
            module.context = context
            return module

        def parse_options(self):
            return {}

    log = io.StringIO()
    with tempfile.TemporaryDirectory() as cache, contextlib.ExitStack() as stack:
        for group in (knobs.cache, knobs.compilation, knobs.nvidia):
            stack.enter_context(group.scope())
        knobs.cache.dir = cache  # ptxas runs (and reports) every time: no cache hit
        knobs.compilation.always_compile = True
        knobs.nvidia.dump_ptxas_log = True  # Triton prints ptxas -v's report to stdout
        with contextlib.redirect_stdout(log):
            kernel = compiler.compile(
                BytecodeSource(), target=GPUTarget("cuda", target.capability, 32),
                options=dict(num_warps=num_warps, num_stages=num_stages))
    # No report (a ptxas that printed none): -1 everywhere, which problems() tells.
    report = parse_ptxas(log.getvalue()) or dict.fromkeys(_PTXAS, -1)
    return Resources(
        kernel=call.name, target=target.name, num_warps=num_warps, num_stages=num_stages,
        shared=kernel.metadata.shared + report["smem"], registers=report["registers"],
        spill_stores=report["spill_stores"], spill_loads=report["spill_loads"],
        stack=report["stack"], ptxas_log=log.getvalue().strip())


def lower_for_cuda(f, *avals):
    """``jax.jit(f).trace(*avals).lower(lowering_platforms=("cuda",))``."""
    import jax

    return jax.jit(f).trace(*avals).lower(lowering_platforms=("cuda",))


