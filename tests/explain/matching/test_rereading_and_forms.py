"""What people write around a message (issue 51 phase 2: matching/text.py, index.gone, rereading.py), one case each beside the paste-mutation
property (tests/explain/test_paste_mutations.py), whose kinds that still fail elsewhere stay
expected failures: a value retyped as a placeholder is gone, not read; a wording other compilers
print too is exact only with JAX's side shown."""

from __future__ import annotations

import mutations

from errkit.explain.matching.index import Index

INDEX = Index.load()


def answer(text: str) -> tuple[int, dict]:
    return mutations.explain(text, INDEX)


def test_a_value_retyped_as_a_placeholder_is_gone_not_read():
    for put in ("<V>", "...", "tanh, ..."):
        rc, first = answer(f"ValueError: cap_method must be one of 'tanh', 'soft_sign', 'none', got '{put}'")
        assert first["code"] == "RA204" and "cap_method" not in first["params"], (put, first["params"])
    rc, first = answer("ValueError: cap_method must be one of 'tanh', 'soft_sign', 'none', got 'tahn'")
    assert (rc, first["params"]) == (0, {"cap_method": "tahn"})  # a real value is still read


def test_a_vllm_worker_line_is_read_up_to_its_traceback():
    rc, first = answer("Exception in worker VllmWorkerProcess while processing method load_model: ValueError: "
                       "num_q_heads=12 must be divisible by num_kv_heads=8, Traceback (most recent call last):\n"
                       '  File "worker.py", line 3, in load_model\n    raise ValueError(msg)\n')
    assert (rc, first["code"], first["params"]) == (0, "RA105", {"num_q_heads": 12, "num_kv_heads": 8})


def test_a_wording_other_compilers_print_is_exact_only_with_jax_shown():
    bare = "error: failed to legalize operation 'chlo.erf' that was explicitly marked illegal"
    rc, first = answer(bare)
    assert (rc, first["code"], first["confidence"]) == (1, "RA803", "approximate")
    assert "JAX" in first["context"]["unconfirmed"] and first["params"] == {"operation": "chlo.erf"}
    rc, first = answer('  File "/usr/lib/python3/site-packages/jax/_src/compiler.py", line 266, in backend_compile\n'
                       "jax.errors.JaxRuntimeError: INTERNAL: Mosaic failed to compile TPU kernel: failed to legalize operation 'tpu.gather'")
    assert rc == 0 and first["confidence"] == "exact"
    rc, first = answer("RuntimeError: " + bare.removeprefix("error: ") + "\n(from a jax.jit'ed function)")
    assert (rc, first["code"], first["confidence"]) == (0, "RA803", "exact")


def test_a_message_wrapped_over_several_quoted_lines_is_joined():
    text = ("> ValueError: q, k and v must not have empty dimensions, got\n> q_shape=(0, 512, 8, 128), "
            "k_shape=(0, 512, 2, 128), v_shape=(0,\n> 512, 2, 128)\n\nany idea?")
    rc, first = answer(text)
    assert (rc, first["code"], first["line"]) == (0, "RA108", 1)
    assert first["params"]["v_shape"] == [0, 512, 2, 128], first["params"]


def test_a_message_in_another_case_is_approximate_with_its_values():
    rc, first = answer("VALUEERROR: NUM_Q_HEADS=12 MUST BE DIVISIBLE BY NUM_KV_HEADS=8")
    assert (rc, first["code"], first["confidence"]) == (1, "RA105", "approximate")
    assert first["params"] == {"num_q_heads": 12, "num_kv_heads": 8}
    rc, first = answer("valueerror: num_q_heads=12 must be divisible by num_kv_heads=8")
    assert first["params"] == {"num_q_heads": 12, "num_kv_heads": 8}


def test_a_value_wrapped_where_no_message_ends_is_read_whole():
    """A wrap after a comma or a conjunction, or before a line in lower case, cuts a value short:
    the joined reading replaces the first; a capitalised line after a message is not its value."""
    rc, first = answer("NotImplementedError: dtype float64 is not supported by\nimplementation='pallas'; "
                       "use one of: float32, bfloat16,\nfloat16")
    assert (rc, first["code"], first["params"]["supported"]) == (0, "RA106", "float32, bfloat16, float16")
    for text in ("RuntimeError: Internal TPU kernel compiler error: unsupported operand shapes or\nlayouts",
                 "RuntimeError: Internal TPU kernel compiler error: unsupported\noperand shapes or layouts"):
        rc, first = answer(text)
        assert (rc, first["code"], first["params"]) == (0, "RA808", {"reason": "unsupported operand shapes or layouts"}), text
    rc, first = answer("ValueError: Unsupported TPU device kind: cpu\nI get it on a colab CPU runtime.")
    assert (rc, first["code"], first["params"]) == (0, "RA813", {"device_kind": "cpu"})


def test_a_paste_quoted_whole_reads_as_the_text_it_quotes():
    rc, first = answer("> RuntimeError: Unable to load any of {libcudnn_ops.so.9.1.0,\n> libcudnn_ops.so.9.1, "
                       "libcudnn_ops.so.9, libcudnn_ops.so}")
    assert (rc, first["code"]) == (0, "RA825")
    assert first["params"] == {"library": "libcudnn_ops.so.9.1.0",
                               "other_names": "libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so"}, first["params"]
    rc, first = answer("ValueError: Mosaic GPU kernel exceeds\navailable shared memory: smem_bytes=524296\n> max_smem_bytes=232448")
    assert (rc, first["code"], first["params"]) == (0, "RA833", {"smem_bytes": 524296, "max_smem_bytes": 232448})


def test_a_message_in_another_case_keeps_the_values_its_entry_reads_after_it():
    rc, first = answer("ValueError: the pallas tpu lowering currently requires that the last two dimensions of your "
                       "block shape are divisible by 8 and 128 respectively, or be equal to the respective dimensions "
                       "of the overall array. block spec for args[0] has block shape (blocked(block_size=8), "
                       "blocked(block_size=100)), array shape (64, 384), and index_map returning")
    assert (first["code"], first["confidence"]) == ("RA812", "approximate")
    assert (first["params"]["block_rows"], first["params"]["block_cols"]) == (8, 100), first["params"]


def test_a_lowered_message_is_read_by_its_entrys_longer_wording():
    rc, first = answer("RuntimeError: out of resource: shared memory, required: 98304, hardware limit: 65536")
    assert (first["code"], first["confidence"]) == ("RA820", "approximate")
    assert first["params"] == {"required": 98304, "hardware_limit": 65536}
    rc, first = answer("RuntimeError: out of resource: shared memory")  # the short wording itself: exact, as before
    assert (rc, first["code"], first["confidence"]) == (0, "RA820", "exact")


def test_three_dots_and_a_list_cut_short_are_values_left_out():
    base = ("RuntimeError: Failed to set window params for output 0: {code}: CompileTimeMosaicMisalignedBlockAndTiling: "
            "Operand of shape (..., 16, 256) has tiling (16, 128), but its block shape {block} is not divisible by "
            "tiling evenly nor matches the full shape")
    rc, first = answer(base.format(code="...", block="(..., 8, 256)"))
    assert first["code"] == "RA805" and first["params"]["operand"] == "output 0" and "error_code" not in first["params"]
    for block in ("...", "(..., ..."):
        rc, first = answer(base.format(code="E2002", block=block))
        assert first["code"] == "RA805" and "block_shape" not in first["params"], (block, first["params"])


def test_text_after_a_message_does_not_lengthen_its_value_where_the_wording_tells_where_it_ends():
    """A longer wording the message starts with beats a shorter one matched whole by reading the
    longer one's fixed text into its value; a wording that ends with a full stop ends its last value
    at the first stop followed by a space."""
    rc, first = answer("ValueError: Unrecognized TPU device kind: cpu. tpu_custom_call cannot be lowered on a machine "
                       "without TPUs when mosaic_use_python_pipeline=True. on TPU v5e with jax 0.10.2")
    assert (rc, first["code"], first["params"]) == (0, "RA813", {"device_kind": "cpu"})
    assert "tpu_custom_call" in first["matched"]["wording"]
    for after in (". Retrying in 5s", " (while compiling step 3)", " -- any idea?"):
        rc, first = answer("ValueError: Unrecognized TPU device kind: TPU v9 lite." + after)
        assert (rc, first["code"], first["params"]) == (0, "RA813", {"device_kind": "TPU v9 lite"}), after
    rc, first = answer("ValueError: Unrecognized TPU device kind: TPU v9 lite")  # the stop dropped: still read whole
    assert first["params"] == {"device_kind": "TPU v9 lite"}


def test_the_full_stop_reading_runs_on_the_linear_engine():
    """The stop after a lazy value backtracks quadratically on Python's re (1.2 s for a 16 KB line of
    dots); the matcher compiles it on the index's engine, as every regex it runs on pasted text."""
    import re

    from errkit.explain.matching.line import LineReader

    answer("NotImplementedError: Not supported on value11. (while compiling step 3)")
    stopped = INDEX.room(LineReader)._stopped
    assert stopped and not any(isinstance(p, re.Pattern) for p in stopped.values())
