"""`errkit fmt`, `errkit new`, `errkit import` and the shipped JSON Schema."""

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from support import CATALOG, ROOT
from errkit.catalogue.load import entry_files, load, plain, read_document

SEED = ROOT.parent / "shared" / "seeds" / "000_0b5ee60503544626.json"


def test_fmt_changes_nothing_on_the_catalogue(run_cli):
    code, out, err = run_cli("--catalog", CATALOG, "fmt", "--check")
    assert code == 0, out + err
    assert out == ""


def test_fmt_keeps_comments_and_key_order_and_is_idempotent(tmp_path, run_cli):
    area = tmp_path / "inputs"
    area.mkdir()
    path = area / "RA105-x.yaml"
    original = (CATALOG / "inputs" / "RA105-gqa-head-count.yaml").read_text()
    messy = original.replace("# yaml-language-server: $schema=../entry.schema.json\n", "")
    messy = messy.replace("check: num_q_heads", "# why: GQA groups must be whole\ncheck:    num_q_heads")
    messy = messy.replace("prevention:\n  - ", "prevention:\n- ")
    path.write_text(messy)
    code, out, _ = run_cli("--catalog", tmp_path, "fmt")
    assert code == 0 and "reformatted" in out
    once = path.read_text()
    assert "# why: GQA groups must be whole\ncheck: num_q_heads" in once
    assert "prevention:\n  - Derive" in once
    assert once.startswith("# yaml-language-server: $schema=../entry.schema.json\n")
    keys = [line.split(":")[0] for line in once.splitlines() if line and line[0].isalpha()]
    assert keys[:6] == ["code", "slug", "title", "exception", "message", "params"]
    code, out, _ = run_cli("--catalog", tmp_path, "fmt")
    assert code == 0 and out == ""
    assert path.read_text() == once


def test_fmt_leaves_a_broken_file_alone(tmp_path, run_cli):
    (tmp_path / "inputs").mkdir()
    path = tmp_path / "inputs" / "RA105-x.yaml"
    path.write_text("code: [unclosed\n")
    code, _, err = run_cli("--catalog", tmp_path, "fmt")
    assert code == 1 and "yaml-syntax" in err
    assert path.read_text() == "code: [unclosed\n"


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not present")
def test_import_seed_produces_an_entry_that_lints_clean(tmp_path, run_cli):
    code, out, _ = run_cli("import", SEED, "--into", tmp_path)
    assert code == 0
    written = Path(out.strip())
    assert written.parent == tmp_path / "imported"
    code, lint_out, _ = run_cli("lint", tmp_path)
    assert code == 0, lint_out
    entry = load(tmp_path).entries[0]
    record = json.loads(SEED.read_text())["record"]
    assert entry.message == record["errorMessage"]
    assert entry.check == "num_q_heads % num_kv_heads == 0"
    assert entry.bad_examples[0] == {"num_q_heads": 12, "num_kv_heads": 8}
    assert entry.origin["url"] == record["githubUrl"]
    assert entry.origin["dataset_version"] == json.loads(SEED.read_text())["datasetVersion"]
    assert list(entry.prevention) == record["preventionTips"]
    assert entry.fixes[0].after.strip() == "num_q_heads, num_kv_heads = 12, 4"


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not present")
def test_import_reads_trigger_scenarios_given_as_a_list(tmp_path, run_cli):
    """A record's triggerScenarios may be a list of scenarios: each is a trigger, and the bad
    example is read from them all (a list once crashed the bad example's reader)."""
    seed = json.loads(SEED.read_text())
    seed["record"]["triggerScenarios"] = ["After head-pruning of q but not kv.", "num_q_heads=12 with num_kv_heads=8."]
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed))
    code, _, err = run_cli("import", path, "--into", tmp_path / "out")
    assert code == 0, err
    entry = load(tmp_path / "out").entries[0]
    assert entry.bad_examples[0] == {"num_q_heads": 12, "num_kv_heads": 8}
    assert list(entry.triggers) == seed["record"]["triggerScenarios"]


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not present")
def test_import_skips_a_wording_the_catalogue_already_covers(tmp_path, run_cli):
    shutil.copytree(CATALOG, tmp_path / "catalog")
    code, out, err = run_cli("--catalog", tmp_path / "catalog", "import", SEED)
    assert code == 1 and out == ""
    assert "already covered by RA105" in err


@pytest.mark.skipif(not SEED.exists(), reason="shared seeds not present")
def test_import_takes_a_new_wording_not_covered_by_a_message_less_entry(tmp_path, run_cli):
    """An entry recognised only by where it is raised (RA699: an empty message) covers no wording."""
    shutil.copytree(CATALOG, tmp_path / "catalog")
    seed = json.loads(SEED.read_text())
    seed["record"]["errorMessage"] = "page_size={page_size} does not divide pages_per_sequence={pages_per_sequence}"
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed))
    code, out, err = run_cli("--catalog", tmp_path / "catalog", "import", path)
    assert "already covered" not in err
    assert code == 0 and Path(out.strip()).is_file(), err


@pytest.mark.parametrize("content, message", [("{not json", "invalid JSON"), ('{"x": 1}', "expected dataset records")])
def test_import_bad_input(tmp_path, run_cli, content, message):
    path = tmp_path / "r.json"
    path.write_text(content)
    code, _, err = run_cli("import", path, "--into", tmp_path / "out")
    assert code == 2 and message in err
    assert "Traceback" not in err


def test_import_missing_file(tmp_path, run_cli):
    code, _, err = run_cli("import", tmp_path / "missing.json", "--into", tmp_path)
    assert code == 2 and "no such file" in err


def test_new_scaffolds_an_entry_that_lints_clean(tmp_path, run_cli):
    (tmp_path / "inputs").mkdir()
    shutil.copy(CATALOG / "inputs" / "RA105-gqa-head-count.yaml", tmp_path / "inputs")
    shutil.copytree(CATALOG / "kernels", tmp_path / "kernels")  # the kernels its wordings name
    code, out, _ = run_cli("--catalog", tmp_path, "new", "inputs", "my-check")
    assert code == 0
    assert Path(out.strip()).name == "RA106-my-check.yaml"
    code, lint_out, _ = run_cli("lint", tmp_path)
    assert code == 0, lint_out
    code, _, err = run_cli("--catalog", tmp_path, "new", "inputs", "other", "--code", "RA105")
    assert code == 2 and "taken" in err
    code, _, err = run_cli("--catalog", tmp_path, "new", "inputs", "Not A Slug")
    assert code == 2 and "kebab-case" in err


def test_schema_accepts_every_entry_and_rejects_broken_ones():
    schema = json.loads((CATALOG / "entry.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in entry_files(CATALOG):
        data, _ = read_document(path, str(path))
        assert not list(validator.iter_errors(plain(data))), path
    good = plain(read_document(CATALOG / "inputs" / "RA105-gqa-head-count.yaml", "x")[0])
    for broken in ({**good, "titel": "x"}, {k: v for k, v in good.items() if k != "title"}, {**good, "exception": "Oops"}):
        assert list(validator.iter_errors(broken))


def test_every_entry_file_references_the_schema():
    for path in entry_files(CATALOG):
        assert path.read_text().startswith("# yaml-language-server: $schema=../entry.schema.json\n"), path
