"""Realistic logs to explain: what a training run prints around the errors people paste.

Every log is deterministic for a given Python and catalogue (seeded), one error line per
`error_every` lines, the errors drawn from renderings of every catalogue wording. Kinds of noise:

- `english`: sentences of English prose (the standard library's docstrings) behind log prefixes;
- `tracebacks`: English noise with Python tracebacks of other, uncatalogued errors mixed in;
- `json`: JSON log lines (`{"time": ..., "level": ..., "msg": ...}`), errors inside the JSON string;
- `common-words`: the worst realistic case, every line made of the words the catalogue's own
  wordings use most (`must`, `be`, `got`, `shape`, `block`, ...).
"""

from __future__ import annotations

import ast
import json
import random
import sysconfig
import traceback
from collections import Counter
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("english", "tracebacks", "json", "common-words")


@lru_cache(maxsize=None)
def prose_sentences(limit: int = 50_000) -> tuple[str, ...]:
    """Sentences of English from the standard library's docstrings (one line each, 20-160 chars)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    for path in sorted(stdlib.glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                for sentence in " ".join(doc.split()).split(". "):
                    if 20 <= len(sentence) <= 160 and "Error" not in sentence and "Exception" not in sentence:
                        out.append(sentence.rstrip(".") + ".")
        if len(out) >= limit:
            break
    return tuple(out)


@lru_cache(maxsize=None)
def error_messages() -> tuple[tuple[str, str, str], ...]:
    """(code, exception, message) for a rendering of every wording a log line can show alone (not
    those recognised by the raise site of a traceback only: no fixed text, or another entry's text)."""
    from errkit.catalogue import wordings
    from errkit.generate.index import key_candidates
    from errkit.catalogue.lint import apart_by_location
    from errkit.catalogue.load import load

    catalogue = load(ROOT / "catalog").catalogue
    every = [w for e in catalogue.entries for w in wordings.wordings(e)]
    out = []
    for entry in catalogue.entries:
        params = wordings.sample_params(entry)[0]
        for wording in wordings.wordings(entry):
            if not wording.template.literals or (wording.variant.location and not key_candidates(wording)):
                continue
            if any(o.entry.code != entry.code and o.variant.message == wording.variant.message and apart_by_location(o, wording)
                   for o in every):
                continue  # another entry's text too, told apart only by a traceback's frame
            exception = wording.variant.exception or entry.exception
            out.append((entry.code, exception, wording.render(params)))
    return tuple(out)


@lru_cache(maxsize=None)
def common_words(n: int = 60) -> tuple[str, ...]:
    """The words the catalogue's wordings use most."""
    words: Counter = Counter()
    for _, _, message in error_messages():
        words.update(w.strip(".,:;()'\"") for w in message.split())
    return tuple(w for w, _ in words.most_common(n) if w.isalpha())


def _other_traceback(rng: random.Random) -> list[str]:
    """A real traceback of an uncatalogued error, as Python prints it."""
    def deep(n, fail):
        if n == 0:
            fail()
        return deep(n - 1, fail)

    fails = [
        lambda: {}["missing_key"],
        lambda: 1 / 0,
        lambda: open("/nonexistent/checkpoint.pkl"),
        lambda: int("not a number"),
        lambda: [].pop(),
        lambda: None.shape,
    ]
    try:
        deep(rng.randint(1, 4), rng.choice(fails))
    except Exception as err:  # noqa: BLE001 - any of them
        return "".join(traceback.format_exception(err)).rstrip("\n").split("\n")
    raise AssertionError("unreachable")


def _stamp(i: int) -> str:
    return f"2026-11-29 10:{i // 3600 % 60:02d}:{i // 60 % 60:02d},{i % 1000:03d}"


def make_log(kind: str, lines: int, error_every: int = 100, seed: int = 0) -> tuple[str, Counter]:
    """A log of `lines` lines and how many times each catalogue code appears in it."""
    if kind not in KINDS:
        raise ValueError(f"unknown log kind {kind!r}; one of {', '.join(KINDS)}")
    rng = random.Random(seed)
    prose, errors, words = prose_sentences(), error_messages(), common_words()
    expected: Counter = Counter()
    out: list[str] = []
    i = 0
    while len(out) < lines:
        i += 1
        if i % error_every == 0:
            code, exception, message = rng.choice(errors)
            expected[code] += 1
            if kind == "json":
                out.append(json.dumps({"time": _stamp(i), "level": "error", "logger": "trainer", "msg": f"{exception}: {message}"}))
            else:
                out.append(f"{_stamp(i)} ERROR trainer: {exception}: {message}")
            continue
        if kind == "english":
            out.append(f"{_stamp(i)} INFO trainer: {rng.choice(prose)}")
        elif kind == "tracebacks":
            if rng.random() < 0.01:
                out.extend(_other_traceback(rng))
            else:
                out.append(f"{_stamp(i)} INFO trainer: {rng.choice(prose)}")
        elif kind == "json":
            out.append(json.dumps({"time": _stamp(i), "level": "info", "logger": "trainer", "msg": rng.choice(prose)}))
        else:
            out.append(f"{_stamp(i)} INFO trainer: " + " ".join(rng.choices(words, k=rng.randint(8, 16))))
    return "\n".join(out[:lines]) + "\n", expected


OTHER_ERRORS = (  # uncatalogued exception lines, each made distinct by its values
    "KeyError: 'k{i}'",
    "RuntimeError: CUDA out of memory. Tried to allocate {i} MiB (GPU 0; 79.15 GiB total capacity)",
    "ValueError: invalid literal for int() with base 10: 'x{i}'",
    "FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-{i}.tfrecord'",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str' (call {i})",
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate {i} bytes.",
)


def uncatalogued_lines(lines: int, seed: int = 0) -> str:
    """`lines` distinct exception lines no catalogue entry matches."""
    rng = random.Random(seed)
    return "".join(rng.choice(OTHER_ERRORS).format(i=i) + "\n" for i in range(lines))


def ordinary_lines(lines: int, seed: int = 0) -> str:
    """`lines` ordinary log lines of a training run."""
    rng = random.Random(seed)
    return "".join(f"{_stamp(i)} INFO trainer: step {i} loss={rng.random():.4f} lr=3e-4\n" for i in range(lines))

