"""Suggestions of this project's kernel's entries, swept over many values beyond the bad
examples: each computed value satisfies the kernel's own rules (its validators and its tiles), not
only the entry's check.

RA107: the head sizes it suggests are ones that fill the Pallas kernel's tiles (max(16, next power
of two) columns wide); the old suggestion gcd(head_dim, 256) gave 8 for head_dim 360.
RA404: the head-axis sizes it suggests, with the batch axis kept, pass every sharding check; the
old after-snippet moved the freed devices onto the batch axis, a (4, 2) mesh that batch 6 breaks.
"""

from __future__ import annotations

import pytest

pytest.importorskip("jax")

import jax  # noqa: E402
from jax.sharding import AbstractMesh  # noqa: E402

from errkit.core import suggest  # noqa: E402
from errkit.explain.matching.index import Index  # noqa: E402
from errkit_attention import _validators  # noqa: E402
from errkit_attention.pallas_attention import _MIN_BLOCK, _next_pow2  # noqa: E402

INDEX = Index.load()


def values(code: str, params: dict) -> dict[str, object]:
    """label -> computed value of every suggestion of an entry for these params."""
    return {s["label"]: s.get("value") for fix in INDEX.entries[code]["fixes"] for s in suggest.suggestions(fix, params)}


def padded(head_dim: int) -> int:
    """The width the Pallas kernel pads head_dim to (errkit_attention/pallas_attention.py, pallas_attention)."""
    return max(_MIN_BLOCK, _next_pow2(head_dim))


@pytest.mark.parametrize("head_dim", range(257, 1025))
def test_ra107_head_sizes_run_without_padding(head_dim):
    found = values("RA107", {"head_dim": head_dim, "implementation": "pallas"})
    sizes = next(v for label, v in found.items() if label.startswith("head sizes d"))
    assert sizes == [d for d in (16, 32, 64, 128, 256) if head_dim % d == 0]
    for d in sizes:
        assert head_dim % d == 0 and d <= 256 and padded(d) == d, d
        _validators.check_ra107(d, "pallas")
    assert found["implementation that takes this head_dim"] == ["xla"]


def test_ra107_the_old_suggestion_padded():
    assert padded(8) == 16  # gcd(360, 256) == 8: what the old suggestion gave for head_dim 360
    assert values("RA107", {"head_dim": 360, "implementation": "pallas"})[
        "head sizes d that fill the Pallas kernel's tiles (none: use implementation='xla')"] == []


def _sharding_ok(batch: int, num_kv_heads: int, shape: tuple[int, int]) -> bool:
    q = jax.ShapeDtypeStruct((batch, 16, 4 * num_kv_heads, 16), "float32")
    k = jax.ShapeDtypeStruct((batch, 16, num_kv_heads, 16), "float32")
    try:
        _validators.validate_sharding(AbstractMesh(shape, ("data", "model")), "data", "model", q, k, "bshd")
    except _validators.CatalogueError:
        return False
    return True


@pytest.mark.parametrize("batch", [1, 2, 3, 4, 6, 8, 12])
def test_ra404_head_axis_sizes_keep_every_sharding_check(batch):
    for num_kv_heads in range(1, 13):
        for batch_axis in [d for d in (1, 2, 3, 4, 8) if batch % d == 0]:
            for head_axis in (2, 3, 4, 8, 16):
                if num_kv_heads % head_axis == 0:
                    continue
                params = {"num_kv_heads": num_kv_heads, "head_axis": "model", "head_axis_size": head_axis}
                found = values("RA404", params)
                assert max(found["valid head-axis sizes that fit on the current axis' devices"]) < head_axis
                for label in ("valid head-axis sizes", "valid head-axis sizes that fit on the current axis' devices"):
                    for size in found[label]:
                        assert _sharding_ok(batch, num_kv_heads, (batch_axis, size)), (batch, num_kv_heads, label, size)


def test_ra404_the_old_mesh_broke_ra403():
    # 6 kv heads, batch 6, mesh (2, 4): the old after-snippet's (4, 2) mesh, the new one's (2, 2)
    assert not _sharding_ok(6, 6, (2, 4))
    assert not _sharding_ok(6, 6, (4, 2))
    assert _sharding_ok(6, 6, (2, 2))


@pytest.mark.parametrize("code, names", [("RA211", ("block_q", "block_kv")),
                                         ("RA212", ("block_q_dkv", "block_kv_dkv", "block_q_dq", "block_kv_dq"))])
def test_block_suggestions_pass_the_block_checks(code, names):
    """One configuration of every size, each the nearest valid size up, a valid one kept: it passes."""
    for name in names:
        for bad in list(range(0, 2049, 8)) + [None, 128.0]:
            params = {"has_config": True, **{n: 128 for n in names}, name: bad}
            found = values(code, params)
            (label,) = [label for label in found if label.startswith(", ".join(names))]
            (config,) = found[label]
            fixed = dict(params, **dict(zip(names, config)))
            assert all(fixed[n] == 128 for n in names if n != name), (params, config)  # the valid sizes are kept
            _validators.CHECKS[code](**fixed)
