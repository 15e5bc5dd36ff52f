"""What generated validators run: the exception base, the binding helpers, and how a value, a
suggestion and an entry's page address are written. `errkit explain` writes values and page
addresses with the same functions, so a raised error's note and an explained paste agree.

`errkit generate` copies the ones a catalogue uses into the generated module (errkit/generate/carry.py),
so that module needs only the standard library: write them here, in plain Python, importing only
the standard library at the top (numpy and jax only inside a function, when it reads an array).
No jax import here: the helpers read arrays through their duck-typed attributes.
"""

import os
from types import MappingProxyType


def docs_url_variable(project: str) -> str:
    """The environment variable that overrides one catalogue's docs URL (a local `mkdocs serve`):
    `ERRKIT_DOCS_URL_<PROJECT>`, the project name upper-cased with every other character as `_`,
    so one library's override leaves every other errkit-using library's links alone."""
    return "ERRKIT_DOCS_URL_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in project).upper()


def page_url(docs_url: str, version: str, code: str) -> str:
    """An entry's page: `docs_url` is a base (`<base>/<version>/errors/<CODE>/`) or a pattern
    holding `{version}` and `{code}`."""
    if "{code}" in docs_url:
        return docs_url.replace("{version}", version).replace("{code}", code)
    return f"{docs_url.rstrip('/')}/{version}/errors/{code}/"


def shown(value) -> str:
    """A computed value as `errkit explain` prints it: a list's (or tuple's) items joined by commas,
    an item that is itself a list (a configuration of several params, a shape) in parentheses."""
    if isinstance(value, (list, tuple)):
        return ", ".join(f"({shown(v)})" if isinstance(v, (list, tuple)) else shown(v) for v in value) if value else "(none)"
    return str(value)


def valued(label: str) -> str:
    """A suggestion's label as shown beside a value: without the note saying what an empty one
    means (`block_k dividing kv_seq_len (none: pad instead)` -> `block_k dividing kv_seq_len`,
    `compute_wgs_bwd (one warpgroup, the default; none: ...)` -> `compute_wgs_bwd (one warpgroup,
    the default)`). The whole label says it beside an empty one."""
    at = label.find("none: ")
    opened = label.rfind("(", 0, at)
    closed = label.find(")", at)
    if at < 0 or opened < 0 or closed < 0 or "(" in label[opened + 1:at] or "(" in label[at:closed]:
        return label
    if not label[opened + 1:at].strip():  # the parenthesis is the note alone
        return (label[:opened].rstrip() + label[closed + 1:]).strip()
    semicolon = label.rfind(";", opened, at)
    return label if semicolon < 0 else label[:semicolon] + label[closed:]


def labelled(label: str, value) -> str:
    """A suggestion's label as an answer shows it next to `value`: `valued` beside a value, whole
    beside an empty one (which its note explains)."""
    return label if value in (None, [], ()) else valued(label)


MANY = 4  # cases of one value told as "the other N cases" when they are most of them


def case_groups(cases) -> list[tuple[list, dict, bool]]:
    """A suggestion's cases as shown: (their `when`s, one of them, whether it is "the other cases"),
    those with the same value together in the order first met; the group of the value most of them
    share, when it is at least MANY, last as the other cases. A case not computed is its own, and so
    is a kernel's ("raised by ...": a reader looks for their kernel's line)."""
    groups: dict = {}
    for n, case in enumerate(cases):
        key = repr(case["value"]) if "value" in case and "kernel" not in case else n  # (JSON-shaped values)
        groups.setdefault(key, ([], case))[0].append(case["when"])
    rows = list(groups.values())
    most = max((row for row in rows if "kernel" not in row[1]), key=lambda row: len(row[0]), default=None)
    if most is None or len(most[0]) < MANY or 2 * len(most[0]) <= len(cases) or len(rows) == 1:
        return [(whens, case, False) for whens, case in rows]
    return [(whens, case, False) for whens, case in rows if whens is not most[0]] + [(most[0], most[1], True)]


def first_suggestion(suggestions, params) -> str | None:
    """`label: value` of the first suggestion that computes a value from `params` (in the order
    of the entry's fixes, as `errkit explain` lists them); None when none does."""
    for label, compute in suggestions:
        try:
            value = compute(**params)
        except Exception:  # noqa: BLE001 - needs a value the error did not carry, or cannot be computed for these
            continue
        if value is not None and value != [] and value != ():
            return f"{valued(label)}: {shown(value)}"
    return None


def query_string(params) -> str:
    """The values as an entry page's query string (`num_q_heads=12&num_kv_heads=8`), each written
    as a message writes it, a list or shape as its items joined by commas."""
    from urllib.parse import quote

    def text(value):
        return ",".join(text(v) for v in value) if isinstance(value, (list, tuple)) else str(value)

    return "&".join(f"{quote(str(k))}={quote(text(v), safe=',')}" for k, v in params.items())


class CatalogueError(Exception):
    """Base of every catalogued error: `str(e)` is the message; `.code`, `.params`, and a note with
    the first fix computed from the values and the entry's page with the values in its address."""

    code: str = ""
    title: str = ""
    docs_base: str = ""
    docs_version: str = ""
    docs_url_env: str = ""  # the variable that overrides docs_base, read when an error is raised
    suggestions: tuple = ()  # (label, function of the params) of the entry's fixes, in order

    def __init__(self, message: str, params=None):  # params: a mapping of the values the message shows
        super().__init__(message)
        self.params = MappingProxyType(dict(params or {}))
        hint = first_suggestion(self.suggestions, self.params)
        self.add_note(f"[{self.code}] {self.title}" + (f" - {hint}" if hint else "") + f" - see {self.docs_link}")

    @property
    def docs_url(self) -> str:
        base = (os.environ.get(self.docs_url_env) if self.docs_url_env else None) or self.docs_base
        return page_url(base, self.docs_version, self.code)

    @property
    def docs_link(self) -> str:
        """The entry's page with the error's values, from which the page computes the fixes."""
        query = query_string(self.params)
        return self.docs_url + ("?" + query if query else "")

    def __reduce__(self):
        return (type(self), (str(self), dict(self.params)))


# -- binding helpers: how params are read off the kernel's inputs ---------------------------------

# Types whose instances all have `.shape` and `.dtype` (declared on the class, as jax and numpy
# arrays do): a validator asks several times per call, and each hasattr costs a lookup.
_ARRAY_TYPES: set = set()


def is_array(x) -> bool:
    kind = type(x)
    if kind in _ARRAY_TYPES:
        return True
    if hasattr(kind, "shape") and hasattr(kind, "dtype"):
        _ARRAY_TYPES.add(kind)
        return True
    return hasattr(x, "shape") and hasattr(x, "dtype")


def ndim(x) -> int:
    """Rank of an array; -1 for something that is not an array."""
    return len(x.shape) if is_array(x) else -1


def shape(x) -> tuple:
    if type(x) not in _ARRAY_TYPES and not is_array(x):
        return ()
    dims = x.shape
    return dims if type(dims) is tuple else tuple(int(d) for d in dims)


def dim(x, axis: int) -> int:
    dims = shape(x)
    return dims[axis] if -len(dims) <= axis < len(dims) else -1


_DTYPE_NAMES: dict = {}


def dtype_name(x) -> str:
    if type(x) not in _ARRAY_TYPES and not is_array(x):
        return type(x).__name__
    dtype = x.dtype
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):
        name = str(getattr(dtype, "name", dtype))
        try:
            _DTYPE_NAMES[dtype] = name  # numpy's dtype.name is slow; a validator asks for it every call
        except TypeError:
            pass
        return name


def type_name(x) -> str:
    return type(x).__name__


_numpy = None
_last_read = None  # (a small array, its host copy) last read: a check of min then max reads it once
_FEW = 32  # elements: fewer are reduced as a list (numpy's reduction costs about 1 us, whatever the size)


def _concrete(x, reduce: str):
    """min or max of the elements as an int, or None when the array is traced (under jit) or empty."""
    global _numpy, _last_read
    if type(x) not in _ARRAY_TYPES and (x is None or not is_array(x)):
        return None
    try:
        last = _last_read
        if last is not None and last[0] is x:
            host = last[1]
        else:
            if _numpy is None:
                import numpy as _numpy  # read on the host: no device dispatch for a [batch] vector

            host = _numpy.asarray(x)
            if host.size <= _FEW:  # (a large array's host copy is not kept)
                _last_read = (x, host)
        if not host.size:
            return None
        if host.size <= _FEW:
            return int((min if reduce == "min" else max)(host.ravel().tolist()))
        return int(getattr(host, reduce)())
    except Exception:  # tracers refuse concretisation
        return None


def concrete_min(x):
    """The smallest element as an int, or None when the array is traced (under jit) or empty."""
    return _concrete(x, "min")


def concrete_max(x):
    """The largest element as an int, or None when the array is traced (under jit) or empty."""
    return _concrete(x, "max")


def attr(obj, name: str, default=None):
    """A public attribute of a config object (names starting with '_' are refused)."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        return default
    return getattr(obj, name, default)


def axis_names(mesh) -> str:
    return ", ".join(repr(str(n)) for n in getattr(mesh, "axis_names", ()))


def axis_size(mesh, name) -> int:
    """Size of mesh axis `name`; 1 for None; 0 for a name the mesh lacks."""
    if name is None:
        return 1
    sizes = dict(getattr(mesh, "shape", {}))
    return int(sizes.get(name, 0))


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def default_backend() -> str:
    """The platform jax runs on by default ('cpu', 'gpu', 'tpu', ...)."""
    import jax  # only validators call this, from inside the kernel, where jax is loaded anyway

    return jax.default_backend()


BINDINGS = {
    "default_backend": default_backend,
    "is_array": is_array,
    "ndim": ndim,
    "shape": shape,
    "dim": dim,
    "dtype_name": dtype_name,
    "type_name": type_name,
    "concrete_min": concrete_min,
    "concrete_max": concrete_max,
    "attr": attr,
    "axis_names": axis_names,
    "axis_size": axis_size,
    "is_number": is_number,
}
