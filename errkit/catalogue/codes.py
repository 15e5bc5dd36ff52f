"""A catalogue's codes: which it uses (retired ones included: codes are never reused), its prefix,
and the next free code of an area. Shared by `errkit new`, `errkit import` and `scan --emit`."""

import re
from collections import Counter
from pathlib import Path

from errkit.core import UsageError
from errkit.catalogue.load import entry_files, load, load_settings
from errkit.catalogue.model import DEFAULT_PREFIX

def used_codes(root: Path) -> set[str]:
    loaded = load(root)
    codes = {e.code for e in loaded.entries}
    if loaded.settings:
        codes |= set(loaded.settings.retired)
    for path in entry_files(root):  # entries too broken to load still hold their code
        match = re.search(r"^code:\s*['\"]?([A-Z]{2,4}[0-9]{3})", path.read_text(encoding="utf-8", errors="replace"), re.M)
        if match:
            codes.add(match.group(1))
    return codes


def code_prefix(root: Path) -> str:
    """The catalogue's code prefix: its `prefix` setting; for a bare folder of entries (no
    settings), the prefix most of its codes use; else the default."""
    settings, _ = load_settings(root) if root.is_dir() else (None, [])
    if settings is not None and settings.prefix:
        return settings.prefix
    prefixes = Counter(re.match(r"[A-Z]+", code).group(0) for code in used_codes(root)) if root.is_dir() else Counter()
    if prefixes:
        return prefixes.most_common(1)[0][0]
    from errkit.core import settings

    home = Path(settings.catalog_folder(None))  # a new folder (drafts, an import): the project's prefix
    home_settings, _ = load_settings(home) if home.is_dir() and home.resolve() != root.resolve() else (None, [])
    return home_settings.prefix if home_settings is not None and home_settings.prefix else DEFAULT_PREFIX


def settings_prefix(root: Path) -> str | None:
    """The `prefix` the catalogue's settings name (lint's code-prefix rule enforces it), if any."""
    settings, _ = load_settings(root)
    return settings.prefix if settings is not None else None


def next_code(root: Path, area: str, prefix: str, taken: set[str] | None = None) -> str:
    """The area's next free code: after its highest, or for a new area the first hundred no code uses."""
    taken = used_codes(root) if taken is None else taken
    in_area = [int(p.name[len(prefix):len(prefix) + 3]) for p in (root / area).glob(f"{prefix}[0-9][0-9][0-9]*.yaml")]
    used_hundreds = {int(code[len(prefix):]) // 100 for code in taken if code.startswith(prefix) and code[len(prefix):].isdigit()}
    start = max(in_area) + 1 if in_area else 100 * next((h for h in range(1, 10) if h not in used_hundreds), 9)
    for number in range(start, 1000):
        code = f"{prefix}{number:03d}"
        if code not in taken:
            return code
    raise UsageError(f"no free code left after {prefix}{start:03d}")

