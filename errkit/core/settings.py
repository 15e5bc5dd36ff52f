"""Where the current project keeps its catalogue and what it generates: `[tool.errkit]` settings.

A project is found by walking up from the working directory (or from `--catalog`) to the first
`pyproject.toml` holding a `[tool.errkit]` table, as ruff and pytest find theirs. Precedence, first
wins: the command line, `[tool.errkit]`, the catalogue's `errkit.yaml`, the defaults. Paths in
`[tool.errkit]` are relative to the folder of that `pyproject.toml`; without one, to the catalogue
folder's parent.

`index_path()` is on `errkit explain`'s start-up path: it uses `os` only, and parses a
`pyproject.toml` (tomllib) only when its text holds `[tool.errkit]`.
"""

import os

PYPROJECT = "pyproject.toml"
TABLE = "[tool.errkit]"
DEFAULT_CATALOG = "catalog"
# Keys `[tool.errkit]` may hold. Settings keys may also be in the catalogue's errkit.yaml; the
# path keys (catalog, index, site, validators) are relative to the project root.
class SettingsError(ValueError):
    """A `[tool.errkit]` table that cannot be used (its message names the file)."""


def _read_tool_table(path: str) -> dict | None:
    """The `[tool.errkit]` table of a pyproject.toml, or None when it has none."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    if TABLE.encode() not in raw and b"[tool]" not in raw and b"tool.errkit" not in raw:
        return None
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise SettingsError(f"{path}: cannot read: {err}") from None
    table = data.get("tool", {}).get("errkit")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.errkit] must be a table")
    return table


def find_pyproject(start: str | None = None) -> tuple[str, dict] | None:
    """(folder, [tool.errkit] table) of the nearest pyproject.toml above `start` that has one."""
    here = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(here, PYPROJECT)
        if os.path.isfile(candidate):
            table = _read_tool_table(candidate)
            if table is not None:
                return here, table
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def index_path(start: str | None = None) -> str | None:
    """The current project's compiled index (its `[tool.errkit] index`), when it names one that
    exists; None otherwise, or when its pyproject.toml cannot be read (explain must still start)."""
    try:
        found = find_pyproject(start)
    except SettingsError:
        return None
    if found is None:
        return None
    root, table = found
    index = table.get("index")
    if not isinstance(index, str):
        return None
    path = os.path.join(root, index)
    return path if os.path.isfile(path) else None


def tool_table_for(catalog: str) -> tuple[str, str | None, dict]:
    """(project root, its pyproject.toml or None, [tool.errkit] minus `catalog`) for the catalogue
    folder `catalog`. The table applies when its `catalog` (default "catalog") is that folder; a
    catalogue elsewhere (a test's copy, a fixture) is its own project rooted at its parent, with
    only its errkit.yaml: another project's settings never leak into it."""
    catalog = os.path.realpath(catalog)
    found = find_pyproject(os.path.dirname(catalog))
    if found is not None:
        root, table = found
        named = table.get("catalog", DEFAULT_CATALOG)
        if isinstance(named, str) and os.path.realpath(os.path.join(root, named)) == catalog:
            return root, os.path.join(root, PYPROJECT), {k: v for k, v in table.items() if k != "catalog"}
    return os.path.dirname(catalog), None, {}


def catalog_folder(option: str | None, start: str | None = None) -> str:
    """The catalogue folder a command works on: `--catalog`, else the current project's
    `[tool.errkit] catalog` (default "catalog" beside its pyproject.toml), else ./catalog."""
    if option:
        return option
    found = find_pyproject(start)
    if found is None:
        return DEFAULT_CATALOG
    root, table = found
    named = table.get("catalog", DEFAULT_CATALOG)
    if not isinstance(named, str) or not named:
        raise SettingsError(f"{os.path.join(root, PYPROJECT)}: [tool.errkit] catalog must be a folder name")
    return os.path.relpath(os.path.join(root, named)) if not os.path.isabs(named) else named


def newest_mtime_ns(folder: str) -> int:
    """The newest modification time (ns) of the files under `folder`, hidden folders skipped: a
    compiled index older than that is stale for that catalogue (errkit/explain/registry.py), and
    `errkit generate` marks the index it leaves as at least that new."""
    newest = 0
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            try:
                newest = max(newest, os.stat(os.path.join(here, name)).st_mtime_ns)
            except OSError:
                pass
    return newest
