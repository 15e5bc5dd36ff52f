"""Paste mutations (issue 51): every wording of the catalogue, rendered with realistic values, wrapped
and altered the way logs and people pass error texts on, and what `errkit explain` must answer.

A mutation keeps the values (a prefix, a suffix, quotes, markdown, a hard wrap, a case change): the
answer must be the wording's entry, exact, with the values the unaltered text gives. Or it removes a
value (a size retyped as `<V>` or `...`, a list shortened): the answer must still be the entry
(exact or approximate), and must not claim a value for what is gone. A wording whose unaltered
rendering is not answered right is counted apart (`bare`): a mutation is judged only against a
text that works.

Used by tests/explain/test_paste_mutations.py (the Python matcher: per kind, a hypothesis property
over the wordings, derandomized), tests/site/test_paste_mutations_js.py (the paste page's match.js)
and scripts/paste_mutations.py (every wording, every kind, with counts). A mutation's own choices
(which value, where to wrap, which prefix) come from the `random.Random` it is given: hypothesis's
in the tests, one seeded by the script's --seed there.
"""

from __future__ import annotations

import io
import json
import math
import random
import textwrap
from dataclasses import dataclass, field, replace

from errkit.catalogue import wordings as wordings_of

SENTINEL_INT = 987654321
SENTINEL_STR = "qqsentinelqq"


@dataclass(frozen=True)
class Sample:
    """One wording rendered with realistic values."""
    code: str
    key: str  # code/variant
    exception: str
    message: str
    params: dict  # the values rendered in
    removable: dict = field(default_factory=dict)  # param -> its text in the message, for mutations that remove a value
    lists: dict = field(default_factory=dict)  # param -> its comma-separated text, for shortened lists
    context: bool = False  # its entry needs context (other compilers print it): alone, approximate by design
    twins: tuple = ()  # other entries whose wording renders to this very text (told apart only by a traceback)
    line_end: tuple = ()  # free-text params (form text or sentence) whose value ends the message: it runs to the line's end


@dataclass(frozen=True)
class Text:
    """A mutated text and what the answer must be."""
    kind: str
    text: str
    gone: tuple = ()  # params whose value the text no longer shows
    fold_case: bool = False  # values compared case-insensitively, and an approximate answer is honest
    runs_on: str = ""  # text after the message on its line that nothing marks as not the message's own (RUNS_ON)


def samples(catalogue) -> list[Sample]:
    """A Sample of every wording that has fixed text to find and is not told only by its raise site."""
    out = []
    for entry in sorted(catalogue.entries, key=lambda e: e.code):
        params = wordings_of.sample_params(entry)[0]
        for wording in wordings_of.wordings(entry):
            if wording.variant.located_only or wording.literal_chars < 8:
                continue
            try:
                message = wording.render(params)
            except (KeyError, ValueError, TypeError):
                continue
            if not message.strip():
                continue
            names = {wording.param_of(f) for f in wording.template.fields}
            removable, lists, line_end = {}, {}, []
            for name in sorted(names):
                kind = entry.params[name].type
                if kind not in ("int", "str", "bytes"):
                    continue
                sentinel = SENTINEL_STR if kind == "str" else SENTINEL_INT
                try:
                    marked = wording.render({**params, name: sentinel})
                except (KeyError, ValueError, TypeError):
                    continue
                if marked.count(str(sentinel)) != 1:
                    continue
                at = marked.index(str(sentinel))
                tail = len(marked) - at - len(str(sentinel))
                shown = message[at:len(message) - tail]
                if shown and message[:at] + shown + message[len(message) - tail:] == message:
                    removable[name] = (at, shown)
                    if kind == "str" and ", " in shown:
                        lists[name] = (at, shown)
                    if kind == "str" and not tail and entry.params[name].form in ("text", "sentence"):
                        line_end.append(name)
            exception = wording.variant.exception or entry.exception
            out.append(Sample(entry.code, f"{entry.code}/{wording.index}", exception, message,
                              {k: v for k, v in params.items() if k in names}, removable, lists, entry.needs_context,
                              line_end=tuple(line_end)))
    by_text: dict = {}
    for s in out:
        by_text.setdefault(raised(s), set()).add(s.code)
    return [replace(s, twins=tuple(sorted(by_text[raised(s)] - {s.code}))) for s in out]


def raised(s: Sample) -> str:
    return f"{s.exception}: {s.message}"


def _without(s: Sample, name: str, put: str) -> str:
    at, shown = s.removable[name]
    return s.message[:at] + put + s.message[at + len(shown):]


# Each kind: (name, applies(sample), make(rng, sample) -> Text).
LOG_PREFIXES = ["(VllmWorkerProcess pid=195297) ERROR 03-02 19:49:43 [multiproc_worker_utils.py:242] ",
                "(EngineCore_0 pid=106339) ERROR 06-03 07:41:11 [core.py:1184] "]
RANKS = ["[rank0]: ", "[rank3]: ", "[default0]:", "0: "]
LOGGERS = ["2026-03-02 19:49:43,123 - trainer - ERROR - ", "ERROR:absl:", "[2026-03-02 19:49:43] ERROR train.py:88: ",
           "E0302 19:49:43.123456  4121 train.cc:88] "]
# Text after the message on its line: what marks where the message ends (a traceback's start joined
# by a comma, a dash, a new sentence), and what does not (RUNS_ON: prose that goes on as a message
# might). A free-text value that ends its wording (Sample.line_end) is the rest of its line as the
# wording defines it: followed by RUNS_ON text, either reading is right, the value alone or with that
# text, as nothing in the paste tells them apart (the corpus's RA808 case, jax#18388's title, has
# `tpu.matmul` after libtpu's reason, and the value it expects holds it).
RUNS_ON = (" (while compiling step 3)", " on TPU v5e with jax 0.10.2")
AFTER = [", Traceback (most recent call last):", RUNS_ON[0], " -- any idea what is wrong?", RUNS_ON[1], ". Retrying in 5s"]


def _after(s: Sample, after: str) -> Text:
    return Text("text after", raised(s) + after, runs_on=after if after in RUNS_ON else "")


def _wrap(rng, s: Sample) -> Text:
    width = rng.randint(40, 79)
    lines = textwrap.wrap(raised(s), width=width, break_long_words=False, break_on_hyphens=False)
    return Text("hard wrap", "\n".join(lines))


def _retype(put: str):
    def make(rng, s: Sample) -> Text:
        name = rng.choice(sorted(s.removable))
        return Text(f"retyped {put}", f"{s.exception}: {_without(s, name, put)}", gone=(name,))
    return make


def _shorten(rng, s: Sample) -> Text:
    name = rng.choice(sorted(s.lists))
    at, shown = s.lists[name]
    items = shown.split(", ")
    short = "{..." + items[0] + "..}" if rng.random() < 0.5 else items[0] + ", ..."
    return Text("shortened list", f"{s.exception}: {s.message[:at]}{short}{s.message[at + len(shown):]}", gone=(name,))


def _case(rng, s: Sample) -> Text:
    how = rng.choice(["lower", "upper"])
    message = s.message.lower() if how == "lower" else s.message.upper()
    return Text("case change", f"{s.exception}: {message}", fold_case=True)


KINDS = [
    ("vllm worker", None, lambda r, s: Text("vllm worker", f"Exception in worker VllmWorkerProcess while processing method load_model: "
                                                          f"{raised(s)}, Traceback (most recent call last):")),
    ("worker log prefix", None, lambda r, s: Text("worker log prefix", r.choice(LOG_PREFIXES) + raised(s))),
    ("rank prefix", None, lambda r, s: Text("rank prefix", r.choice(RANKS) + raised(s))),
    ("ray prefix", None, lambda r, s: Text("ray prefix", f"(RayWorkerWrapper pid=3012, ip=10.0.0.2) {raised(s)}")),
    ("pytest E line", None, lambda r, s: Text("pytest E line", f"E       {raised(s)}")),
    ("pytest summary", None, lambda r, s: Text("pytest summary", f"FAILED tests/test_attention.py::test_fwd[bf16-128] - {raised(s)}")),
    ("logger prefix", None, lambda r, s: Text("logger prefix", r.choice(LOGGERS) + raised(s))),
    ("container prefix", None, lambda r, s: Text("container prefix", f"trainer-1  | {raised(s)}")),
    ("text after", None, lambda r, s: _after(s, r.choice(AFTER))),
    ("double quotes", None, lambda r, s: Text("double quotes", f'I get "{raised(s)}" when I run it')),
    ("backticks", None, lambda r, s: Text("backticks", f"Getting `{raised(s)}` with bf16 inputs.")),
    ("code fence", None, lambda r, s: Text("code fence", f"```\n{raised(s)}\n```")),
    ("markdown quote", None, lambda r, s: Text("markdown quote", f"> {raised(s)}")),
    ("issue title", None, lambda r, s: Text("issue title", f"[Bug]: {s.message}")),
    ("message only", None, lambda r, s: Text("message only", s.message)),
    ("qualified class", None, lambda r, s: Text("qualified class", f"jax.errors.JaxRuntimeError: INTERNAL: {s.message}")),
    ("json log", None, lambda r, s: Text("json log", json.dumps({"level": "error", "msg": raised(s)}))),
    ("traceback", None, lambda r, s: Text("traceback", "Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
                                                      "    out = step(params, batch)\n  File \"model.py\", line 41, in attention\n"
                                                      f"    return kernel(q, k, v)\n{raised(s)}")),
    ("jax traceback", None, lambda r, s: Text("jax traceback", "jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal "
                                                              "frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off "
                                                              "to include these.\n\nThe above exception was the direct cause of the following exception:"
                                                              "\n\nTraceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
                                                              f"    out = step(params, batch)\n{raised(s)}")),
    ("windows log", None, lambda r, s: Text("windows log", f"INFO step 10 loss=0.31\r\n{raised(s)}\r\n")),
    ("hard wrap", lambda s: len(raised(s)) > 50, _wrap),
    ("quoted wrap", lambda s: len(raised(s)) > 50, lambda r, s: Text("quoted wrap", "\n".join(
        "> " + line for line in textwrap.wrap(raised(s), width=r.randint(40, 79), break_long_words=False, break_on_hyphens=False)))),
    ("case change", None, _case),
    ("retyped <V>", lambda s: bool(s.removable), _retype("<V>")),
    ("retyped ...", lambda s: bool(s.removable), _retype("...")),
    ("shortened list", lambda s: bool(s.lists), _shorten),
]
KIND_NAMES = [name for name, _, _ in KINDS]


def applies(kind: str, s: Sample) -> bool:
    test = next(a for name, a, _ in KINDS if name == kind)
    return test is None or test(s)


def mutate(kind: str, rng: random.Random, s: Sample) -> Text:
    make = next(m for name, _, m in KINDS if name == kind)
    return replace(make(rng, s), kind=kind)


def mutations(rng: random.Random, s: Sample) -> list[Text]:
    """Every kind that applies to the sample, once each."""
    return [mutate(name, rng, s) for name in KIND_NAMES if applies(name, s)]


# -- judging ---------------------------------------------------------------------------------------


def explain(text: str, index=None) -> tuple[int, dict]:
    """`errkit explain --json TEXT`'s exit code and first answer, in-process."""
    from errkit.explain import command

    out = io.StringIO()
    kwargs = {"index": index} if index is not None else {}
    try:
        rc = command.run([text], as_json=True, show_all=False, out=out, err=io.StringIO(), **kwargs)
    except Exception as err:  # noqa: BLE001 - a crash is an answer too (a wrong one)
        return 99, {"error": f"{type(err).__name__}: {err}"}
    lines = out.getvalue().splitlines()
    return rc, (json.loads(lines[0]) if lines else {})


def js_answer(results: list[dict]) -> tuple[int, dict]:
    """The paste page's first result (tests/fixtures/site/harness.js's `seen`) in the shape of
    explain's: exit code 0 when exact, values parsed back from the Python repr the harness writes."""
    import ast

    if not results:
        return 1, {}
    first, params = results[0], {}
    for k, v in first["params"].items():
        try:
            params[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            params[k] = v
    return (0 if first["confidence"] == "exact" else 1), {"code": first["code"], "confidence": first["confidence"], "params": params}


def same(want, got, fold_case: bool = False) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        try:
            a, b = float(want), float(got)
        except (TypeError, ValueError):
            return False
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9)  # (explain writes nan "nan")
    if isinstance(want, str) and isinstance(got, (list, tuple)) and all(isinstance(x, str) for x in got):
        return same(want, ", ".join(repr(x) for x in got), fold_case)  # a str of list form, read as its items
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(same(a, b, fold_case) for a, b in zip(want, got))
    if fold_case and isinstance(want, str) and isinstance(got, str):
        return want.lower() == got.lower()
    return want == got


def bare_answer(s: Sample, answer: tuple[int, dict]) -> str | None:
    """Why the unaltered text's answer is wrong (None: it is right)."""
    rc, first = answer
    expected = {(0, code, "exact") for code in (s.code, *s.twins)}
    if s.context:  # alone, with no JAX, Pallas or Mosaic in the text: approximate, saying why
        expected |= {(1, code, "approximate") for code in (s.code, *s.twins)}
    if (rc, first.get("code"), first.get("confidence")) not in expected:
        return f"got {first.get('code')} {first.get('confidence')} (exit {rc})"
    params = first.get("params") or {}
    wrong = [k for k, v in s.params.items() if k in params and not same(v, params[k])]
    return f"values {wrong} read wrong" if wrong else None


def verdict(t: Text, s: Sample, reference: dict, answer: tuple[int, dict]) -> str | None:
    """Why the mutated text's answer is wrong (None: it is right). `reference`: the values the
    unaltered text's answer gave."""
    rc, first = answer
    if first.get("error"):
        return first["error"]
    if first.get("code") not in (s.code, *s.twins):
        return f"got {first.get('code') or 'nothing'} {first.get('confidence') or ''}".strip()
    params = first.get("params") or {}
    if not t.gone:
        if (rc, first.get("confidence")) != (0, "exact") and not t.fold_case and not s.context:
            return f"{first.get('confidence')}, not exact"
        lost = [k for k, v in reference.items() if k not in params]
        wrong = [k for k, v in reference.items() if k in params and not same(v, params[k], t.fold_case)
                 and not (t.runs_on and k in s.line_end and params[k] == f"{v}{t.runs_on}")]
        if wrong or lost:
            return f"values {'wrong ' + str(wrong) if wrong else ''}{' lost ' + str(lost) if lost else ''}".strip()
        return None
    claimed = [k for k in t.gone if k in params and not same(reference.get(k), params[k], t.fold_case)]
    if claimed:
        return f"claims {claimed} = {[params[k] for k in claimed]}, which the text does not show"
    wrong = [k for k, v in reference.items() if k not in t.gone and k in params and not same(v, params[k])]
    return f"values wrong {wrong}" if wrong else None


def sample_of(samples_: list[Sample], n: int, seed: int) -> list[Sample]:
    """n samples picked alike on every run (the catalogue order is the code order)."""
    rng = random.Random(seed)
    return rng.sample(samples_, min(n, len(samples_)))

