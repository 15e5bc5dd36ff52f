"""The ledger (catalog/ledger/*.json, errkit/catalogue/ledger.py): what running the advice on the real
kernels showed reaches the index, explain's answer and the entry page; a TPU fix whose values all
worked on a TPU loses its unverified label; a file of another shape is left out, never a crash."""

from __future__ import annotations

import io
import json
import shutil

from errkit.catalogue import ledger
from errkit.catalogue.load import load
from errkit.explain import command
from errkit.explain.matching.index import Index
from errkit.generate import index as index_gen
from errkit.generate import site
from support import FIXTURES


def run(platform: str, device: str, entries: dict, date: str = "2026-01-05", libtpu: str | None = None) -> dict:
    return {"platform": platform, "device": device, "jax": "0.10.2", "jaxlib": "0.10.2",
            **({"libtpu": libtpu} if libtpu else {}), "date": date, "seed": 47, "calls": 9, "entries": entries}


def catalogue_with(tmp_path, *runs, raw: str | None = None):
    root = tmp_path / "c"
    shutil.copytree(FIXTURES / "kernels", root)
    (root / ledger.LEDGER_DIR).mkdir()
    for n, data in enumerate(runs):
        (root / ledger.LEDGER_DIR / f"run{n}.json").write_text(json.dumps(data))
    if raw is not None:
        (root / ledger.LEDGER_DIR / "broken.json").write_text(raw)
    return load(root).catalogue


TPU = dict(platform="tpu", device="TPU v5 lite", libtpu="0.0.21")


def test_runs_of_one_platform_add_up_and_others_stay_apart(tmp_path):
    cat = catalogue_with(tmp_path,
                         run(**TPU, entries={"XX101": {"calls": 3, "offered": 5, "worked": 5, "fixes": {"2": {"offered": 5, "worked": 5}}}}),
                         run(**TPU, date="2026-01-06", entries={"XX101": {"calls": 2, "offered": 4, "worked": 3, "fixes": {}}}),
                         run("cpu", "CPU", {"XX101": {"calls": 7, "offered": 10, "worked": 10, "fixes": {}}}))
    records = ledger.read(cat.root)["XX101"]
    assert [(r["platform"], r["calls"], r["offered"], r["worked"], r["date"]) for r in records] == [
        ("cpu", 7, 10, 10, "2026-01-05"), ("tpu", 5, 9, 8, "2026-01-06")]
    assert records[1]["said"] == ("verified on TPU v5 lite with jax 0.10.2, libtpu 0.0.21, 2026-01-06: 8 of 9 offered "
                                  "values and snippet changes worked (5 generated calls)")


def test_a_ledger_of_another_shape_is_left_out(tmp_path):
    for raw in ("not json", "[]", json.dumps({"platform": "gpu", "entries": {}}),
                json.dumps(run("cpu", "CPU", {"XX101": {"calls": "3", "offered": 1, "worked": 1}}))):
        cat = catalogue_with(tmp_path / str(abs(hash(raw))), raw=raw)
        assert ledger.read(cat.root) == {}


def test_the_index_explain_and_the_page_show_it_and_a_tpu_verified_fix_is_no_longer_unverified(tmp_path):
    fixes = {"2": {"offered": 3, "worked": 3}}  # fix 2 is `unverified: needs a TPU.`
    cat = catalogue_with(tmp_path, run(**TPU, entries={"XX101": {"calls": 3, "offered": 3, "worked": 3, "fixes": fixes}}))
    data = index_gen.build(cat)
    entry = json.loads(json.dumps(data["entries"]["XX101"]))
    assert entry["verified"][0]["worked"] == 3 and entry["fixes"][1]["unverified"] is None
    out = io.StringIO()
    command.run(["ValueError: n=96 should be divisible by block=36"], as_json=True, show_all=False, out=out,
                err=io.StringIO(), index=Index(json.loads(json.dumps(data))))
    res = json.loads(out.getvalue().splitlines()[0])
    assert res["verified"][0]["said"].startswith("verified on TPU v5 lite with jax 0.10.2")
    text = io.StringIO()
    command.run(["ValueError: n=96 should be divisible by block=36"], as_json=False, show_all=False, out=text,
                err=io.StringIO(), index=Index(json.loads(json.dumps(data))))
    assert "\n  verified on TPU v5 lite with jax 0.10.2, libtpu 0.0.21, 2026-01-05: 3 of 3" in text.getvalue()
    page = site.pages(cat)["site/docs/errors/XX101.md"]
    assert "## Verified on the real kernels" in page and '!!! warning "Unverified"' not in page


def test_a_fix_that_failed_on_the_tpu_keeps_its_label(tmp_path):
    cat = catalogue_with(tmp_path, run(**TPU, entries={"XX101": {"calls": 3, "offered": 3, "worked": 2,
                                                                 "fixes": {"2": {"offered": 3, "worked": 2}}}}))
    assert index_gen.build(cat)["entries"]["XX101"]["fixes"][1]["unverified"] == "needs a TPU."
