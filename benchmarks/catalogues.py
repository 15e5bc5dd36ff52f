"""Large realistic catalogues: the real one, grown with real error messages of installed packages.

The messages come from the raise sites `errkit scan` finds in this environment's site-packages
(jax, numpy, and the rest) and standard library, typed as the scan types them: the words, identifiers and phrasing of
real error messages, shared across entries as they are in real libraries.
"""

from __future__ import annotations

import random
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parent.parent


def real_catalogue():
    from errkit.catalogue.load import load

    return load(ROOT / "catalog").catalogue


@lru_cache(maxsize=None)
def scanned_entries() -> tuple:
    """One explain-only entry per distinct message template of a raise site in site-packages and
    the standard library."""
    from errkit.catalogue import wordings
    from errkit import scan
    from errkit.catalogue.model import Entry, Param

    site_packages = next(p for p in sys.path if p.endswith("site-packages"))
    result = scan.scan_paths([site_packages, sysconfig.get_paths()["stdlib"]])
    seen: set[str] = set()
    entries = []
    for site in sorted(result.sites, key=lambda s: (s.template, s.path, s.line)):
        text = site.template
        if text in seen or "\n" in text or not text.encode("utf-8", "replace").decode("utf-8") == text:
            continue  # (a lone surrogate from a codec's test suite is no message a user pastes)
        seen.add(text)
        params = {name: Param(name, type_, "") for name, type_ in site.params.items()}
        aliases = {expr: name for expr, name in site.param_of.items() if expr != name}
        entry = Entry(code=f"SY{len(entries):05d}", slug=f"scanned-{len(entries)}", title="scanned", area="scanned",
                      exception=site.base, message=text, explanation="x", params=MappingProxyType(params),
                      explain_only=True, aliases=MappingProxyType(aliases))
        try:
            wording = wordings.compile_wording(entry, 0)
        except wordings.WordingError:
            continue
        if wording.literal_chars < 10:  # a catalogue entry needs fixed text to be recognised by
            continue
        entries.append(entry)
    return tuple(entries)


def grown(size: int, seed: int = 0):
    """The real catalogue's first `size` entries, or all of them and scanned ones up to `size`."""
    from errkit.catalogue.model import Catalogue

    real = real_catalogue()
    entries = sorted(real.entries, key=lambda e: e.code)
    if size <= len(entries):
        chosen = entries[:size]
    else:
        extra = list(scanned_entries())
        if len(entries) + len(extra) < size:
            raise SystemExit(f"only {len(entries) + len(extra)} entries can be made here; {size} asked")
        chosen = entries + random.Random(seed).sample(extra, size - len(entries))
    return Catalogue(real.root, real.settings, tuple(chosen), real.kernels)
