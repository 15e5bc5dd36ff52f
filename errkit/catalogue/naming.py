"""Param names and types guessed from code: shared by `errkit import` and `errkit scan --emit`."""

from __future__ import annotations

import re

from errkit.catalogue.spec import IDENTIFIER

_INT_HINTS = ("ndim", "heads", "len", "size", "dim", "block", "num", "steps", "count", "batch", "wgs", "tiles", "blocks")


def param_name(expr_text: str) -> str:
    """A param name for a placeholder expression: `q.shape` -> q_shape, `block_q * 2` -> block_q_2."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", expr_text.strip()).strip("_").lower()
    return name if re.fullmatch(IDENTIFIER, name or "") else f"value_{name}"


def guess_type(name: str) -> str:
    """The param type a name suggests (`*_shape` a shape, `num_*` an int, ...); str when nothing does."""
    if "shape" in name:
        return "shape"
    if "dtype" in name:
        return "dtype"
    if any(h in name for h in ("scale", "cap")) and "method" not in name:
        return "float"
    if any(h in name for h in _INT_HINTS):
        return "int"
    return "str"
