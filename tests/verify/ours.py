"""Runners of this project's kernel (errkit_attention.ranker_attention, errkit_attention.sharded_ranker_attention), through
its public API.

Inputs are zeros of the shapes the params give (small defaults for what the message does not show).
implementation="pallas" runs the Pallas kernels in interpret mode on the CPU, as the kernel does
there; entries about BlockSizes also run jax.grad, so the backward kernels run with their blocks.

Sharded runners: this pytest process may have a single CPU device (tests/kernel/test_sharding.py
runs its multi-device bodies in a subprocess for that reason), so the mesh is a
jax.sharding.AbstractMesh of the sizes the params give and the sharded call is traced and lowered
for the CPU under jit (shard_map checks the split of every operand then); with enough devices
(XLA_FLAGS=--xla_force_host_platform_device_count) it also runs on a real Mesh.
"""

from __future__ import annotations

import contextlib
import re

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AbstractMesh, Mesh

from errkit_attention import BlockSizes, ranker_attention, sharded_ranker_attention
from verify import register

B, S, HQ, HKV, D = 2, 16, 2, 1, 16  # defaults for what a message does not show


def _dtype_scope(*dtypes):
    """float64 arrays need jax_enable_x64 (else jnp makes float32 ones)."""
    return jax.enable_x64(True) if "float64" in dtypes else contextlib.nullcontext()


def _qkv(q_shape=(B, S, HQ, D), k_shape=(B, S, HKV, D), v_shape=None, dtypes=("float32",) * 3):
    q_dtype, k_dtype, v_dtype = dtypes
    return (jnp.zeros(tuple(q_shape), q_dtype), jnp.zeros(tuple(k_shape), k_dtype),
            jnp.zeros(tuple(k_shape if v_shape is None else v_shape), v_dtype))


def _block(x):
    if hasattr(x, "block_until_ready"):
        x.block_until_ready()
    return x


def _call(q, k, v, **kw):
    return _block(ranker_attention(q, k, v, **kw))


def _grad(q, k, v, **kw):
    """Forward and backward (the backward kernels use the backward block sizes)."""
    return _block(jax.grad(lambda q: ranker_attention(q, k, v, **kw).sum())(q))


def _value_of_type(name: str, array):
    """A value whose type(...).__name__ is `name` (an array stays an array)."""
    if name in ("ArrayImpl", "ndarray", "DynamicJaxprTracer"):
        return array if name != "ndarray" else np.asarray(array)
    return {"NoneType": None, "list": np.asarray(array).tolist(), "tuple": tuple(np.asarray(array).tolist()),
            "int": 1, "float": 1.0, "str": "x", "dict": {}}[name]


# -- inputs ----------------------------------------------------------------------------------------


@register("RA100")
def qkv_not_array(p: dict):
    q, k, v = _qkv()
    return _call(_value_of_type(p["q_type"], q), _value_of_type(p["k_type"], k),
                 _value_of_type(p["v_type"], v), implementation="xla")


@register("RA101")
def qkv_rank(p: dict):
    def arr(ndim, full):
        return jnp.zeros(full[:ndim] if ndim <= 4 else full + (1,) * (ndim - 4))

    return _call(arr(p["q_ndim"], (B, S, HQ, D)), arr(p["k_ndim"], (B, S, HKV, D)),
                 arr(p["v_ndim"], (B, S, HKV, D)), implementation="xla")


@register("RA102")
def k_shape_mismatch(p: dict):
    # v follows k (the message does not show v; the fix reshapes both).
    return _call(*_qkv(p["q_shape"], p["k_shape"]), implementation="xla")


@register("RA103")
def v_shape_mismatch(p: dict):
    kb, _, kh, kd = p["k_shape"]
    return _call(*_qkv((kb, S, kh, kd), p["k_shape"], p["v_shape"]), implementation="xla")


@register("RA104")
def qkv_dtype_mismatch(p: dict):
    dtypes = (p["q_dtype"], p["k_dtype"], p["v_dtype"])
    with _dtype_scope(*dtypes):
        return _call(*_qkv(dtypes=dtypes), implementation="xla")


@register("RA105")
def gqa(p: dict):
    q = jnp.zeros((B, S, p["num_q_heads"], D), jnp.float32)
    k = v = jnp.zeros((B, S, p["num_kv_heads"], D), jnp.float32)
    return ranker_attention(q, k, v, implementation="xla")


@register("RA106")
def dtype_unsupported(p: dict):
    with _dtype_scope(p["dtype"]):
        return _call(*_qkv(dtypes=(p["dtype"],) * 3), implementation=p["implementation"])


def _pads(closed) -> bool:
    """Whether a jaxpr (or one nested in it) pads an array."""
    for eqn in closed.jaxpr.eqns if hasattr(closed, "jaxpr") else closed.eqns:
        if eqn.primitive.name == "pad":
            return True
        for sub in eqn.params.values():
            if hasattr(sub, "eqns") or hasattr(sub, "jaxpr"):
                if _pads(sub):
                    return True
    return False


@register("RA107")
def head_dim_too_large(p: dict):
    """head_dim on the chosen implementation; a Pallas call must also pad nothing (S is a whole block,
    so a pad could only be head_dim's): RA107's fix promises head sizes the kernel does not pad."""
    q, k, v = _qkv((1, S, 1, p["head_dim"]), (1, S, 1, p["head_dim"]))
    out = _call(q, k, v, implementation=p["implementation"])
    if p["implementation"] == "pallas":
        jaxpr = jax.make_jaxpr(lambda q, k, v: ranker_attention(q, k, v, implementation="pallas"))(q, k, v)
        if _pads(jaxpr):
            raise AssertionError(f"the Pallas kernel pads head_dim={p['head_dim']} (to max(16, next power of two))")
    return out


@register("RA108")
def empty_dimension(p: dict):
    return _call(*_qkv(p["q_shape"], p["k_shape"], p["v_shape"]), implementation="xla")


# -- options and config ----------------------------------------------------------------------------


@register("RA201")
def implementation_unknown(p: dict):
    return _call(*_qkv(), implementation=p["implementation"])


@register("RA202")
def sm_scale_not_finite(p: dict):
    return _call(*_qkv(), sm_scale=p["sm_scale"], implementation="xla")


@register("RA203")
def cap_not_positive(p: dict):
    return _call(*_qkv(), cap=p["cap"], implementation="xla")


@register("RA204")
def cap_method_unknown(p: dict):
    return _call(*_qkv(), cap=30.0, cap_method=p["cap_method"], implementation="xla")


@register("RA205")
def causal_not_bool(p: dict):
    q, k, v = _qkv()
    name = p["causal_type"]
    if name == "DynamicJaxprTracer":  # a flag passed through jit as an argument
        return _block(jax.jit(lambda c: ranker_attention(q, k, v, causal=c, implementation="xla"))(True))
    causal = {"bool": True, "int": 1, "str": "True", "NoneType": None, "float": 1.0}[name]
    return _call(q, k, v, causal=causal, implementation="xla")


@register("RA207")
def layout_unknown(p: dict):
    """The default arrays read in the layout asked for (their axes 1 and 2 have sizes either layout takes)."""
    return _call(*_qkv(), layout=p["layout"], implementation="xla")


class TuningConfig:  # a config class of another kernel, passed by mistake
    block_q = block_kv = 64


@register("RA210")
def config_type(p: dict):
    config = {"BlockSizes": BlockSizes(), "NoneType": None, "dict": {"block_q": 64, "block_kv": 64},
              "TuningConfig": TuningConfig(), "type": BlockSizes}[p["config_type"]]
    return _call(*_qkv(), config=config, implementation="pallas")


_BACKWARD = ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq")


@register("RA211", "RA212", "RA213")
def block_sizes(p: dict):
    """BlockSizes from the params (the forward sizes default to 128 when the message does not show them),
    forward and backward through the Pallas kernels."""
    if not p.get("has_config", True):
        return _grad(*_qkv(), config=None, implementation="pallas")
    fields = {name: p[name] for name in ("block_q", "block_kv") + _BACKWARD if name in p}
    return _grad(*_qkv(), config=BlockSizes(**fields), implementation="pallas")


@register("RA214")
def tiles_exceed_shared_memory(p: dict):
    """The params' tiles for their kernel, traced for their GPU from the CPU (errkit_attention.tuning.target:
    Triton's kernels, checked when traced, as on that GPU); the other kernels take the table's
    tiles. A backward kernel is traced under jax.grad (dQ and dK/dV with the split backward)."""
    from errkit_attention import tuning

    fields = dict(re.findall(r"(\w+)=(\d+)", p["tiles"]))
    fields = {name: int(value) for name, value in fields.items()}
    arch, head_dim, dtype = p["arch"], p["head_dim"], p["dtype"]
    table = tuning.block_sizes(arch, head_dim, dtype)
    config = BlockSizes(**{**vars(table), **fields})
    seq = max([128, *fields.values()])
    shapes = [jax.ShapeDtypeStruct((1, seq, 2, head_dim), jnp.dtype(dtype))] * 3

    def f(q, k, v):
        return ranker_attention(q, k, v, config=config, implementation="pallas")

    split = tuning.backward_kernel("split") if p["kernel_pass"] in ("dQ", "dK/dV") else contextlib.nullcontext()
    if p["kernel_pass"] != "forward":
        f = jax.grad(lambda q, k, v, f=f: f(q, k, v).astype(jnp.float32).sum(), argnums=(0, 1, 2))
    with tuning.target(arch), split:
        return jax.jit(f).trace(*shapes)


# -- mask ------------------------------------------------------------------------------------------


@register("RA301")
def bound_shape(p: dict):
    q, k, v = _qkv((p["batch"], S, HQ, D), (p["batch"], S, HKV, D))
    return _call(q, k, v, bound=jnp.zeros(tuple(p["bound_shape"]), jnp.int32), implementation="xla")


@register("RA302")
def bound_dtype(p: dict):
    name = p["bound_dtype"]
    ints = [S // 2] * B
    bound = {"list": ints, "tuple": tuple(ints), "NoneType": None}.get(name)
    if bound is None and name != "NoneType":
        bound = jnp.asarray(ints, name)
    return _call(*_qkv(), bound=bound, implementation="xla")


@register("RA303", "RA304")
def sequence_lengths(p: dict):
    q, k, v = _qkv((B, p["q_seq_len"], HQ, D), (B, p["kv_seq_len"], HKV, D))
    bound = jnp.full((B,), min(p["q_seq_len"], p["kv_seq_len"]) // 2, jnp.int32) if p.get("has_bound") else None
    return _call(q, k, v, bound=bound, causal=bool(p.get("causal", False)), implementation="xla")


@register("RA305")
def bound_negative(p: dict):
    bound = jnp.asarray([p["bound_min"]] + [S // 2] * (B - 1), jnp.int32)
    return _call(*_qkv(), bound=bound, implementation="xla")


@register("RA306")
def bound_exceeds_int32(p: dict):
    """A NumPy bound (int64 holds any value; jnp without x64 would make it int32 first)."""
    bound = np.asarray([p["bound_max"]] + [S // 2] * (B - 1), np.int64)
    return _call(*_qkv(), bound=bound, implementation="xla")


# -- sharding --------------------------------------------------------------------------------------


def _names(mesh_axes: str) -> tuple[str, ...]:
    """The axis names of a message's `mesh_axes` ("'dp', 'tp'")."""
    return tuple(re.findall(r"'([^']*)'", mesh_axes))


def _mesh(shape: dict[str, int]):
    """An AbstractMesh of these axis sizes, and a real Mesh when the process has enough devices."""
    names, sizes = tuple(shape), tuple(shape.values())
    abstract = AbstractMesh(sizes, names)
    n = int(np.prod(sizes))
    real = Mesh(np.asarray(jax.devices()[:n]).reshape(sizes), names) if jax.device_count() >= n else None
    return abstract, real


def _sharded(q, k, v, shape: dict[str, int], **kw):
    abstract, real = _mesh(shape)
    fn = jax.jit(lambda q, k, v: sharded_ranker_attention(q, k, v, mesh=abstract, implementation="xla", **kw))
    fn.trace(q, k, v).lower(lowering_platforms=("cpu",))
    if real is not None:
        return _block(sharded_ranker_attention(q, k, v, mesh=real, implementation="xla", **kw))
    return None


@register("RA401", "RA402")
def axis_unknown(p: dict):
    names = _names(p["mesh_axes"])
    shape = {name: 1 for name in names}
    if "batch_axis" in p:
        return _sharded(*_qkv(), shape, batch_axis=p["batch_axis"])
    batch_axis = next((n for n in names if n != p["head_axis"]), None)
    return _sharded(*_qkv(), shape, batch_axis=batch_axis, head_axis=p["head_axis"])


@register("RA403")
def batch_not_divisible(p: dict):
    q, k, v = _qkv((p["batch"], S, HQ, D), (p["batch"], S, HKV, D))
    if p["batch_axis"] is None:
        return _sharded(q, k, v, {"data": 1}, batch_axis=None)
    return _sharded(q, k, v, {p["batch_axis"]: p["batch_axis_size"]}, batch_axis=p["batch_axis"])


# RA404 is checked after RA403, so the batch divides the batch axis; a batch of 6 on 2 devices, which
# the batch axis must keep (6 does not divide over 4 or 8). 48 q heads: a multiple of every kv head
# count the examples and suggestions give (1, 2, 3, 6, 12, ...).
RA404_BATCH, RA404_BATCH_AXIS, RA404_Q_HEADS = 6, 2, 48


@register("RA404")
def heads_not_divisible(p: dict):
    """num_kv_heads over a head axis of head_axis_size, next to a batch axis of 2 devices and batch 6."""
    hkv = p["num_kv_heads"]
    q, k, v = _qkv((RA404_BATCH, S, RA404_Q_HEADS, D), (RA404_BATCH, S, hkv, D))
    if p["head_axis"] is None:
        return _sharded(q, k, v, {"data": RA404_BATCH_AXIS}, batch_axis="data")
    return _sharded(q, k, v, {"data": RA404_BATCH_AXIS, p["head_axis"]: p["head_axis_size"]},
                    batch_axis="data", head_axis=p["head_axis"])


@register("RA405")
def axes_identical(p: dict):
    names = {n for n in (p["batch_axis"], p["head_axis"]) if n is not None}
    return _sharded(*_qkv(), {n: 1 for n in sorted(names)}, batch_axis=p["batch_axis"], head_axis=p["head_axis"])


@register("RA406")
def mesh_type(p: dict):
    q, k, v = _qkv()
    name = p["mesh_type"]
    if name in ("Mesh", "AbstractMesh"):
        return _sharded(q, k, v, {"data": 1}, batch_axis="data")
    devices = np.asarray(jax.devices()[:1])
    mesh = {"ndarray": devices, "list": list(devices),
            "NamedSharding": jax.sharding.NamedSharding(Mesh(devices, ("data",)), jax.sharding.PartitionSpec()),
            "tuple": tuple(devices), "NoneType": None}[name]
    return _block(sharded_ranker_attention(q, k, v, mesh=mesh, batch_axis="data", implementation="xla"))
