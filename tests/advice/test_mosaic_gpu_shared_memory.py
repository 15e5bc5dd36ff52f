"""The shared-memory rules of catalog/kernels/mosaic-gpu.yaml (forward, dQ and dK/dV) count exactly
the bytes the Mosaic GPU lowering needs for each kernel when it runs max_concurrent_steps steps, and
at least them when a sequence has fewer blocks (the rules assume the most steps: the lengths are
rarely shown), with and without jax.grad.

A seeded generator draws realistic configurations (head_dim and blocks 64..256, 2..4 steps, one or two
backward warpgroups, with and without jax.grad, lengths whole multiples of the blocks) and lowers
each for CUDA from the CPU (tests/verify/gpu_attention.py), which raises `Mosaic GPU kernel exceeds
available shared memory` when any of the forward, dQ or dK/dV kernels does not fit.
"""

from __future__ import annotations

import ast
import contextlib
import math
import sys
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest

pytest.importorskip("jax")
pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

sys.path[:0] = [str(Path(__file__).parents[1])]
from verify import gpu_attention as runners  # noqa: E402

from errkit.core import expr  # noqa: E402
from support import bundled_catalogue  # noqa: E402

SMEM = "Mosaic GPU kernel exceeds available shared memory"
RULES = ("forward-shared-memory", "dq-shared-memory", "dkv-shared-memory")
BLOCKS = [64, 64, 128, 128, 192, 256]  # (the small ones drawn more often: near the limit, not far past it)
# the forward rule before issue 47 (no logsumexp buffer under jax.grad): planting it must fail this test
OLD_FORWARD = ("2 * head_dim * (2 * block_q + 2 * max_concurrent_steps * block_kv) + 2072 + 32 * max_concurrent_steps"
               " <= 232448")


@st.composite
def configs(draw) -> dict:
    grad = draw(st.booleans())
    cfg = {"head_dim": draw(st.sampled_from([64, 64, 128, 128, 192, 256])), "grad": grad,
           "block_q": draw(st.sampled_from(BLOCKS)), "block_kv": draw(st.sampled_from(BLOCKS)),
           "max_concurrent_steps": draw(st.integers(2, 4))}
    wgs, q_unit, kv_unit = 1, 2 * cfg["block_q"], cfg["block_kv"]
    if grad:
        wgs = draw(st.sampled_from([1, 2]))
        cfg.update(compute_wgs_bwd=wgs, **{name: draw(st.sampled_from(BLOCKS))
                                           for name in ("block_q_dq", "block_kv_dq", "block_q_dkv", "block_kv_dkv")})
        q_unit = math.lcm(q_unit, cfg["block_q_dq"] * wgs, cfg["block_q_dkv"])
        kv_unit = math.lcm(kv_unit, cfg["block_kv_dkv"] * wgs, cfg["block_kv_dq"])
    cfg["q_seq_len"] = q_unit * draw(st.integers(1, 4))
    cfg["kv_seq_len"] = kv_unit * draw(st.integers(1, 4))
    return cfg


def values(cfg: dict) -> dict:
    """The kernel's values (catalog/kernels/mosaic-gpu.yaml) of a configuration."""
    backward = ("block_q_dq", "block_kv_dq", "block_q_dkv", "block_kv_dkv")
    return {**{name: cfg.get(name) for name in backward}, "head_dim": cfg["head_dim"], "block_q": cfg["block_q"],
            "block_kv": cfg["block_kv"], "max_concurrent_steps": cfg["max_concurrent_steps"],
            "compute_wgs": cfg.get("compute_wgs_bwd", 1), "backward": cfg["grad"],
            "q_seq_len": cfg["q_seq_len"], "kv_seq_len": cfg["kv_seq_len"]}


def refused_by_lowering(cfg: dict) -> bool:
    config = {k: v for k, v in cfg.items() if k not in ("head_dim", "grad", "q_seq_len", "kv_seq_len")}
    try:
        runners.mosaic(cfg["q_seq_len"], cfg["kv_seq_len"], cfg["head_dim"], grad=cfg["grad"], **config)
    except ValueError as err:
        if SMEM in str(err):
            return True
        raise
    return False


LIMIT = 232448


def measured(cfg: dict) -> list[int]:
    """The shared-memory bytes of each kernel the call lowers (forward; under jax.grad then dQ and
    dK/dV), as the Mosaic GPU launch computes them to compare with the limit, read with no limit."""
    from jax.experimental.mosaic.gpu import core

    sizes, launch, real_jax = [], core._launch, core.jax

    @contextlib.contextmanager
    def recording(token, grid, cluster, block, smem_buffers, *args, **kwargs):
        sizes.append(core._smem_tree_size(smem_buffers))
        with launch(token, grid, cluster, block, smem_buffers, *args, **kwargs) as out:
            yield out

    class Unlimited:  # the launch reads the limit off jax.local_devices()[0]
        def __getattr__(self, name):
            return getattr(real_jax, name)

        @staticmethod
        def local_devices():
            return [SimpleNamespace(shared_memory_per_block_optin=1 << 40)]

    config = {k: v for k, v in cfg.items() if k not in ("head_dim", "grad", "q_seq_len", "kv_seq_len")}
    with mock.patch.object(core, "_launch", recording), mock.patch.object(core, "jax", Unlimited()):
        runners.mosaic(cfg["q_seq_len"], cfg["kv_seq_len"], cfg["head_dim"], grad=cfg["grad"], **config)
    return sizes


def bytes_of(check: str, env: dict) -> int:
    """The byte count a shared-memory rule compares with the limit (`... BYTES <= 232448`)."""
    tree = ast.parse(check, mode="eval").body
    assert isinstance(tree, ast.Compare) and ast.unparse(tree.comparators[0]) == str(LIMIT), check
    return expr.evaluate(ast.unparse(tree.left), env)


def clamped(cfg: dict) -> dict:
    """Per kernel, whether it runs fewer steps than max_concurrent_steps (fewer blocks than that)."""
    steps, q, kv = cfg["max_concurrent_steps"], cfg["q_seq_len"], cfg["kv_seq_len"]
    out = {"forward-shared-memory": kv // cfg["block_kv"] < steps}
    if cfg["grad"]:
        w = cfg["compute_wgs_bwd"]
        out["dq-shared-memory"] = min(q // (cfg["block_q_dq"] * w), kv // cfg["block_kv_dq"]) < steps
        out["dkv-shared-memory"] = min(kv // (cfg["block_kv_dkv"] * w), q // cfg["block_q_dkv"]) < steps
    return out


def sizes_agree(rules: dict, cfg: dict) -> None:
    """Each kernel's rule counts at least the bytes its lowering needs, and exactly them when the
    kernel runs max_concurrent_steps steps."""
    env, got = values(cfg), measured(cfg)
    TALLY["tried"] += 1
    for (name, is_clamped), size in zip(clamped(cfg).items(), got, strict=True):
        said = bytes_of(rules[name], env)
        assert said >= size, f"{name} counts {said} bytes for {cfg}, the lowering needs {size}"
        assert is_clamped or said == size, f"{name} counts {said} bytes for {cfg}, the lowering needs {size}"
        if said > LIMIT >= size:
            TALLY["refused by the rules only (steps clamped)"] += 1
    TALLY["fit" if max(got) <= LIMIT else "refused by both"] += 1


def steps_clamped(cfg: dict) -> bool:
    """Whether a kernel runs fewer steps than max_concurrent_steps (fewer blocks than that)."""
    return any(clamped(cfg).values())


def checks() -> dict:
    rules = {r.name: r.check for r in bundled_catalogue().kernels["mosaic-gpu"].rules}
    return {name: rules[name] for name in RULES}


def fits(rules: dict, cfg: dict) -> bool:
    env = values(cfg)
    return all(expr.evaluate(check, env) for check in rules.values())


TALLY = {"tried": 0, "refused by both": 0, "fit": 0, "refused by the rules only (steps clamped)": 0}


def agree(rules: dict, cfg: dict) -> None:
    said, refused = fits(rules, cfg), refused_by_lowering(cfg)
    TALLY["tried"] += 1
    assert not (said and refused), f"the rules accept {cfg}, the lowering refuses it for shared memory"
    if not said and not refused:
        assert steps_clamped(cfg), f"the rules refuse {cfg}, which the lowering takes with every step"
        TALLY["refused by the rules only (steps clamped)"] += 1
    else:
        TALLY["refused by both" if refused else "fit"] += 1


SETTINGS = dict(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)


@settings(max_examples=10, **SETTINGS)
@given(configs())
def test_shared_memory_rules_count_the_bytes_the_lowering_needs(cfg):
    sizes_agree(checks(), cfg)


def test_the_issue_47_forward_configuration():
    """What the generated sample found: head_dim=128 offered under jax.grad (232,568 bytes, 1,024
    fewer without jax.grad)."""
    rules = checks()
    grad_fwd = dict(q_seq_len=1024, kv_seq_len=1024, head_dim=128, grad=True, block_q=64, block_kv=128,
                    max_concurrent_steps=3, compute_wgs_bwd=2, block_q_dq=64, block_kv_dq=64, block_q_dkv=64,
                    block_kv_dkv=64)
    assert refused_by_lowering(grad_fwd) and not fits(rules, grad_fwd)
    assert not refused_by_lowering({**grad_fwd, "grad": False}) and fits(rules, {**grad_fwd, "grad": False})


def test_the_issue_47_dkv_configuration():
    """block_q_dkv=128 with three steps (233,608 bytes), which the two-buffer estimate the dK/dV rule was
    before issue 47 accepted: the rule now counts every step."""
    rules = checks()
    dkv = dict(q_seq_len=512, kv_seq_len=256, head_dim=128, grad=True, block_q=128, block_kv=128,
               max_concurrent_steps=3, compute_wgs_bwd=1, block_q_dkv=128, block_kv_dkv=64, block_q_dq=64,
               block_kv_dq=64)
    assert refused_by_lowering(dkv)  # (the dK/dV kernel: the forward runs two steps over 256 keys)
    assert not fits({"dkv-shared-memory": rules["dkv-shared-memory"]}, dkv)


def test_the_old_forward_rule_is_caught():
    """The planted fault: the forward rule without the logsumexp buffer accepts a configuration the
    lowering refuses under jax.grad."""
    rules = {**checks(), "forward-shared-memory": OLD_FORWARD}
    cfg = dict(q_seq_len=1024, kv_seq_len=1024, head_dim=128, grad=True, block_q=64, block_kv=128,
               max_concurrent_steps=3, compute_wgs_bwd=2, block_q_dq=64, block_kv_dq=64, block_q_dkv=64,
               block_kv_dkv=64)
    with pytest.raises(AssertionError, match="the lowering refuses it"):
        agree(rules, cfg)


@pytest.fixture(autouse=True, scope="module")
def _tally():
    yield
    print(f"\nmosaic-gpu shared memory, rules against the lowering: {TALLY}")
