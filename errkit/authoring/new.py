"""`errkit new AREA SLUG`: scaffold an entry file with the area's next free code: a sample entry
(one int param, its check and examples) for the author to replace, written by the catalogue's
entry writer (errkit/catalogue/writing.py)."""

import re
from pathlib import Path

from errkit.core.atomic import write_text
from errkit.core import UsageError
from errkit.catalogue import spec
from errkit.catalogue.codes import code_prefix, next_code, settings_prefix, used_codes
from errkit.catalogue.writing import entry_document, entry_text, quoted

HEADER = "New entry: replace every example value below with the real condition, then run `errkit lint`."
COMMENTS = {
    "message": 'The exact message the kernel raises, with f-string semantics: {value=} prints "value=<repr>".',
    "check": "The invariant that must hold; the error is raised when it is false.",
}


def scaffold(code: str, slug: str, exception: str) -> str:
    """The text of a new entry: every field an author fills in, with sample values."""
    fields = {
        "code": code,
        "slug": slug,
        "title": "One line saying what went wrong",
        "exception": exception,
        "message": quoted("{value=} must be positive"),
        "params": {"value": {"type": "int", "description": "What the value is and where it comes from."}},
        "check": "value > 0",
        "explanation": "What the error means, and why the kernel needs the invariant.\n",
        "triggers": ["A concrete input that raises it."],
        "situations": ["Where people usually meet it."],
        "fixes": [{"summary": "What to change.", "suggest": {"smallest valid value": "max(1, value)"},
                   "before": "call(value=0)\n", "after": "call(value=1)\n"}],
        "prevention": ["How to avoid it in the first place."],
        "tags": [],
        "variants": [],
        "examples": {"bad": [{"value": 0}], "good": [{"value": 1}]},
    }
    return entry_text(entry_document(fields, COMMENTS), header=HEADER)


def check_names(area: str, slug: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", area):
        raise UsageError(f"area {area!r} must be a lower-case folder name")
    if not re.fullmatch(spec.SLUG, slug):
        raise UsageError(f"slug {slug!r} must be kebab-case (a-z, 0-9 and '-')")


def new_entry(root: Path, area: str, slug: str, code: str | None, exception: str) -> Path:
    check_names(area, slug)
    if not root.is_dir():
        raise UsageError(f"{root}: no such catalogue folder")
    taken = used_codes(root)
    prefix = code_prefix(root)
    if code is None:
        code = next_code(root, area, prefix, taken=taken)
    elif not re.fullmatch(spec.CODE, code):
        raise UsageError(f"code {code!r} must look like {prefix}123 (2-4 capital letters and three digits)")
    elif settings_prefix(root) and not code.startswith(settings_prefix(root)):
        raise UsageError(f"code {code!r} must start with the catalogue's prefix {settings_prefix(root)!r}")
    elif code in taken:
        raise UsageError(f"code {code} is taken (or retired); codes are never reused")
    path = root / area / f"{code}-{slug}.yaml"
    if path.exists():
        raise UsageError(f"{path} exists already")
    text = scaffold(code, slug, exception)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text)
    return path

