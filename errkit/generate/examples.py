"""An entry's worked example, as the site shows it: the values of its first bad example, the
message they raise, the suggestions computed on them, and a minimal call that raises the error.

The entry pages (errkit/generate/site.py) and the paste page's index (errkit/generate/assets.py)
both show the raised message; it is made here once.
"""

from __future__ import annotations

import re

from errkit.catalogue import kernels, wordings
from errkit.catalogue.model import Catalogue, Entry
from errkit.catalogue.vetting import suggestion_code
from errkit.generate.validators import check_code, module_name


def raised_message(entry: Entry) -> str | None:
    """The entry's own message rendered with its first bad example, as the kernel raises it; None
    without a message, or when the template cannot render these values."""
    wording = next((w for w in wordings.wordings(entry) if w.index == 0), None)
    if wording is None or not entry.message:
        return None
    try:
        return wording.render(wordings.sample_params(entry)[0])
    except Exception:  # a template that cannot render these values: show the template only
        return None


def example_params(entry: Entry) -> dict | None:
    """The typed values of the entry's first bad example (the params it does not give filled as the
    raised example on its page fills them); None without a bad example."""
    if not entry.bad_examples:
        return None
    try:
        entry.typed(entry.bad_examples[0])
    except Exception:  # noqa: BLE001 - an example lint reports
        return None
    return wordings.sample_params(entry)[0]


def example_suggestions(entry: Entry, catalogue: Catalogue) -> list[list[dict]]:
    """Per fix, the suggestions `errkit explain` computes (errkit/core/suggest.py) from its
    (kernel-expanded) suggest on the first bad example."""
    from errkit.core.suggest import suggestions

    params = example_params(entry)
    sources = kernels.suggestion_sources(entry, catalogue.kernels)
    told, candidates = example_raisers(entry)
    out = []
    for fix, suggest, cases in zip(entry.fixes, sources, kernels.case_sources(entry, catalogue.kernels)):
        if params is None or not suggest:
            out.append([{"label": label, "needs": source} for label, source in suggest.items()])
            continue
        vetted = suggestion_code(entry.verdicts, suggest, cases, entry.params.keys())  # their verdicts, compiled
        out.append(suggestions({"suggest": suggest, "sets": dict(fix.sets), "cases": cases}, params, vetted,
                               kernel=told, candidates=candidates))
    return out


def example_raisers(entry: Entry) -> tuple[str | None, list | None]:
    """(the kernel told to have raised the example, or None; else the kernels that may have), as
    explain decides them for the example's text (errkit/explain/answer.py raisers): the entry's own
    message is a text other wordings of the entry may word alike (a tie nothing in the text breaks:
    any of their kernels may have raised it); else its own kernels, one of them told."""
    own = next((v for v in entry.wordings if v.message == entry.message), None)
    if own is None:
        return None, None
    alike = [k for v in entry.wordings if v.message == own.message for k in entry.raising_kernels(v)]
    alike = list(dict.fromkeys(alike))
    if len(alike) == 1:
        return alike[0], None
    return None, alike or None


def _python_value(value) -> str:
    """The value as Python source (a float that is not finite as float('nan'), float('inf'))."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f"float('{value}')"
    return repr(value)


def _verified_before(entry: Entry) -> dict | None:
    """The first fix's code before the fix, with the setup and then around it, when the fix is not
    unverified and it has a setup (then the snippet is one tests/advice/test_fix_snippets.py runs:
    it raises the entry's error, through the project's public API)."""
    for n, fix in enumerate(entry.fixes, 1):
        setup, then = fix.setup or entry.setup, fix.then or entry.then
        if fix.before and not fix.unverified and setup:
            parts = [setup.rstrip("\n"), fix.before.rstrip("\n"), (then or "").rstrip("\n")]
            return {"code": "\n".join(p for p in parts if p.strip()), "lang": "python",
                    "how": f"fix {n}'s code before the fix"}
    return None


def reproduce(entry: Entry, catalogue: Catalogue) -> dict | None:
    """A minimal call that raises the error, from the entry's examples: {"code", "lang", "how"}.

    Our own entries: the kernel call of the entry's `setup`/`then` with the first bad example's
    values, when `then` reads them; else a verified fix's `before` with its setup and then (the
    public API, as a reader calls it); else the generated check function called with them. Upstream
    entries: the first verified fix's `before` with its setup and then (a whole program); else the
    raised line (a fix's `before` alone is a fragment, shown under its fix).
    """
    params = example_params(entry)
    if not entry.explain_only and params is not None:
        bad = entry.typed(entry.bad_examples[0])
        then = entry.then or ""
        setup = entry.setup or ""
        read = [name for name in entry.params if re.search(rf"(?<![\w.]){re.escape(name)}\b", then)]
        assigned = [name for name in read if re.search(rf"^\s*{re.escape(name)}\s*=", setup, re.M)]
        if read and not assigned and all(name in bad for name in read):
            lines = [setup.rstrip("\n")] if setup.strip() else []
            lines += [f"{name} = {_python_value(bad[name])}" for name in read]
            lines.append(then.rstrip("\n"))
            return {"code": "\n".join(lines), "lang": "python", "how": "the kernel call with the example's values"}
        before = _verified_before(entry)
        if before is not None:  # a call on the public API, run by tests/advice/test_fix_snippets.py
            return before
        module = module_name(catalogue)
        if module:
            try:
                check = check_code(entry)
            except Exception:  # noqa: BLE001 - a check lint reports
                check = None
            if check is not None:
                args = ", ".join(f"{name}={_python_value(params[name])}" for name in check.params)
                return {"code": f"from {module} import {check.function}\n\n{check.function}({args})",
                        "lang": "python", "how": "the generated check with the example's values"}
    if entry.explain_only:
        before = _verified_before(entry)  # a program (a fix's setup with it), not a fragment
        if before is not None:
            return before
    example = raised_message(entry)
    if example is not None:
        return {"code": f"{entry.exception}: {example}", "lang": "text", "how": "the line it raises"}
    return None
