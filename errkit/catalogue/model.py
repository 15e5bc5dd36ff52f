"""The catalogue as immutable objects (entries, params, fixes, variants, kernels, settings, lint
findings): what the catalogue, generate, authoring and scan sides read; never the explain side,
which reads the compiled index instead."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from errkit.catalogue import rules
from errkit.catalogue.vetting import Verdicts
from errkit.core import values

EMPTY: Mapping = MappingProxyType({})
# The source of an entry's own message: the catalogue's `name` setting, filled in where settings are known.
OWN_SOURCE = ""


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    description: str
    optional: bool = False
    form: str | None = None  # str values: "token" (default), "list", "text", "device" or "sentence" (values.STR_FORMS)


@dataclass(frozen=True)
class Case:
    """A fix's values in a case the message cannot show (`with segment_ids, under jax.grad`)."""

    when: str
    assume: Mapping[str, object]  # name -> the value the case assumes for it
    suggest: Mapping[str, str]  # suggestion label -> its expression in this case


@dataclass(frozen=True)
class Fix:
    summary: str
    suggest: Mapping[str, str] = field(default_factory=lambda: EMPTY)  # label -> expression
    before: str | None = None
    after: str | None = None
    alternative: bool = False  # leaves the library that raised the error: offered last, labelled so
    sets: Mapping[str, str] = field(default_factory=lambda: EMPTY)  # suggestion label -> the param its value replaces
    unverified: str | None = None  # why the fix cannot be run on a CPU, when it cannot
    setup: str | None = None  # code run before `before` and `after` (else the entry's setup)
    then: str | None = None  # code run after them, what exercises them (else the entry's)
    kernel: str | None = None  # the kernel this fix is for (else the entry's)
    site: str | None = None  # the raise site it is for: "xla-fusion" or "pallas-call" (errkit/explain/context.py)
    cases: tuple[Case, ...] = ()  # values per case of what the message cannot show


@dataclass(frozen=True)
class Variant:
    message: str
    source: str
    exception: str | None = None
    aliases: Mapping[str, str] = field(default_factory=lambda: EMPTY)  # placeholder expression -> param name
    location: str | None = None
    note: str | None = None
    releases: str | None = None  # "jax>=0.4.31,<0.5.3": the upstream releases raising this wording
    kernel: str | None = None  # the kernel raising this wording, when not the entry's (catalog/kernels/)
    raised_by: tuple[str, ...] = ()  # the kernels raising it verbatim, when several do
    located_only: bool = False  # recognised only in a traceback raised at its location


@dataclass(frozen=True)
class Positions:
    """Where each key path of a document sits in its file (1-based line and column)."""

    path: Path
    table: Mapping[tuple, tuple[int, int]] = field(default_factory=lambda: EMPTY)

    def of(self, key_path: tuple) -> tuple[int, int]:
        key_path = tuple(key_path)
        while key_path:
            if key_path in self.table:
                return self.table[key_path]
            key_path = key_path[:-1]
        return self.table.get((), (1, 1))


@dataclass(frozen=True)
class Entry:
    code: str
    slug: str
    title: str
    area: str
    exception: str
    message: str
    explanation: str
    params: Mapping[str, Param] = field(default_factory=lambda: EMPTY)
    check: str | None = None
    explain_only: bool = False
    severity: str = "error"
    triggers: tuple[str, ...] = ()
    situations: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    prevention: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = ()
    bad_examples: tuple[Mapping[str, Any], ...] = ()
    good_examples: tuple[Mapping[str, Any], ...] = ()
    related: tuple[str, ...] = ()
    origin: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    source: str | None = None
    location: str | None = None
    aliases: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    releases: str | None = None  # the upstream releases raising `message` (see Variant.releases)
    kernel: str | None = None  # the kernel whose rules its values follow (catalog/kernels/<kernel>.yaml)
    raised_by: tuple[str, ...] = ()  # the kernels raising `message` verbatim, when several do
    setup: str | None = None  # code run before each fix's before/after snippet: the inputs they use
    then: str | None = None  # code run after it: the call that exercises the snippet
    traced: str | None = None  # "checkify": the check also runs on traced values as a checkify check
    reads: tuple[str, ...] = ()  # templates of lines after the message holding more of its params
    implies: Mapping[str, Any] = field(default_factory=lambda: EMPTY)  # kernel values the error implies (kernels.solutions)
    needs_context: bool = False  # other compilers print the message too: exact only with JAX/Pallas/Mosaic in the text
    positions: Positions | None = field(default=None, compare=False, repr=False)
    verdicts: Verdicts = field(default_factory=Verdicts, compare=False, repr=False)  # its expressions and templates vetted (vetting.py)

    @property
    def source_path(self) -> Path | None:
        return self.positions.path if self.positions else None

    @property
    def wordings(self) -> tuple[Variant, ...]:
        """The entry's own message first, then its variants."""
        source = self.source or ("an upstream kernel" if self.explain_only else OWN_SOURCE)
        own = Variant(message=self.message, source=source, exception=self.exception, aliases=self.aliases,
                      location=self.location, releases=self.releases, kernel=self.kernel, raised_by=self.raised_by)
        return (own,) + self.variants

    def raising_kernels(self, variant: Variant) -> tuple[str, ...]:
        """The kernels that raise one of its wordings: its `raised_by`, else its kernel, else the entry's."""
        if variant.raised_by:
            return variant.raised_by
        kernel = variant.kernel or self.kernel
        return (kernel,) if kernel else ()

    @property
    def class_name(self) -> str:
        return "".join(part.capitalize() for part in self.slug.split("-")) + "Error"

    def typed(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Example values from YAML converted to the params' runtime types."""
        return {name: values.coerce(self.params[name].type, value) if name in self.params else value for name, value in raw.items()}


@dataclass(frozen=True)
class Group:
    name: str
    description: str
    args: tuple[str, ...]
    bindings: Mapping[str, str]
    checks: tuple[str, ...]


DEFAULT_PREFIX = "ERR"
DEFAULT_BRANCH = "main"
DEFAULT_SITE = "site"


@dataclass(frozen=True)
class Settings:
    """A catalogue's settings: its errkit.yaml overlaid by the project's `[tool.errkit]` table
    (errkit/core/settings.py). Paths are relative to `project_root`."""

    project: str
    version: str
    docs_url: str
    validators: str | None = None
    groups: Mapping[str, Group] = field(default_factory=lambda: EMPTY)
    repo_url: str | None = None
    install: str | None = None  # what a reader installs to run the own entries' Reproduce snippets
    retired: tuple[str, ...] = ()
    positions: Positions | None = field(default=None, compare=False, repr=False)
    name: str | None = None
    prefix: str | None = None  # None: not set (errkit/authoring/records.py code_prefix infers one)
    branch: str = DEFAULT_BRANCH
    index: str | None = None
    site: str | None = None
    project_root: Path | None = field(default=None, compare=False)

    @property
    def raised_by(self) -> str:
        """What raises the catalogue's own errors, in generated text."""
        return self.name or self.project

    def page_url(self, code: str) -> str:
        from errkit.core.runtime import page_url

        return page_url(self.docs_url, self.version, code)


@dataclass(frozen=True)
class Rule:
    """One thing a kernel requires of the values a user chooses (a block size, a split, a length)."""

    name: str
    check: str  # an expression over the kernel's values: true when the kernel accepts them
    says: str
    enforced: str = "check"  # "check" (a Python check raises), "lowering" (the compiler refuses) or "runtime"


@dataclass(frozen=True)
class KernelValue(Param):
    """A value a kernel's rules read: a Param, with how it follows from the others (`derived`, an
    expression) and what it may be when a message does not show it (`cases`: (value, words) pairs)."""

    derived: str | None = None
    cases: tuple[tuple[Any, str], ...] = ()


@dataclass(frozen=True)
class Kernel:
    """A kernel the catalogue covers, with every rule on the values it takes, declared once."""

    id: str
    title: str
    source: str
    values: Mapping[str, KernelValue]
    rules: tuple[Rule, ...]
    positions: Positions | None = field(default=None, compare=False, repr=False)
    names: tuple[str, ...] = ()  # what compiler output calls it (pallas_call names, %splash_mha_fwd)
    framework: str = "jax"  # whose users call it: explain drops its fixes when a text shows another framework
    verdicts: Verdicts = field(default_factory=Verdicts, compare=False, repr=False)  # its expressions and templates vetted (vetting.py)


@dataclass(frozen=True)
class Catalogue:
    root: Path
    settings: Settings
    entries: tuple[Entry, ...]
    kernels: Mapping[str, Kernel] = field(default_factory=lambda: EMPTY)
    verdicts: Verdicts = field(default_factory=Verdicts, compare=False, repr=False)  # its expressions and templates vetted (vetting.py)

    @property
    def project_root(self) -> Path:
        """The folder the settings' paths are relative to (errkit/core/settings.py)."""
        return Path(self.settings.project_root or self.root.resolve().parent).resolve()

    def by_code(self) -> dict[str, Entry]:
        return {e.code: e for e in self.entries}

    def get(self, code_or_slug: str) -> Entry | None:
        key = code_or_slug.strip()
        for e in self.entries:
            if e.code == key.upper() or e.slug == key.lower():
                return e
        return None


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in a catalogue file, printed as `path:line:col: rule: message`."""

    path: str
    line: int
    col: int
    rule: str
    message: str
    severity: str = "error"

    def __post_init__(self) -> None:
        rules.known(self.rule)  # every rule is registered (errkit/catalogue/rules.py)

    def __str__(self) -> str:
        return f"{_one_line(self.path)}:{self.line}:{self.col}: {self.rule}: {_one_line(self.message)}"


def _one_line(text: str) -> str:
    """`text` with each character that is not printable (a newline, a NUL) as its escape: a finding
    is one line, whatever the catalogue text it quotes holds."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
