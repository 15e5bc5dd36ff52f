"""site/docs: the troubleshooting site's generated pages (issue 6). Placeholder until it lands."""

from __future__ import annotations

from ..model import Catalogue


def pages(catalogue: Catalogue) -> dict[str, str]:
    return {}


def run(root, args) -> int:
    from . import run as generate_run

    return generate_run(root, check=args.check)
