"""`errkit init`: give an existing project a catalogue, its settings and a site skeleton.

Everything is written at once or not at all (errkit/core/atomic.py), and nothing that exists is
overwritten: a project that already has `[tool.errkit]`, a catalogue or a site is refused.
The site skeleton (mkdocs.yml, the hand-editable pages and the 404 page's override) is rendered from templates shipped in
errkit; the paste page's scripts and stylesheet are written later, by `errkit generate`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from errkit.catalogue import spec
from errkit.core.atomic import write_all
from errkit.generate.files import JOURNAL
from errkit.authoring.packaging import Packaging, packaging, toml_string as _toml_string
from errkit.core import UsageError
from errkit.core.settings import PYPROJECT

INDEX_FILE = "_errkit_index.json"
VALIDATORS_FILE = "_errkit_errors.py"
LOCAL_DOCS = "http://127.0.0.1:8000"  # where `mkdocs serve` shows the site until it is published
SKELETON_PAGES = ("index.md", "paste.md", "contributing.md")
VERSION = "0.1"  # the first version a new catalogue publishes (errkit.yaml's version:)


@dataclass(frozen=True)
class Plan:
    root: Path
    project: str
    name: str
    prefix: str
    package_dir: str  # project-relative folder of the package that ships the index
    package: str  # its import name
    catalog: str
    site: str
    docs_url: str
    repo_url: str | None
    pyproject: dict | None  # the parsed pyproject.toml, None when the project has none


def _read_pyproject(root: Path) -> dict | None:
    path = root / PYPROJECT
    if not path.is_file():
        return None
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"{path}: cannot read it: {err}") from None


def distribution_name(pyproject: dict | None) -> str | None:
    """The name pip installs the project by: [project]'s, or Poetry 1's [tool.poetry]'s."""
    for table in ((pyproject or {}).get("project"), ((pyproject or {}).get("tool") or {}).get("poetry")):
        if isinstance(table, dict) and isinstance(table.get("name"), str):
            return table["name"]
    return None


def _find_package(root: Path, wanted: str | None, project: str) -> Path:
    """The folder of the import package that will ship the compiled index."""
    names = [wanted] if wanted else [re.sub(r"[-.]+", "_", project).lower()]
    for name in names:
        for candidate in (root / name, root / "src" / name):
            if (candidate / "__init__.py").is_file():
                return candidate
    if wanted:
        raise UsageError(f"no package {wanted!r} here (looked for {wanted}/__init__.py and src/{wanted}/__init__.py)")
    found = [p.parent for base in (root, root / "src") if base.is_dir() for p in sorted(base.glob("*/__init__.py"))
             if p.parent.name not in ("tests", "test", "docs")]
    if len(found) == 1:
        return found[0]
    raise UsageError("cannot tell which package ships the catalogue's index: pass --package NAME")


def _default_prefix(project: str) -> str:
    letters = re.sub(r"[^A-Za-z]", "", project).upper()
    return (letters[:3] if len(letters) >= 2 else "ERR")


def plan(root: Path, *, project: str | None, name: str | None, prefix: str | None, package: str | None,
         docs_url: str | None, repo_url: str | None, catalog: str, site: str) -> Plan:
    root = root.resolve()
    data = _read_pyproject(root)
    if data is not None and isinstance(data.get("tool"), dict) and "errkit" in data["tool"]:
        raise UsageError(f"{root / PYPROJECT} already has [tool.errkit]: this project is set up")
    project = project or distribution_name(data) or root.name
    prefix = prefix or _default_prefix(project)
    if not re.fullmatch(spec.PREFIX, prefix):
        raise UsageError(f"prefix {prefix!r} must be 2-4 capital letters (codes are the prefix and three digits)")
    package_dir = _find_package(root, package, project)
    for folder in (catalog, site):
        target = root / folder
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise UsageError(f"{target} exists and is not empty; choose another folder (--catalog / --site)")
    return Plan(root, project, name or project, prefix, package_dir.relative_to(root).as_posix(), package_dir.name,
                catalog, site, docs_url or LOCAL_DOCS, repo_url, data)


def pyproject_tables(p: Plan) -> str:
    """What init appends to pyproject.toml: the settings, the index's registration, its packaging."""
    index = f"{p.package_dir}/{INDEX_FILE}"
    lines = [
        "",
        "# errkit: the error catalogue's settings (every key: errkit's site, \"Adopt errkit\", its reference page).",
        "[tool.errkit]",
        f"catalog = {_toml_string(p.catalog)}",
        f"index = {_toml_string(index)}",
        f"validators = {_toml_string(f'{p.package_dir}/{VALIDATORS_FILE}')}",
        f"site = {_toml_string(p.site)}",
        f"prefix = {_toml_string(p.prefix)}",
    ]
    return "\n".join(lines + _packaging(p).tables) + "\n"


def _packaging(p: Plan) -> Packaging:
    return packaging(p.pyproject or {}, _raw_pyproject(p), project=p.project, package=p.package,
                     package_dir=p.package_dir, index_file=INDEX_FILE)


def by_hand(p: Plan) -> str | None:
    """What init could not write and the author must add, or None."""
    if p.pyproject is None:
        return (f"this project has no pyproject.toml: make its build ship {p.package_dir}/{INDEX_FILE} as package "
                f"data and register it with the entry point errkit.catalogues: {p.project} = {p.package}:{INDEX_FILE}")
    return _packaging(p).by_hand


def _raw_pyproject(p: Plan) -> str:
    path = p.root / PYPROJECT
    return path.read_text("utf-8") if path.is_file() else ""


def settings_yaml(p: Plan) -> str:
    from errkit.generate.render import environment

    return environment().get_template("skeleton/errkit.yaml.j2").render(p=p, version=VERSION, in_pyproject=p.pyproject is not None,
                                                                          index=f"{p.package_dir}/{INDEX_FILE}",
                                                                          validators=f"{p.package_dir}/{VALIDATORS_FILE}")


def site_url(docs_url: str, version: str) -> str:
    """mkdocs' site_url for pages at `docs_url`'s addresses: the version's folder, which is also where
    `mkdocs serve` mounts the preview, so that a note's link to <docs_url>/<version>/errors/<CODE>/
    opens the page there too."""
    if "{" in docs_url:  # a pattern: everything before its first placeholder
        return docs_url.split("{", 1)[0].rstrip("/") + "/"
    return f"{docs_url.rstrip('/')}/{version}/"


def skeleton(p: Plan) -> dict[str, str]:
    """The site's hand-editable files, rendered for this project (site folder-relative)."""
    from errkit.generate.render import environment

    env = environment()
    context = {"project": p.project, "name": p.name, "prefix": p.prefix, "catalog": p.catalog, "site": p.site,
               "repo_url": p.repo_url, "site_url": site_url(p.docs_url, VERSION),
               "distribution": distribution_name(p.pyproject) or p.project}
    out = {"mkdocs.yml": env.get_template("skeleton/mkdocs.yml.j2").render(**context)}
    for page in SKELETON_PAGES:
        out[f"docs/{page}"] = env.get_template(f"skeleton/docs/{page}.j2").render(**context)
    for page in ("404.html", "main.html"):
        out[f"overrides/{page}"] = env.get_template(f"skeleton/overrides/{page}.j2").render(**context)
    return out


def init(root: Path, **options) -> tuple[list[Path], str | None]:
    """Write the catalogue's settings, an empty catalogue and the site skeleton; the written paths,
    and what the author must still add by hand (None when nothing)."""
    p = plan(root, **options)
    files: dict[Path, bytes] = {p.root / p.catalog / "errkit.yaml": settings_yaml(p).encode()}
    for rel, text in skeleton(p).items():
        files[p.root / p.site / rel] = text.encode()
    if p.pyproject is not None:
        files[p.root / PYPROJECT] = (_raw_pyproject(p).rstrip("\n") + "\n" + pyproject_tables(p)).encode()
    write_all(files, journal=p.root / JOURNAL)
    return sorted(files), by_hand(p)
