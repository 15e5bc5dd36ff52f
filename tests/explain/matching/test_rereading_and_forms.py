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
