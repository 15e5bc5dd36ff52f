"""`errkit import FILE`: turn dataset records (JSON) into catalogue entries, numbered like `errkit new`:
each record read into an entry's plain fields (`record_fields`), written by the catalogue's entry
writer (errkit/catalogue/writing.py); a record whose message a wording already covers is skipped."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Iterable

from types import MappingProxyType

from ruamel.yaml.comments import CommentedMap

from errkit.core import expr, template
from errkit.catalogue import wordings, spec
from errkit.catalogue.vetting import vet
from errkit.core.atomic import write_text
from errkit.core import UsageError
from errkit.catalogue.codes import code_prefix, next_code, used_codes
from errkit.authoring.new import check_names
from errkit.catalogue.load import load
from errkit.catalogue.entry_rules import has_fixed_text
from errkit.catalogue.model import Entry, Param, Variant
from errkit.catalogue.writing import entry_document, entry_text
from errkit.catalogue.naming import guess_type, param_name

def _check_from_validation(code: str | None, params: Iterable[str]) -> str | None:
    """The invariant in a dataset `validationCode` snippet (`assert COND, ...` or `if not COND: raise`)."""
    if not code:
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in tree.body:
        candidate = None
        if isinstance(node, ast.Assert):
            candidate = ast.unparse(node.test)
        elif isinstance(node, ast.If):
            test = node.test
            candidate = ast.unparse(test.operand) if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else f"not ({ast.unparse(test)})"
        if candidate:
            try:
                vet(candidate, params)
                return candidate
            except expr.ExprError:
                return None
    return None


def _assignments(text: str, params: dict[str, str]) -> dict[str, Any]:
    """`name=value` pairs of declared int params in prose ("num_q_heads=12 with num_kv_heads=8")."""
    found = {}
    for name, value in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?[0-9]+)\b", text or ""):
        if params.get(name) == "int" and name not in found:
            found[name] = int(value)
    return found


def _good_example(check: str, bad: dict[str, int]) -> dict[str, int] | None:
    """Move one value of a bad example towards 1 until the check holds."""
    for name in sorted(bad):
        for value in range(bad[name], 0, -1):
            trial = dict(bad, **{name: value})
            try:
                if expr.evaluate(check, trial):
                    return trial
            except Exception:
                break
    return None


def _split_fix(example: str | None) -> tuple[str | None, str | None]:
    if not example:
        return None, None
    match = re.match(r"\s*#\s*before\s*\n(.*?)\n\s*#\s*after\s*\n(.*)", example, re.S | re.I)
    if match:
        return match.group(1).strip() + "\n", match.group(2).strip() + "\n"
    return None, example.strip() + "\n"


def _lines(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    return []


def _title(record: dict) -> str:
    tag = record.get("backgroundTag")
    if isinstance(tag, str) and tag.strip():
        return tag.replace("-", " ").strip().capitalize()
    return str(record.get("errorMessage", "Imported error"))[:120]


UNKNOWN = "See the original raise site."

# Dataset field -> the entry's `origin` key (the entry format's order).
ORIGIN_FIELDS = {
    "id": "record_id", "datasetVersion": "dataset_version", "repo": "repo", "filePath": "path", "lineNumber": "line", "githubUrl": "url",
    "analyzedSha": "sha", "analyzedAt": "analyzed_at", "sourceCode": "source_code", "messagePattern": "message_pattern",
    "errorType": "error_type", "errorCode": "error_code", "httpStatus": "http_status", "handlingStrategy": "handling_strategy",
    "backgroundTag": "background_tag", "validationCode": "validation_code", "typeGuard": "type_guard",
    "tryCatchPattern": "try_catch", "schemaVersion": "schema_version",
}


def _message(record: dict) -> str:
    message = record.get("errorMessage")
    if not isinstance(message, str) or not message.strip():
        raise ValueError("record has no errorMessage")
    return message


def _params(message: str) -> dict[str, str]:
    """Param name -> guessed type, one per field of the message."""
    params: dict[str, str] = {}
    for field in template.parse(message).fields:
        name = param_name(field.name)
        params.setdefault(name, guess_type(name))
    return params


def _slug(record: dict, code: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", str(record.get("slug") or "").lower()).strip("-")
    return (slug or f"imported-{code.lower()}")[:60].rstrip("-")


def _exception(record: dict) -> str:
    return record.get("errorClass") if record.get("errorClass") in spec.EXCEPTIONS else "ValueError"


def _situations(record: dict) -> list[str]:
    """The record's common situations; a single one is split at its semicolons."""
    situations = _lines(record.get("commonSituations"))
    if len(situations) == 1:
        situations = [s.strip() for s in situations[0].split(";") if s.strip()]
    return situations


def _fixes(record: dict) -> list[dict]:
    """One fix per solution; the first carries the record's example fix (`# before` / `# after`)."""
    fixes = [{"summary": summary} for summary in _lines(record.get("solutions")) or [UNKNOWN]]
    before, after = _split_fix(record.get("exampleFix"))
    if after:
        fixes[0].update(before=before, after=after)
    return fixes


def _tags(record: dict) -> list[str]:
    tags = (re.sub(r"[^a-z0-9-]+", "-", t.lower()).strip("-") for t in record.get("tags") or [] if isinstance(t, str))
    return [t for t in tags if t]


def _examples(record: dict, check: str | None, params: dict[str, str]) -> dict | None:
    """A bad example from the trigger's `name=value` pairs (every int param given, the check false)
    and a good one next to it; None when there is no check or the trigger does not give one."""
    if not check:
        return None
    bad = _assignments("\n".join(_lines(record.get("triggerScenarios"))), params)
    ints = {n for n, t in params.items() if t == "int"}
    if not bad or not set(bad) >= ints:
        return None
    try:
        if expr.evaluate(check, bad):
            return None
    except Exception:  # noqa: BLE001 - a check these values make fail (a division by 0, a bound of errkit/core/bounds.py)
        return None
    good = _good_example(check, bad)
    return {"bad": [bad], "good": [good]} if good else None


def _origin(record: dict) -> dict[str, Any]:
    """The record's provenance fields that hold something, under the entry's `origin` names."""
    return {name: record[key] for key, name in ORIGIN_FIELDS.items() if record.get(key) is not None and record.get(key) != ""}


def record_fields(record: dict, code: str) -> dict[str, Any]:
    """The entry a dataset record gives, as plain fields (None: left out); ValueError without a message."""
    message = _message(record)
    params = _params(message)
    check = _check_from_validation(record.get("validationCode"), params)
    return {
        "code": code,
        "slug": _slug(record, code),
        "title": _title(record),
        "exception": _exception(record),
        "message": message,
        "explain_only": True,  # an imported wording is someone else's raise site: no validator here
        "params": {name: {"type": type_, "description": f"Value of {name} in the message."} for name, type_ in params.items()},
        "check": check or None,
        "explanation": (record.get("documentation") or UNKNOWN).strip() + "\n",
        "triggers": _lines(record.get("triggerScenarios")) or [UNKNOWN],
        "situations": _situations(record) or None,
        "fixes": _fixes(record),
        "prevention": _lines(record.get("preventionTips")) or None,
        "tags": _tags(record) or None,
        "examples": _examples(record, check, params),
        "origin": _origin(record) or None,
    }


def record_to_entry(record: dict, code: str) -> CommentedMap:
    """The entry document for a dataset record (the catalogue's entry writer lays it out)."""
    return entry_document(record_fields(record, code))


def _records(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected a JSON file") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{path}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None
    items = data if isinstance(data, list) else [data]
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("record"), dict):
            record = dict(item["record"])
            if "datasetVersion" in item:
                record["datasetVersion"] = item["datasetVersion"]
            out.append(record)
        elif isinstance(item, dict) and "errorMessage" in item:
            out.append(item)
        else:
            raise UsageError(f"{path}: expected dataset records (objects with 'record' or 'errorMessage')")
    return out


def _covered_by(root: Path, message: str) -> str | None:
    """The code of an entry whose wording already matches `message` rendered with sample values."""
    try:
        tpl = template.parse(message)
    except template.TemplateError:
        return None
    names = {f.name: param_name(f.name) for f in tpl.fields}
    params = MappingProxyType({n: Param(n, guess_type(n), "") for n in names.values()})
    variant = Variant(message, "import", aliases=MappingProxyType(names))
    probe = Entry(code="ZZ000", slug="probe", title="", area="", exception="ValueError", message="probe",
                  explanation="", params=params, variants=(variant,))
    try:
        wording = wordings.compile_wording(probe, 1)
    except wordings.WordingError:
        return None
    renderings = [wording.render(p) for p in wordings.sample_params(probe)]
    for entry in load(root).entries:
        for other in wordings.wordings(entry):
            if not has_fixed_text(other.variant.message):
                continue  # recognised by where it is raised (an empty message): it covers no wording
            regex = re.compile(other.pattern)
            if any(regex.fullmatch(text) for text in renderings):
                return entry.code
    return None


def import_records(path: Path, root: Path, area: str, force: bool) -> tuple[list[Path], list[str]]:
    check_names(area, "x")
    records = _records(path)
    root.mkdir(parents=True, exist_ok=True)
    taken = used_codes(root)
    prefix = code_prefix(root)
    written, skipped = [], []
    for record in records:
        message = record.get("errorMessage")
        covered = _covered_by(root, message) if isinstance(message, str) and not force else None
        if covered:
            skipped.append(f"{path}: {message!r} is already covered by {covered}; skipped (use --force to import anyway)")
            continue
        code = next_code(root, area, prefix, taken=taken)
        try:
            entry = record_to_entry(record, code)
        except ValueError as err:
            skipped.append(f"{path}: record {record.get('id', '?')}: {err}; skipped")
            continue
        taken.add(code)
        target = root / area / f"{code}-{entry['slug']}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text(target, entry_text(entry))
        written.append(target)
    return written, skipped
