"""sharded_ranker_attention on 8 host CPU devices, against the unsharded call.

The multi-device bodies run in a subprocess with
XLA_FLAGS=--xla_force_host_platform_device_count=8, because this pytest process
may already have initialised JAX with a single CPU device.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh

from errkit_attention import BlockSizes, sharded_ranker_attention
from errkit_attention import _validators

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PRELUDE = textwrap.dedent("""
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from errkit_attention import BlockSizes, ranker_attention, sharded_ranker_attention

    assert jax.device_count() == 8, jax.devices()
    rng = np.random.default_rng(0)

    def draw(*shape):
        return jnp.asarray(rng.standard_normal(shape), jnp.float32)

    def jit(fn):
        # Tiny shapes: compile at XLA's lowest backend optimisation level.
        def call(*args):
            lowered = jax.jit(fn).lower(*args)
            opts = {"xla_backend_optimization_level": 0}
            return lowered.compile(compiler_options=opts)(*args)
        return call

    def max_err(a, b):
        return float(jnp.max(jnp.abs(a.astype(jnp.float32) - b.astype(jnp.float32))))
""")


def _run_on_8_devices(body: str) -> str:
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=8").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO_ROOT, env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("impl", ["xla", "pallas"])
def test_batch_and_head_sharding_matches_unsharded(impl):
    out = _run_on_8_devices(f"""
        impl = {impl!r}
        mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "heads"))
        # 4 q heads over 2 kv heads: each head shard keeps one whole GQA group.
        q, k, v = draw(4, 40, 4, 32) * 2, draw(4, 40, 2, 32), draw(4, 40, 2, 32)
        bound = jnp.asarray([0, 13, 40, 27], jnp.int32)
        options = dict(bound=bound, causal=True, cap=3.0, implementation=impl,
                       config=BlockSizes(block_q=16, block_kv=16))
        expected = jit(lambda q, k, v: ranker_attention(q, k, v, **options))(q, k, v)
        spec = P("data", None, "heads", None)
        shard = lambda x: jax.device_put(x, NamedSharding(mesh, spec))
        got = jit(lambda q, k, v, bound: sharded_ranker_attention(
            q, k, v, mesh=mesh, batch_axis="data", head_axis="heads",
            **dict(options, bound=bound)))(shard(q), shard(k), shard(v), bound)
        assert got.shape == q.shape and got.dtype == q.dtype
        assert got.sharding.is_equivalent_to(NamedSharding(mesh, spec), 4), got.sharding
        err = max_err(got, expected)
        # A head sharding that broke the GQA grouping would give O(1) errors.
        assert err < 1e-5, err
        print("ok", err)
    """)
    assert out.startswith("ok")


def test_batch_only_sharding_and_gradients():
    out = _run_on_8_devices("""
        mesh = Mesh(np.array(jax.devices()), ("batch",))
        q, k, v = draw(8, 32, 2, 16), draw(8, 32, 1, 16), draw(8, 32, 1, 16)
        bound = jnp.asarray([0, 3, 8, 16, 20, 31, 32, 99], jnp.int32)
        config = BlockSizes(block_q=16, block_kv=16)
        ct = draw(8, 32, 2, 16)

        def loss(fn):
            return lambda q, k, v: jnp.sum(fn(q, k, v) * ct)

        plain = lambda q, k, v: ranker_attention(
            q, k, v, bound=bound, cap=2.0, cap_method="soft_sign",
            implementation="pallas", config=config)
        sharded = lambda q, k, v: sharded_ranker_attention(
            q, k, v, mesh=mesh, batch_axis="batch", bound=bound, cap=2.0,
            cap_method="soft_sign", implementation="pallas", config=config)
        expected = jit(plain)(q, k, v)
        err = max_err(jit(sharded)(q, k, v), expected)
        assert err < 1e-5, err
        g_sharded = jit(jax.grad(loss(sharded), argnums=(0, 1, 2)))(q, k, v)
        g_plain = jit(jax.grad(loss(plain), argnums=(0, 1, 2)))(q, k, v)
        for a, b in zip(g_sharded, g_plain):
            assert max_err(a, b) < 1e-5, max_err(a, b)
        # Unsharded-vs-sharded is a real check: another bound changes the answer.
        other = jit(lambda q, k, v: ranker_attention(
            q, k, v, cap=2.0, cap_method="soft_sign", implementation="pallas",
            config=config))(q, k, v)
        assert max_err(other, expected) > 1e-2
        print("ok", err)
    """)
    assert out.startswith("ok")


def test_sharded_validators_called_once_in_order(monkeypatch):
    """Every validator runs exactly once, on the global arrays: the
    ranker_attention chain, then validate_sharding (which reads the validated
    batch and head dimensions; order set in commit 853e374)."""
    calls = []
    for name in ("validate_sharding", "validate_options", "validate_qkv",
                 "validate_mask", "validate_config"):
        monkeypatch.setattr(_validators, name,
                            lambda *a, _n=name: calls.append((_n, a)))
    mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("data", "heads"))
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.standard_normal((2, 16, 2, 16)), jnp.float32)
    k = v = jnp.asarray(rng.standard_normal((2, 16, 1, 16)), jnp.float32)
    config = BlockSizes(block_q=16, block_kv=16)
    out = sharded_ranker_attention(q, k, v, mesh=mesh, head_axis="heads",
                                   implementation="xla", config=config)
    assert out.shape == q.shape
    assert [c[0] for c in calls] == ["validate_options", "validate_qkv",
                                     "validate_mask", "validate_config",
                                     "validate_sharding"]
    assert calls[4][1] == (mesh, "data", "heads", q, k, "bshd")
    assert calls[1][1][0] is q and calls[1][1][3] == "xla"


def test_sharded_accepts_numpy_and_jax_scalars_like_ranker_attention():
    """sm_scale, cap and block sizes as NumPy / JAX scalars: the sharded entry point converts them
    as ranker_attention does (the static config then holds Python ints) and gives its output."""
    from errkit_attention import ranker_attention

    mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("data", "heads"))
    rng = np.random.default_rng(0)
    q = jnp.asarray(rng.standard_normal((2, 32, 2, 16)), jnp.float32)
    k = v = jnp.asarray(rng.standard_normal((2, 32, 1, 16)), jnp.float32)
    want = ranker_attention(q, k, v, sm_scale=0.25, cap=5.0, implementation="pallas",
                            config=BlockSizes(16, 16))
    got = sharded_ranker_attention(
        q, k, v, mesh=mesh, head_axis="heads", sm_scale=np.float32(0.25), cap=jnp.float32(5),
        implementation="pallas", config=BlockSizes(np.int64(16), jnp.int32(16)))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=1e-6)
