"""No padding for the GPU or the TPU (issue 24): at D=80, S=4000 the lowered HLO holds no pad
or slice of q, k or v (nor of o, the cotangent or the gradients).

ranker_attention(..., implementation="pallas") is lowered from this CPU host, forward and
jax.grad of a loss through it, for CUDA (Triton) and for TPU (Mosaic; under
``tuning.target("tpu")``, the blocks a TPU host picks). head_dim 80 is no power of two (Triton
tiles are 128 wide) and 4000 no multiple of any block, so the former wrapper padded q, k, v to
[1, 4096 or 4032, h, 128] and sliced o and the gradients back: an extra HBM round trip of each
per call. Asserted on the StableHLO text, outside the kernels' custom calls (whose bodies are
serialized, not StableHLO text):

- no ``stablehlo.pad`` and no slicing op (slice, dynamic_slice, dynamic_update_slice, gather,
  scatter) at all, but one on the TPU's gradient: the log-sum-exp the Mosaic forward writes
  lane-replicated, [b, h, s, 128] float32, sliced to its lane 0 ([b, h, s, 1]), no q, k, v;
- every dimension of every bfloat16 or float32 tensor is one of the problem's (1, heads, 80,
  4000), or 128 on the TPU in that lane-replicated float32 vector: no padded length (4032,
  4096) and no padded head_dim, whichever op would build it.

Interpret mode (CPU) still pads, inside its own branch of the platform choice; that branch is
not lowered for CUDA or TPU.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

from errkit_attention import ranker_attention, tuning
from tests.kernel.test_lowering import TRITON_CALL, grad_calls
from tests.kernel.test_lowering_tpu import MOSAIC_CALL

B, S, HQ, HK, D = 1, 4000, 4, 2, 80
MASKS = {"causal": dict(causal=True), "bound": dict(bound=True),
         "bound_causal": dict(causal=True, bound=True)}
PLATFORMS = {"cuda": (TRITON_CALL, tuning.DEFAULT_ARCH), "tpu": (MOSAIC_CALL, tuning.TPU)}
SLICING = re.compile(r"stablehlo\.(pad|slice|dynamic_slice|dynamic_update_slice|gather|scatter|"
                     r"real_dynamic_slice|concatenate)\b")
LSE_LANES = re.compile(r"stablehlo\.slice .*: \(tensor<1x4x4000x128xf32>\) -> "
                       r"tensor<1x4x4000x1xf32>")
TENSOR = re.compile(r"tensor<((?:\d+x)*)(bf16|f32)>")  # q, k, v, o, gradients, residuals


def _args():
    dt = jnp.bfloat16
    return (jax.ShapeDtypeStruct((B, S, HQ, D), dt), jax.ShapeDtypeStruct((B, S, HK, D), dt),
            jax.ShapeDtypeStruct((B, S, HK, D), dt), jax.ShapeDtypeStruct((B,), jnp.int32))


def _functions(mask):
    options = dict(MASKS[mask])
    has_bound = options.pop("bound", False)

    def f(q, k, v, bound):
        return ranker_attention(q, k, v, bound=bound if has_bound else None,
                                implementation="pallas", **options)

    def loss(*args):
        return f(*args).astype(jnp.float32).sum()

    return {"forward": f, "grad": jax.grad(loss, argnums=(0, 1, 2))}


def _lower(f, platform):
    with tuning.target(PLATFORMS[platform][1]), tuning.forward_kernel("triton"):
        return jax.jit(f).trace(*_args()).lower(lowering_platforms=(platform,)).as_text()


def _problems(text, platform, grad):
    """What in a lowered module pads or slices, or has a padded shape: empty when nothing."""
    found = []
    allowed_slices = 1 if (platform == "tpu" and grad) else 0
    slicing = [line.strip() for line in text.splitlines() if SLICING.search(line)]
    lse = [line for line in slicing if LSE_LANES.search(line)]
    if len(lse) > allowed_slices:
        found.append(f"{len(lse)} lane slices of the log-sum-exp, at most {allowed_slices}")
    found += [f"pads or slices: {line[:200]}" for line in slicing if line not in lse]
    dims_ok = {1, HQ, HK, D, S}
    for dims, dtype in set(TENSOR.findall(text)):
        dims = [int(n) for n in dims.split("x") if n]
        lanes = platform == "tpu" and dtype == "f32" and dims[-1:] == [128]
        bad = [n for n in (dims[:-1] if lanes else dims) if n not in dims_ok]
        if bad:
            found.append(f"tensor<{'x'.join(map(str, dims))}x{dtype}>: dims {bad}")
    return found


CASES = [(platform, mask, what) for platform in PLATFORMS for mask in MASKS
         for what in ("forward", "grad")]


@pytest.mark.parametrize("platform,mask,what", CASES,
                         ids=["-".join(case) for case in CASES])
def test_no_pad_or_slice_of_q_k_v(platform, mask, what):
    text = _lower(_functions(mask)[what], platform)
    call = PLATFORMS[platform][0]
    # grad: the forward with residuals, dQ and dK/dV; on CUDA the table may fuse the last two
    grads = grad_calls(D, "bfloat16") if platform == "cuda" else 3
    assert text.count(call) == (grads if what == "grad" else 1), text.count(call)
    problems = _problems(text, platform, what == "grad")
    assert not problems, "\n".join(problems)


def test_the_check_sees_padding():
    """The checker itself: a padded q, and a sliced output, are caught."""
    def padded(q, k, v, bound):
        q = jnp.pad(q, ((0, 0), (0, 96), (0, 0), (0, 48)))
        return q[:, :S, :, :D].astype(jnp.float32).sum()

    text = _lower(padded, "cuda")
    problems = _problems(text, "cuda", grad=False)
    assert any("stablehlo.pad" in p for p in problems), problems
    assert any("stablehlo.slice" in p for p in problems), problems
    assert any("4096" in p and "128" in p for p in problems), problems


@pytest.mark.parametrize("what", ["forward", "grad"])
def test_no_pad_or_slice_mha_two_heads(what):
    """The issue's own shape, B=1, S=4000, H=2 (query and kv heads), D=80, no mask, lowered for
    CUDA: no pad, no slice, no padded dimension."""
    aval = jax.ShapeDtypeStruct((1, S, 2, D), jnp.bfloat16)

    def f(q, k, v):
        return ranker_attention(q, k, v, implementation="pallas")

    fn = f if what == "forward" else jax.grad(
        lambda *a: f(*a).astype(jnp.float32).sum(), argnums=(0, 1, 2))
    with tuning.target(tuning.DEFAULT_ARCH), tuning.forward_kernel("triton"):
        text = jax.jit(fn).trace(aval, aval, aval).lower(lowering_platforms=("cuda",)).as_text()
    assert text.count(TRITON_CALL) == (grad_calls(D, "bfloat16") if what == "grad" else 1)
    problems = _problems(text, "cuda", what == "grad")
    assert not problems, "\n".join(problems)
