"""explain reads where an error was raised (issue 26, item 3): the framework from frames, modules
and exception names, the raise site from kernel names and allocation dumps; and the fixes follow
it (errkit/explain/context.py). The texts are the public reports' of tests/realworld/cases/
context-collected.yaml, cut or framed differently here."""

import io
import json

import pytest
from hypothesis import given, strategies as st

from errkit.explain import command, context

INDUCTOR = ("torch._inductor.exc.InductorError: RuntimeError: No valid triton configs.\n"
            "OutOfMemoryError: out of resource: triton_tem_fused_flex_attention_0\n"
            "Required: 139776  Hardware limit: 101376\n"
            "Reducing block sizes or num_stages may help.\n")
TRITON_LINE = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131074, "
               "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.")
BARE = "out of resource: shared memory, Required: 131074, Hardware limit: 101376."


def explained(text: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    assert command.run([text], as_json=True, show_all=False, out=out, err=err) == 0, err.getvalue()
    return json.loads(out.getvalue().splitlines()[0])


def fix_kernels(res: dict) -> list:
    return [fix["kernel"] and fix["kernel"]["id"] for fix in res["fixes"]]


def test_a_pytorch_inductor_error_gets_pytorch_levers_only():
    res = explained(INDUCTOR)
    assert res["code"] == "RA820" and res["params"] == {
        "kernel_name": "triton_tem_fused_flex_attention_0", "required": 139776, "hardware_limit": 101376}
    assert res["context"]["framework"] == "pytorch" and res["context"]["site"] == "kernel"
    assert res["matched"]["kernel"]["id"] == "torch-flex"
    assert fix_kernels(res) == ["torch-flex", "torch-flex", None]  # no JAX BlockSizes
    assert res["fixes"][0]["suggestions"][0] == {"label": "shrink factor needed", "value": 1.38}


def test_torch_frames_drop_jax_kernels_fixes_even_when_no_kernel_is_named():
    text = ('Traceback (most recent call last):\n'
            '  File "/usr/lib/python3.10/site-packages/torch/_inductor/runtime/triton_heuristics.py", line 1021, in run\n'
            '    self.autotune_to_one_config(*args, grid=grid, **kwargs)\n'
            '  File "/usr/lib/python3.10/site-packages/triton/compiler/compiler.py", line 410, in _init_handles\n'
            '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n' + TRITON_LINE + "\n")
    res = explained(text)
    assert res["context"]["framework"] == "pytorch"
    assert res["context"]["framework_from"] == "triton_heuristics"
    kernels = fix_kernels(res)
    assert kernels[0] == "torch-flex" and set(kernels) == {"torch-flex", None}


def test_triton_alone_gets_the_generic_triton_fix():
    res = explained(TRITON_LINE)
    assert res["context"] == {"framework": "triton", "framework_from": "triton.runtime", "site": None, "site_from": None}
    assert fix_kernels(res) == [None]
    assert res["fixes"][0]["suggestions"][0]["label"] == "shrink factor needed"


def test_a_message_that_shows_no_framework_keeps_every_fix():
    res = explained(BARE)
    assert res["context"]["framework"] is None
    assert {"gpu-mha", "gpu-decode", "gpu-paged", "ranker", "torch-flex", None} == set(fix_kernels(res))


def test_jax_frames_keep_jax_kernels_fixes_and_drop_pytorchs():
    text = ('  File "/opt/venv/lib/python3.11/site-packages/jax/_src/compiler.py", line 335, in backend_compile\n'
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Shared memory size limit exceeded: "
            "requested 262144, available: 232448\n")
    res = explained(text)
    assert res["code"] == "RA820" and res["context"]["framework"] == "jax"
    assert "torch-flex" not in fix_kernels(res) and "gpu-mha" in fix_kernels(res)


def test_an_xla_operation_gets_xlas_flag_first_and_no_kernels_fix():
    text = ("EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack for %reduce-window.1 = "
            "(u32[16,8,128]{2,1,0:T(8,128)S(1)}) reduce-window(u32[16,8,128]{2,1,0:T(8,128)S(1)} %bitcast.2726), "
            "window={size=1x1x128}. Scoped allocation with size 31.07M and limit 16.00M exceeded scoped vmem limit by 15.07M.")
    res = explained(text)
    assert res["code"] == "RA810" and res["context"]["site"] == "xla-fusion"
    assert res["fixes"][0]["summary"].startswith("For XLA's own fusions")
    assert fix_kernels(res) == [None, None]


def test_a_kernels_custom_call_gets_the_pallas_call_fix_first():
    text = ("JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem while allocating on stack for "
            "%my_matmul_kernel.18 = bf16[2048,4096]{1,0:T(8,128)(2,1)} custom-call(%get-tuple-element.1), "
            'custom_call_target="tpu_custom_call"')
    res = explained(text)
    assert res["context"]["site"] == "pallas-call" and res["context"]["framework"] == "jax"
    assert res["fixes"][0]["summary"].startswith("Raise the kernel's VMEM limit")


def test_an_own_kernels_smem_exhaustion_gets_the_scalar_prefetch_fix_first():
    text = ("RESOURCE_EXHAUSTED: Allocation (size=2097152) would exceed memory (size=1048576)\n"
            ":: #allocation3 [shape = 'u8[2097152]{0}', space=smem, size = 0x200000, scoped,\n"
            "   tag = 'prefetched SMEM operand 0'] :: my_gather_kernel.3\n")
    res = explained(text)
    assert res["code"] == "RA811" and res["context"]["site"] == "pallas-call"
    assert res["fixes"][0]["summary"].startswith("In a pallas_call of your own")
    assert res["fixes"][0]["suggestions"] == [{"label": "shrink the SMEM operands by at least", "value": 2.0}]


@pytest.mark.parametrize("before, want", [
    ('  File "/x/site-packages/jax/_src/api.py", line 1\n  File "/x/site-packages/torch/nn/functional.py", line 2\n', "pytorch"),
    ('  File "/x/site-packages/torch/nn/functional.py", line 2\n  File "/x/site-packages/jax/_src/api.py", line 1\n', "jax"),
    ('  File "/x/site-packages/torch_xla/core/xla_model.py", line 3\n', None),
    ('  File "C:\\\\venv\\\\Lib\\\\site-packages\\\\torch\\\\_dynamo\\\\eval_frame.py", line 5\n', "pytorch"),
])
def test_the_framework_nearest_the_message_wins(before, want):
    assert context.framework(before, "RuntimeError: boom", "")[0] == want


def test_the_text_output_says_what_was_read():
    out, err = io.StringIO(), io.StringIO()
    command.run([INDUCTOR], as_json=False, show_all=False, out=out, err=err)
    assert 'context  PyTorch (read from "triton_tem_fused")' in out.getvalue()


_PIECES = [m for marks in (context.MARKS["pytorch"], context.MARKS["jax"], context.TRITON_MARKS) for m in marks]


@given(st.lists(st.sampled_from(_PIECES + ["torc", "ja", "x", "\n", " ", "/", "Triton", "jaxli"]), max_size=12).map("".join))
def test_the_last_mark_is_found_as_every_mark_looked_for_finds_it(text):
    """_last looks only for the marks whose anchor is in the text (planted: an anchor that some of
    its marks do not hold -> fails)."""
    for marks in (context.MARKS["pytorch"], context.MARKS["jax"], context.TRITON_MARKS):
        every = max(((text.rfind(m), m) for m in marks), key=lambda hit: hit[0])
        assert context._last(text, marks)[0] == every[0]
        if every[0] >= 0:
            assert text.startswith(context._last(text, marks)[1], every[0])
