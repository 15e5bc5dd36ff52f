"""The one writer of entry YAML (errkit/catalogue/writing.py): key order, the examples, params,
fixes and variants blocks, literal blocks, comments, the modeline, and round trips through the
loader and lint. `errkit new`, `import` and `scan --emit` all write through it."""

import pytest

from errkit.catalogue.load import load, yaml
from errkit.catalogue.writing import ENTRY_KEYS, MODELINE, entry_document, entry_text, formatted, quoted


def fields(**overrides):
    """A complete entry's plain fields, given in an order unlike the format's."""
    base = {
        "examples": {"good": [{"block": 128, "seq_len": 512}], "bad": [{"block": 100, "seq_len": 512}]},
        "fixes": [{"after": "attention(q, block=128)\n", "summary": "Use a block that divides the length.",
                   "before": "attention(q, block=100)\n"}],
        "variants": [{"location": "ops.py:12 in attention", "aliases": {"cfg.block": "block"},
                      "message": "block {cfg.block} does not divide {seq_len}", "source": "ops.py (attention)"}],
        "explanation": "The kernel walks the sequence in whole blocks.\n\nA remainder has no block.\n",
        "check": "seq_len % block == 0",
        "params": {"block": {"description": "Block size.", "type": "int"},
                   "seq_len": {"type": "int", "description": "Sequence length."}},
        "triggers": ["block=100 with seq_len=512"],
        "message": "{block=} must divide {seq_len=}",
        "exception": "ValueError",
        "title": "Block does not divide the length",
        "slug": "block-divides-length",
        "code": "RA150",
        "tags": ["blocks"],
    }
    base.update(overrides)
    return base


def test_keys_follow_the_entry_format_whatever_order_the_fields_come_in():
    doc = entry_document(fields(explain_only=True, source="ops.py (attention)", location="ops.py:10"))
    assert list(doc) == [k for k in ENTRY_KEYS if k in doc]
    assert list(doc)[:9] == ["code", "slug", "title", "exception", "message", "source", "location", "explain_only", "params"]
    assert list(doc["params"]["block"]) == ["type", "description"]
    assert list(doc["fixes"][0]) == ["summary", "before", "after"]
    assert list(doc["variants"][0]) == ["message", "source", "aliases", "location"]
    assert list(doc["examples"]) == ["bad", "good"]


def test_none_leaves_a_field_out_and_an_empty_list_stays():
    doc = entry_document(fields(check=None, examples=None, tags=[], variants=[]))
    assert "check" not in doc and "examples" not in doc
    text = entry_text(doc)
    assert "\ntags: []\nvariants: []\n" in text


def test_an_unknown_field_is_refused():
    with pytest.raises(ValueError, match="'titel'"):
        entry_document(fields(titel="typo"))
    with pytest.raises(ValueError, match="a fix"):
        entry_document(fields(fixes=[{"summary": "x", "afterwards": "y"}]))


def test_examples_rows_are_flow_style_one_line_each():
    text = entry_text(entry_document(fields(examples={"bad": [{"shape": (4, 4), "n": 3}, {"shape": (2,), "n": 1}],
                                                      "good": [{"shape": (8, 8), "n": 4}]})))
    assert text.endswith("examples:\n  bad:\n    - {shape: [4, 4], n: 3}\n    - {shape: [2], n: 1}\n"
                         "  good:\n    - {shape: [8, 8], n: 4}\n")


def test_variant_aliases_are_flow_style():
    text = entry_text(entry_document(fields()))
    assert "\n    aliases: {cfg.block: block}\n" in text


def test_code_and_prose_that_span_lines_are_literal_blocks_and_a_message_is_not():
    text = entry_text(entry_document(fields(
        message="first line {block}\nsecond line {seq_len}",
        origin={"record_id": "r1", "source_code": "def f():\n    raise ValueError\n", "line": 3},
    )))
    assert "\nexplanation: |\n  The kernel walks the sequence in whole blocks.\n\n  A remainder has no block.\ntriggers:" in text
    assert "\n    before: |\n      attention(q, block=100)\n    after: |\n      attention(q, block=128)\n" in text
    assert text.endswith("\norigin:\n  record_id: r1\n  line: 3\n  source_code: |\n    def f():\n        raise ValueError\n")
    assert '\nmessage: "first line {block}\\nsecond line {seq_len}"\n' in text
    one_line = entry_text(entry_document(fields(explanation="Just one line.")))
    assert "\nexplanation: Just one line.\n" in one_line


def test_the_file_starts_with_the_modeline_then_the_header_and_is_canonical():
    text = entry_text(entry_document(fields(), {"check": "Why it must hold."}), header="DRAFT: review.\nSecond line.")
    assert text.startswith(MODELINE + "\n# DRAFT: review.\n# Second line.\ncode: RA150\n")
    assert "\n# Why it must hold.\ncheck: seq_len % block == 0\n" in text
    assert formatted(text) == text
    assert entry_text(entry_document(fields())).startswith(MODELINE + "\ncode: RA150\n")


def test_quoted_text_keeps_its_double_quotes():
    text = entry_text(entry_document(fields(message=quoted("{block=} must divide {seq_len=}"))))
    assert '\nmessage: "{block=} must divide {seq_len=}"\n' in text
    assert "\nmessage: '{block=} must divide {seq_len=}'\n" in entry_text(entry_document(fields()))


def test_a_written_entry_loads_back_as_written_and_lints_clean(tmp_path, run_cli):
    (tmp_path / "inputs").mkdir()
    path = tmp_path / "inputs" / "RA150-block-divides-length.yaml"
    path.write_text(entry_text(entry_document(fields())), encoding="utf-8")
    code, out, err = run_cli("lint", tmp_path)
    assert code == 0, out + err
    loaded = load(tmp_path)
    assert not loaded.findings
    (entry,) = loaded.entries
    assert (entry.code, entry.slug, entry.message, entry.check) == ("RA150", "block-divides-length", "{block=} must divide {seq_len=}",
                                                                      "seq_len % block == 0")
    assert [(p.name, p.type) for p in entry.params.values()] == [("block", "int"), ("seq_len", "int")]
    assert entry.bad_examples == ({"block": 100, "seq_len": 512},) and entry.good_examples == ({"block": 128, "seq_len": 512},)
    assert entry.fixes[0].before == "attention(q, block=100)\n" and entry.fixes[0].after == "attention(q, block=128)\n"
    assert dict(entry.variants[0].aliases) == {"cfg.block": "block"}
    assert entry.explanation == fields()["explanation"]
    code, out, _ = run_cli("--catalog", tmp_path, "fmt", "--check")
    assert code == 0 and out == ""


def test_the_document_dumps_what_the_file_holds():
    doc = entry_document(fields())
    assert yaml().load(entry_text(doc)) == doc
