"""The catalogue recognises every wording users meet from the kernels we promise to cover."""

import re
from pathlib import Path

import pytest

from errkit.core import template, values
from errkit.explain.matching.index import Index
from errkit.explain.matching.line import match_line
from support import ROOT

pytestmark = pytest.mark.slow  # every test reads the installed jax's attention kernels

XALGO = ROOT.parent / "shared" / "upstream" / "x-algorithm-messages.md"


def xalgo_wordings():
    if not XALGO.exists():
        return []
    rows = re.findall(r"^\| (\w+) \| `(.*)` \|$", XALGO.read_text(), re.M)
    return [(exc, text) for exc, text in rows if exc != "exception"]


def sample_rendering(text: str, seed: int) -> str:
    """The wording with each placeholder filled with a plausible value of the type its name suggests."""
    tpl = template.parse(text)

    def value(field):
        name = field.name.lower()
        if "shape" in name:
            return values.sample("shape", seed)
        if "dtype" in name:
            return "bfloat16"
        if any(w in name for w in ("method", "impl")):
            return "clip"
        return 3 + seed * 64 + len(name)

    return tpl.render(value)


@pytest.mark.skipif(not XALGO.exists(), reason="../shared/upstream not present")
@pytest.mark.parametrize("exception, wording", xalgo_wordings(), ids=lambda x: x[:40] if isinstance(x, str) else None)
def test_every_x_algorithm_wording_is_recognised(exception, wording):
    index = Index.load()
    for seed in (0, 1):
        text = sample_rendering(wording, seed)
        found = match_line(index, f"{exception}: {text}")
        assert found is not None and found.exact, text
        # the value of every placeholder is read back
        assert len(found.params) == len({f.name for f in template.parse(wording).fields}), (text, found.params)


def test_the_x_algorithm_list_was_read():
    if XALGO.exists():
        assert len(xalgo_wordings()) == 29


# -- JAX's own attention kernels: every raise site with a message is catalogued --------------------

JAX_KERNELS = [
    "experimental/pallas/ops/gpu/attention.py",
    "experimental/pallas/ops/gpu/attention_mgpu.py",
    "experimental/pallas/ops/gpu/decode_attention.py",
    "experimental/pallas/ops/gpu/paged_attention.py",
    "experimental/pallas/ops/tpu/flash_attention.py",
    "experimental/pallas/ops/tpu/splash_attention",
    "experimental/pallas/ops/tpu/paged_attention",
    "experimental/pallas/ops/tpu/ragged_paged_attention",
    "_src/nn/functions.py",
    "_src/cudnn/fused_attention_stablehlo.py",
]
# Functions of jax/_src/nn/functions.py that jax.nn.dot_product_attention never calls.
NOT_ATTENTION = {"glu", "standardize", "_one_hot", "scaled_matmul", "get_scaled_dot_general_config"}
# Sites the scan cannot judge from source alone, each catalogued by other means. This list may only
# shrink, and it is held to that: it must name exactly the sites the scan finds uncatalogued, so an
# entry that is catalogued now (or no longer in jax) fails until it is removed.
# (Emptied once the scan read wordings a site prints for some values of its fields, flash_attention's
# `{prefix}{suffix}={minor} should ...` among them, and wordings placed at a site with no fixed text,
# splash's tuple-of-shapes asserts: errkit/scan/coverage.py printable and placed_at.)
EXEMPT: set[tuple[str, int]] = set()


def test_every_jax_attention_raise_with_a_message_is_catalogued():
    jax = pytest.importorskip("jax")
    from errkit import scan

    root = Path(jax.__file__).parent
    result = scan.scan_paths([str(root / rel) for rel in JAX_KERNELS], report=lambda line: None)
    assert result.files >= 18 and not result.problems
    coverage = scan.Coverage(Index.load())
    uncatalogued: dict[tuple[str, int], str] = {}
    for site in result.sites:
        if not site.template or site.bare_function in NOT_ATTENTION:
            continue  # empty messages: tests/test_upstream_*.py raise them for real
        if coverage.covered_by(site) is None:
            uncatalogued[(Path(site.path).name, site.line)] = f"{site.path}:{site.line}: {site.template}"
    gaps = [text for place, text in uncatalogued.items() if place not in EXEMPT]
    assert not gaps, "uncatalogued upstream wordings:\n" + "\n".join(gaps)
    stale = EXEMPT - uncatalogued.keys()
    assert not stale, f"remove {sorted(stale)} from EXEMPT: the scan finds these sites catalogued now, or finds no site there"
    functions = {site.bare_function for site in result.sites if site.template}
    gone = NOT_ATTENTION - functions
    assert not gone, f"remove {sorted(gone)} from NOT_ATTENTION: no raise with a message in a function of that name"
    assert len(result.sites) > 200
