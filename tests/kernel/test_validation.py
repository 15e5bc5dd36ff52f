"""Every validated input error of the kernel, triggered through the public API, raises its generated
exception with its code; the list is checked against the catalogue so a new entry needs a case here."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from errkit_attention import BlockSizes, _validators, ranker_attention, sharded_ranker_attention

ROOT = Path(__file__).resolve().parents[2]
B, S, H, KV, D = 2, 32, 4, 2, 16


def arrays(q_shape=(B, S, H, D), k_shape=(B, S, KV, D), v_shape=None, dtype=jnp.float32, k_dtype=None, v_dtype=None):
    v_shape = v_shape or k_shape
    q = jnp.zeros(q_shape, dtype)
    k = jnp.zeros(k_shape, k_dtype or dtype)
    v = jnp.zeros(v_shape, v_dtype or k_dtype or dtype)
    return q, k, v


def call(**overrides):
    q, k, v = overrides.pop("qkv", None) or arrays()
    return lambda: ranker_attention(q, k, v, **overrides)


def mesh1():
    return jax.sharding.Mesh(np.array(jax.devices()[:1]), ("data",))


def sharded(**overrides):
    q, k, v = overrides.pop("qkv", None) or arrays()
    overrides.setdefault("mesh", mesh1())
    return lambda: sharded_ranker_attention(q, k, v, **overrides)


def _for_hopper(f):
    """f traced as for an H100 (RA214 checks tiles only when a GPU is the target)."""
    from errkit_attention import tuning

    with tuning.target("sm_90a"):
        return jax.jit(f).trace()


CASES = {
    "RA100": call(qkv=([[1.0]], *arrays()[1:])),
    "RA101": call(qkv=arrays(q_shape=(S, H, D))),
    "RA102": call(qkv=arrays(k_shape=(B, S, KV, 2 * D))),
    "RA103": call(qkv=arrays(v_shape=(B, S + 1, KV, D))),
    "RA104": call(qkv=arrays(k_dtype=jnp.bfloat16, v_dtype=jnp.bfloat16)),
    "RA105": call(qkv=arrays(q_shape=(B, S, 3, D))),
    "RA106": call(qkv=arrays(dtype=jnp.int32)),
    "RA107": call(qkv=arrays(q_shape=(B, S, H, 512), k_shape=(B, S, KV, 512)), implementation="pallas"),
    "RA108": call(qkv=arrays(q_shape=(B, 0, H, D))),
    "RA201": call(implementation="triton"),
    "RA202": call(sm_scale=float("nan")),
    "RA203": call(cap=-1.0),
    "RA204": call(cap=30.0, cap_method="clip"),
    "RA205": call(causal="yes"),
    "RA207": call(layout="bsdh"),
    "RA210": call(config={"block_q": 64}),
    "RA211": call(config=BlockSizes(block_q=96)),
    "RA212": call(config=BlockSizes(block_q_dkv=8, block_kv_dkv=32, block_q_dq=32, block_kv_dq=32)),
    "RA213": call(config=BlockSizes(block_q_dkv=32)),
    "RA214": lambda: _for_hopper(call(qkv=arrays(q_shape=(1, 1024, H, D), k_shape=(1, 1024, KV, D)),
                                      config=BlockSizes(block_q=512, block_kv=1024), implementation="pallas")),
    "RA301": call(bound=jnp.array([1, 2, 3], jnp.int32)),
    "RA302": call(bound=jnp.array([1.0, 2.0])),
    "RA303": call(qkv=arrays(k_shape=(B, S + 8, KV, D)), bound=jnp.array([1, 2], jnp.int32)),
    "RA304": call(qkv=arrays(k_shape=(B, S + 8, KV, D)), causal=True),
    "RA305": call(bound=jnp.array([-1, 2], jnp.int32)),
    "RA306": call(bound=np.array([2**31, 2], np.int64)),
    "RA401": sharded(batch_axis="batch"),
    "RA402": sharded(head_axis="model"),
    "RA405": sharded(batch_axis="data", head_axis="data"),
    "RA406": sharded(mesh="data"),
}
# RA403/RA404 need a mesh axis larger than 1: checked on 8 host devices below; RA206 another backend.
MULTI_DEVICE = {"RA403", "RA404"}
OTHER_PLATFORM = {"RA206"}


def test_every_validated_entry_has_a_case():
    assert set(CASES) | MULTI_DEVICE | OTHER_PLATFORM == set(_validators.ERRORS)


def test_pallas_on_a_platform_without_a_lowering(monkeypatch):
    import jax

    monkeypatch.setattr(jax, "default_backend", lambda: "METAL")
    with pytest.raises(_validators.ERRORS["RA206"]) as info:
        call(implementation="pallas")()
    assert info.value.params == {"implementation": "pallas", "backend": "METAL"}
    assert ranker_attention(*arrays()).shape == (B, S, H, D)  # None picks xla there


def test_pallas_on_a_tpu_is_accepted(monkeypatch):
    """RA206 is lifted for TPU: the kernel lowers with Mosaic (tests/kernel/test_lowering_tpu.py)."""
    import jax

    monkeypatch.setattr(jax, "default_backend", lambda: "tpu")
    _validators.validate_backend("pallas")


@pytest.mark.parametrize("backend,expected", [("tpu", "pallas"), ("gpu", "pallas"),
                                              ("cuda", "pallas"), ("rocm", "pallas"),
                                              ("cpu", "xla"), ("METAL", "xla")])
def test_default_implementation_follows_the_default_backend(monkeypatch, backend, expected):
    """implementation=None (issue 24 item 6): the kernel on a GPU or a TPU (a TPU got XLA), XLA
    on the CPU and elsewhere (planted: the TPU left out of the kernel's backends -> fails)."""
    import jax

    from errkit_attention.attention import resolve_implementation

    monkeypatch.setattr(jax, "default_backend", lambda: backend)
    assert resolve_implementation(None) == expected
    assert resolve_implementation("xla") == "xla" and resolve_implementation("pallas") == "pallas"


def test_default_on_a_tpu_runs_the_kernel(monkeypatch):
    """With a TPU default backend, ranker_attention(implementation=None) traces the Pallas kernel
    (a pallas_call in its jaxpr), on the CPU the XLA reference (none)."""
    import jax

    q, k, v = arrays()

    def jaxpr():  # a new function each time: make_jaxpr's trace cache knows no backend
        return str(jax.make_jaxpr(lambda q, k, v: ranker_attention(q, k, v))(q, k, v))

    assert "pallas_call" not in jaxpr()
    monkeypatch.setattr(jax, "default_backend", lambda: "tpu")
    assert "pallas_call" in jaxpr()


@pytest.mark.parametrize("code", sorted(CASES))
def test_bad_input_raises_its_generated_exception(code):
    error_class = _validators.ERRORS[code]
    with pytest.raises(error_class) as info:
        CASES[code]()
    assert info.value.code == code
    assert any(f"/errors/{code}/" in note for note in info.value.__notes__)


def test_the_same_checks_hold_under_jit():
    q, k, v = arrays(q_shape=(B, S, 3, D))
    with pytest.raises(_validators.ERRORS["RA105"]):
        jax.jit(lambda q, k, v: ranker_attention(q, k, v))(q, k, v)
    # bound's range cannot be read from a tracer: the check is skipped, not crashed
    q, k, v = arrays()
    out = jax.jit(lambda b: ranker_attention(q, k, v, bound=b))(jnp.array([1, 2], jnp.int32))
    assert out.shape == q.shape


def test_divisibility_against_a_real_mesh():
    script = textwrap.dedent(
        f"""
        import jax, jax.numpy as jnp, numpy as np
        from errkit_attention import sharded_ranker_attention, _validators
        mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
        def expect(code, **kw):
            q = jnp.zeros(kw.pop("q", (4, 16, 4, 16)), jnp.float32)
            k = jnp.zeros(kw.pop("k", (4, 16, 2, 16)), jnp.float32)
            try:
                sharded_ranker_attention(q, k, k, mesh=mesh, **kw)
            except _validators.ERRORS[code] as err:
                print(code, "ok", err)
            else:
                print(code, "NOT RAISED")
        expect("RA403", q=(6, 16, 4, 16), k=(6, 16, 2, 16), batch_axis="data")
        expect("RA404", q=(4, 16, 3, 16), k=(4, 16, 3, 16), batch_axis="data", head_axis="model")
        """
    )
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "RA403 ok" in proc.stdout and "RA404 ok" in proc.stdout, proc.stdout


def test_explain_reads_jax_filtered_tracebacks():
    """What a user pastes from a jitted call: JAX's filtered traceback, with its note and chaining."""
    import io
    import json
    import traceback

    from errkit.explain import command

    q, k, v = arrays(q_shape=(B, S, 3, D))
    with pytest.raises(_validators.ERRORS["RA105"]) as info:
        jax.jit(lambda q, k, v: ranker_attention(q, k, v))(q, k, v)
    text = "".join(traceback.format_exception(info.value))
    assert "GqaHeadCountError: num_q_heads=3" in text and "JAX has removed its internal frames" in text
    out = io.StringIO()
    assert command.run([text], as_json=True, show_all=False, out=out) == 0
    result = json.loads(out.getvalue().splitlines()[0])
    assert result["code"] == "RA105"
    assert result["params"] == {"num_q_heads": 3, "num_kv_heads": KV}
