"""What `errkit init` adds to a project's pyproject.toml so that its build backend ships the compiled
index inside the package and registers it for `errkit explain`, whatever the layout (flat or src).

Every backend here reads PEP 621's `[project.entry-points]`, except Poetry before 2.0 (a project
with `[tool.poetry]` and no `[project]`), which has `[tool.poetry.plugins]`. Hatchling, flit,
pdm-backend and poetry-core ship every file inside the package folder; setuptools ships only what
package data names, and in a flat layout discovers `catalog/` and `site/` as packages unless
discovery is limited to the package.
"""

from __future__ import annotations

from dataclasses import dataclass

BACKENDS = {  # build-backend module prefix -> the name this module calls it
    "setuptools": "setuptools",
    "hatchling": "hatchling",
    "flit_core": "flit",
    "pdm.backend": "pdm",
    "poetry.core": "poetry",
    "uv_build": "uv",
}


@dataclass(frozen=True)
class Packaging:
    tables: list[str]  # TOML lines to append
    by_hand: str | None  # what the author must still do, when init cannot write it


def backend_of(pyproject: dict) -> str | None:
    """'setuptools', 'hatchling', 'flit', 'pdm', 'poetry', 'uv', or None for another or no backend."""
    build = pyproject.get("build-system") if isinstance(pyproject.get("build-system"), dict) else {}
    module = build.get("build-backend") if isinstance(build.get("build-backend"), str) else ""
    if not module:  # pip's default when [build-system] names no backend
        return "setuptools"
    for prefix, name in BACKENDS.items():
        if module == prefix or module.startswith(prefix + "."):
            return name
    return None


def toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _table(data: dict, *keys: str):
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def packaging(pyproject: dict, raw: str, *, project: str, package: str, package_dir: str, index_file: str) -> Packaging:
    """The tables that register `package:index_file` and ship it, for this pyproject."""
    backend = backend_of(pyproject)
    entry = f"{toml_string(project)} = {toml_string(f'{package}:{index_file}')}"
    lines: list[str] = []
    by_hand = None
    has_project_table = isinstance(pyproject.get("project"), dict)
    if "errkit.catalogues" not in raw:
        if has_project_table:
            lines += ["", "# `errkit explain` finds the installed catalogue through this entry point.",
                      '[project.entry-points."errkit.catalogues"]', entry]
        elif backend == "poetry":
            lines += ["", "# `errkit explain` finds the installed catalogue through this entry point.",
                      '[tool.poetry.plugins."errkit.catalogues"]', entry]
        else:
            by_hand = (f"register the index with an entry point in the group errkit.catalogues: {entry} "
                       "(pyproject.toml has no [project] table to write it into)")
    if backend == "setuptools":
        if "[tool.setuptools.package-data]" not in raw:
            lines += ["", "[tool.setuptools.package-data]", f"{toml_string(package)} = [{toml_string(index_file)}]"]
        explicit = _table(pyproject, "tool", "setuptools", "packages") is not None or "py-modules" in (
            _table(pyproject, "tool", "setuptools") or {})
        if "/" not in package_dir and not explicit:
            lines += ["", "# A flat layout: only the package is discovered, not the catalogue and site folders.",
                      "[tool.setuptools.packages.find]", f"include = [{toml_string(package)}, {toml_string(package + '.*')}]"]
    elif backend is None:
        module = _table(pyproject, "build-system", "build-backend")
        by_hand = ((by_hand + "; and ") if by_hand else "") + (
            f"make the build backend {module!r} ship {package_dir}/{index_file} inside the package")
    return Packaging(lines, by_hand)
