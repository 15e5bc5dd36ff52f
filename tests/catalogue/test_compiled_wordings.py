"""The compiled side's wordings (issue 51), held against the catalogue.

`catalog/harvest/compiled.json` (scripts/harvest_compiled.py): the message sites of jaxlib's Mosaic
C++, the Pallas lowerings and Mosaic GPU's Python at every jax release tag, in the shape of
catalog/harvest/jax.json. `catalog/harvest/reported.json`: the wordings of code whose source is not
public (libtpu: the Mosaic header, most reasons, every TPU memory exhaustion; XLA's GPU runtime and
cuDNN), recorded by hand, each with the public reports it was read in and a text of it.
Here, with no network: the harvest's shape; each harvested wording the catalogue holds is answered by
its entry with the values read back; each reported wording's text is answered by its entry, and one
the catalogue has no entry for is answered by none exactly.
"""

from __future__ import annotations

import io
import json
import re

import pytest

from errkit.explain import command
from support import CATALOG
from errkit.core.index_format import CONTEXT_MARKS

COMPILED = json.loads((CATALOG / "harvest" / "compiled.json").read_text(encoding="utf-8"))
REPORTED = json.loads((CATALOG / "harvest" / "reported.json").read_text(encoding="utf-8"))
RELEASES: list[str] = COMPILED["releases"]


def explain(text: str) -> tuple[int, dict]:
    out = io.StringIO()
    rc = command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO())
    lines = out.getvalue().splitlines()
    return rc, (json.loads(lines[0]) if lines else {})


# -- the harvest ----------------------------------------------------------------------------------


def _key(release: str) -> tuple:
    return (1,) if release == "main" else (0, *map(int, release.split(".")))


def test_the_compiled_harvest_covers_every_release_and_only_its_areas():
    assert RELEASES[0] == "0.4.25" and RELEASES[-1] == "main" and RELEASES == sorted(RELEASES, key=_key)
    assert len(RELEASES) >= 37 and "0.8.1" in RELEASES and "0.11.0" in RELEASES
    areas = [(name, re.compile(files)) for name, files, _ in COMPILED["areas"]]
    seen_areas, kinds = set(), set()
    for template, sites in COMPILED["wordings"].items():
        assert template.strip(), "a message site without a message"
        for site in sites:
            area = next((name for name, files in areas if files.fullmatch(site["path"])), None)
            assert area, site["path"]
            seen_areas.add(area)
            kinds.add("c++" if site["path"].endswith((".cc", ".h")) else "python")
            assert site["at"] and all(RELEASES.index(a) <= RELEASES.index(b) for a, b, _ in site["at"]), (template, site)
    assert seen_areas == {name for name, _ in areas} and kinds == {"c++", "python"}
    assert len(COMPILED["wordings"]) > 3000


def test_the_mosaic_tpu_passes_end_in_jaxlib_at_0_8_1():
    """They moved into libtpu at jax 0.8.2: no pass wording of jaxlib is harvested after 0.8.1."""
    last = {b for sites in COMPILED["wordings"].values() for s in sites
            if "/transforms/" in s["path"] and s["path"].endswith(".cc") and not s["path"].endswith("/serde.cc")  # (de)serialisation stays
            for _, b, _ in s["at"]}
    assert max(last, key=_key) == "0.8.1"


# -- harvested wordings the catalogue holds --------------------------------------------------------

# harvested template -> (the entry answering it, values read back). Rendering: each `{expression}` of
# the template takes the value given here by its expression, else 128.
HELD = {
    "Not Implemented: The last dim size is not {ctx.target_shape[1]} in original base memref": ("RA801", {}),
    "Expected a tiled memref": ("RA804", {}),
    "unsupported shape cast": ("RA807", {}),
    "infer-vector-layout: unsupported shape cast": ("RA807", {}),
    "Mosaic kernels cannot be automatically partitioned. Please wrap the call in a shard_map or xmap.": ("RA809", {}),
    "Mosaic kernels cannot be automatically partitioned. Please wrap the call in a shard_map.": ("RA809", {}),
    "Unrecognized TPU device kind: {device_kind}.": ("RA813", {"device_kind": "cpu"}),
    "Unsupported TPU device kind: {device_kind}": ("RA813", {"device_kind": "cpu"}),
    "cannot statically prove that index in dimension {dim} is a multiple of {tiling}": ("RA816", {"dim": 1, "tiling": 128}),
    "The compiled module fails MLIR verification": ("RA818", {}),
    "Scalar prefetch not supported in Mosaic GPU lowering.": ("RA836", {}),
    "Compiler params for platform {platform} cannot be used for {expected_platform} lowering.": ("RA836", {"platform": "tpu", "expected_platform": "gpu"}),
    "scalar prefetch not implemented in the Triton backend": ("RA836", {}),
    "Scalar prefetch not supported in Triton lowering.": ("RA836", {}),
    "Mosaic GPU kernel exceeds available shared memory {smem_bytes=} > 228000": ("RA833", {"smem_bytes": 300000}),
    "Mosaic GPU kernel exceeds available shared memory: {smem_bytes=} > {max_smem_bytes=}": ("RA833", {"smem_bytes": 300000, "max_smem_bytes": 232448}),
    "Ref must have a number of elements that is a multiple of {WARPGROUP_SIZE} (got {math.prod(memref_type.shape)})": ("RA831", {"WARPGROUP_SIZE": 128, "math.prod(memref_type.shape)": 64}),
    "Mixed input dtypes for matrix multiplication unsupported: lhs={a.dtype}, rhs={b.dtype}": ("RA834", {"a.dtype": "bfloat16", "b.dtype": "float32"}),
    "Operand dtypes must match: {a.dtype} != {b.dtype}": ("RA834", {"a.dtype": "bfloat16", "b.dtype": "float32"}),
    "WGMMA requires A and B to have the same element type, got: {element_type2} and {element_type}": ("RA834", {"element_type2": "bf16", "element_type": "f32"}),
    "MMA requires A and B to have the same element type, got: {element_type2} and {element_type}": ("RA834", {"element_type2": "bf16", "element_type": "f32"}),
    "The Pallas Triton lowering currently requires that all operations have array arguments and results whose size is a power of 2. Encountered an array of shape {shape}": ("RA832", {"shape": "(3, 128)"}),
}


def fill(template: str, values: dict) -> str:
    """The template with each `{expression}` (or `{name=}`, printed `name=value`) given its value."""
    def value(m: re.Match) -> str:
        expr = m.group(1)
        name = expr[:-1] if expr.endswith("=") else expr
        shown = str(values.get(name, 128))
        return f"{name}={shown}" if expr.endswith("=") else shown
    return re.sub(r"(?<!\{)\{([^{}]+)\}(?!\})", value, template).replace("{{", "{").replace("}}", "}")


@pytest.mark.parametrize("template", sorted(HELD), ids=lambda t: t[:60])
def test_a_harvested_wording_the_catalogue_holds_is_answered_by_its_entry(template):
    code, values = HELD[template]
    assert template in COMPILED["wordings"], "not harvested (any more): the catalogue's wording may be stale"
    rc, first = explain(fill(template, values))
    assert (rc, first.get("code"), first.get("confidence")) == (0, code, "exact"), first
    read = {_plain(v) for v in (first.get("params") or {}).values()}
    assert {_plain(v) for v in values.values()} <= read, first.get("params")


def _needs_context(code: str) -> bool:
    from errkit.explain.matching.index import Index

    return bool(Index.load().entries[code].get("needs_context"))


def _plain(value) -> str:
    return re.sub(r"[\[\]() ]", "", str(value))


# -- wordings of closed code, from public reports ---------------------------------------------------


def _reported_params():
    out = []
    for n, record in enumerate(REPORTED):
        marks = [pytest.mark.xfail(strict=True, reason=record["known_miss"])] if record.get("known_miss") else []
        out.append(pytest.param(record, id=f"{n}-{record['template'][:50]}", marks=marks))
    return out


def test_every_reported_wording_names_where_it_was_seen():
    for record in REPORTED:
        assert record["template"] and record["example"] and record["area"], record
        assert record["evidence"] and all(e.get("url", "").startswith("https://") or e.get("note") for e in record["evidence"]), record
        assert record["entry"] is None or re.fullmatch(r"RA\d{3}", record["entry"]), record


@pytest.mark.parametrize("record", _reported_params())
def test_a_reported_wording_is_answered_by_its_entry(record):
    rc, first = explain(record["example"])
    if record["entry"] is None:  # a failure of another cause: no exact answer
        assert not (rc == 0 and first.get("confidence") == "exact"), first.get("code")
    elif _needs_context(record["entry"]) and not any(mark in record["example"] for mark in CONTEXT_MARKS):
        # other compilers print it too (issue 51): approximate, saying why, until the text shows JAX's side
        assert (rc, first.get("code"), first.get("confidence")) == (1, record["entry"], "approximate"), first
        assert first["context"]["unconfirmed"]
        rc, first = explain("jaxlib.xla_extension.XlaRuntimeError: the error below\n" + record["example"])
        assert (rc, first.get("code"), first.get("confidence")) == (0, record["entry"], "exact"), first
    else:
        assert (rc, first.get("code"), first.get("confidence")) == (0, record["entry"], "exact"), first
