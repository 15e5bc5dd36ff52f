"""`errkit new AREA SLUG`: scaffold an entry file with the area's next free code."""

import re
from pathlib import Path

from errkit.core.atomic import write_text
from errkit.core.errors import UsageError
from errkit.catalogue import spec
from errkit.catalogue.codes import code_prefix, next_code, settings_prefix, used_codes
from errkit.catalogue.writing import MODELINE

def check_names(area: str, slug: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", area):
        raise UsageError(f"area {area!r} must be a lower-case folder name")
    if not re.fullmatch(spec.SLUG, slug):
        raise UsageError(f"slug {slug!r} must be kebab-case (a-z, 0-9 and '-')")


def new_entry(root: Path, area: str, slug: str, code: str | None, exception: str) -> Path:
    from errkit.generate.render import render_template

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
    text = render_template("entry.yaml.j2", code=code, slug=slug, exception=exception, modeline=MODELINE)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text)
    return path

