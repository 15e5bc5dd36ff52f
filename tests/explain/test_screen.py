"""The screening of an index read from a file (errkit/explain/screen.py): every index errkit
generates passes it; what explain could not read safely is Unusable, saying where and why.
Installed catalogues skipped for it, end to end: test_installed_catalogues.py."""

import json

import pytest

from errkit.core import index_format, values
from errkit.explain import screen
from support import FIXTURES, ROOT


def test_the_records_are_the_index_formats():
    assert set(screen.TOP) == set(index_format.TOP_KEYS) - {"$comment"}
    assert set(screen.ENTRY) == set(index_format.ENTRY_KEYS) and set(screen.ENTRY_OPTIONAL) == set(index_format.ENTRY_OPTIONAL_KEYS)
    assert set(screen.PARAM) == set(index_format.PARAM_KEYS) and set(screen.FIX) == set(index_format.FIX_KEYS)
    assert set(screen.FIX_OPTIONAL) == set(index_format.FIX_OPTIONAL_KEYS)
    assert tuple(screen.CASE) == index_format.CASE_KEYS and tuple(screen.CASE_OPTIONAL) == index_format.CASE_OPTIONAL_KEYS
    assert set(screen.KERNEL_OPTIONAL) == set(index_format.KERNEL_OPTIONAL_KEYS)
    assert set(screen.READ) == set(index_format.READ_KEYS) and set(screen.WORDING) == set(index_format.WORDING_KEYS)
    assert set(screen.RELEASES) == set(index_format.RELEASES_KEYS) and set(screen.KERNEL) == set(index_format.KERNEL_KEYS)


def test_every_index_errkit_generates_passes():
    from errkit.explain.registry import catalog_index
    from errkit.generate.index import compiled_index

    data = screen.read(str(ROOT / "errkit" / "_index.json"))
    assert len(data["entries"]) > 100 and all(isinstance(e, dict) for e in data["entries"].values())
    assert data["vetted"]["RA105"]  # the suggestions' code, as the cache keeps it
    screen.screened(catalog_index(FIXTURES / "kernels", compiled_index))


@pytest.fixture(scope="module")
def small() -> str:
    from errkit.explain.registry import catalog_index
    from errkit.generate.index import compiled_index

    return json.dumps(catalog_index(FIXTURES / "kernels", compiled_index))


@pytest.mark.parametrize("change, why", [
    (lambda d: d.pop("entries"), "the index: no 'entries'"),
    (lambda d: d.update(format=True), "the index: 'format' is of type bool"),  # a bool is no number here
    (lambda d: d["entries"].update(XX101="{"), "entry 'XX101': not JSON"),
    (lambda d: d["entries"].update(XX101=[]), "entry 'XX101': of type list, not an object"),
    (lambda d: d["entries"]["XX101"]["params"]["n"].update(type="complex"), "entry 'XX101' param 'n': unknown type 'complex'"),
    (lambda d: d["entries"]["XX101"].update(tags=[1]), "entry 'XX101' tags: not a list of strings"),
    (lambda d: d["entries"]["XX101"]["fixes"][0]["suggest"].update(x=1), "entry 'XX101' fix 1 suggestion 'x': not a string"),
    (lambda d: d["entries"]["XX101"]["fixes"][0]["suggest"].update(x="-" * 40 + "n"),
     "entry 'XX101' fix 1 suggestion 'x': an expression nested deeper than 32 levels is not allowed"),
    (lambda d: d["entries"]["XX101"]["fixes"][0]["sets"].update(x=None), "entry 'XX101' fix 1 sets 'x': not a string"),
    (lambda d: d["entries"]["XX103"]["reads"][0].update(regex="("), "entry 'XX103' read 1: no group"),
    (lambda d: d["wordings"][0].update(template="x" * (index_format.MAX_LINE + 1)), "wording 1: a template longer than 16384"),
    (lambda d: d["wordings"][0].update(key="k" * 1001), "wording 1: a key longer than 1000 characters"),
    (lambda d: d["wordings"][0].update(regex="(?P<g0>1)(?P<g1>2)" + "x" * 65_536), "wording 1: a regex longer than 65536"),
    (lambda d: d["wordings"][0].update(regex="(?P<g0"), "wording 1: a regex that does not parse"),
    (lambda d: d["wordings"][0].update(releases={"dist": "jax", "specifier": ">=1", "bounds": [[">>", [1]]], "shown": ""}),
     "wording 1 releases: a bound ['>>', [1]] other than [operator, [numbers]]"),
    (lambda d: d["wordings"][0].update(kernels=[None]), "wording 1 kernels: not a list of strings"),
    (lambda d: d["kernels"]["tiles"].update(names="tiles"), "kernel 'tiles': 'names' is of type str"),
])
def test_what_explain_cannot_read_safely_is_unusable(small, change, why):
    data = json.loads(small)
    data["entries"] = {code: json.loads(e) if isinstance(e, str) else e for code, e in data["entries"].items()}
    change(data)
    with pytest.raises(screen.Unusable) as err:
        screen.screened(data)
    assert str(err.value).startswith(why), str(err.value)


def test_a_file_is_read_within_its_size(tmp_path):
    path = tmp_path / "index.json"
    path.write_bytes(b"\xff")
    with pytest.raises(screen.Unusable, match="not JSON"):
        screen.read(str(path))
    path.write_text("[" * 100_000)
    with pytest.raises(screen.Unusable, match="not JSON"):
        screen.read(str(path))
    with pytest.raises(screen.Unusable, match="cannot be read"):
        screen.read(str(tmp_path / "missing.json"))
    with open(path, "wb") as handle:
        handle.truncate(screen.MAX_INDEX)  # at the limit: read (and no JSON)
    with pytest.raises(screen.Unusable, match="not JSON"):
        screen.read(str(path))
    with open(path, "r+b") as handle:
        handle.truncate(screen.MAX_INDEX + 1)
    with pytest.raises(screen.Unusable, match="67108865 bytes, over the 64 MB"):
        screen.read(str(path))
    assert values.TYPES == ("int", "float", "bool", "str", "dtype", "shape", "bytes")
