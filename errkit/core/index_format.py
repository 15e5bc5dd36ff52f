"""The compiled index's format, its one definition: the version, the keys of its records, and the
limits, marks and patterns that both matchers read it with.

`errkit generate` writes errkit/_index.json with exactly these keys (generate/index.py checks each
record) and the site's assets/errkit/index.json from the same records; errkit/explain/matching/
reads them; the browser's matcher (site_assets/match.js) gets every name of JS_CONSTANTS and
JS_PATTERNS written into it by `errkit generate` (templates/site/format.js.j2, the patterns in
JavaScript syntax), so changing a value here changes the JavaScript. site/docs/contributing/
index-format.md describes the format for other tools (tests/core/test_index_format.py keeps it true).

Standard library only and light, as the explain path needs: the patterns are regex.Lazy (compiled
on first use); nothing here imports `re`, `json` or `enum`.
"""

from errkit.core import values
from errkit.core.normalise import CHARS as NORMALISED_CHARS, ENTITIES as HTML_ENTITIES  # noqa: F401 - the browser's too
from errkit.core.regex import PY_SPACE, Lazy

VERSION = 2  # the index's "format": raised when a record's keys or their meaning change

# -- the records ----------------------------------------------------------------------------------
# errkit/_index.json: one JSON object; its entries are stored as JSON strings (parsed when shown).
TOP_KEYS = ("$comment", "format", "project", "version", "entries", "wordings", "kernels")
ENTRY_KEYS = ("slug", "title", "area", "exception", "explain_only", "message", "params", "check", "explanation",
              "fixes", "kernel", "tags", "related", "docs_url")
ENTRY_OPTIONAL_KEYS = ("verified", "reads", "needs_context")  # verified: only when the entry's advice was run on
# the real kernels (catalog/ledger/: [{platform, device, jax, libtpu, date, calls, offered, worked, said}]); reads:
# only when the entry reads values from the lines after its message; needs_context: only when true
PARAM_KEYS = ("type", "description")
FIX_KEYS = ("summary", "suggest", "sets", "before", "after", "alternative", "unverified", "kernel")
FIX_OPTIONAL_KEYS = ("site", "cases", "requires")  # site: only when the fix is for one raise site (errkit/explain/context.py);
# cases: only when its values depend on what the message cannot show or on which kernel raised it ([{when, assume,
# suggest}], an assumed `raised_by`: that kernel's values; errkit/core/suggest.py); requires: only when a kernel's rule
# on a suggestion's value reads what no message shows (label -> [{kernel, rule, check, says}])
CASE_KEYS = ("when", "assume", "suggest")
CASE_OPTIONAL_KEYS = ("partition", "regardless")  # partition: only when true, the case is one combination of the
# values the message cannot show, and the fix's cases so marked cover every combination; regardless: only when some,
# the labels for which no value fits that combination whatever the message shows (errkit/core/suggest.py)
READ_KEYS = ("regex", "captures")
WORDING_KEYS = ("code", "variant", "template", "source", "exception", "location", "regex", "captures",
                "literal_chars", "skeleton", "key", "releases", "kernels")
RELEASES_KEYS = ("dist", "specifier", "bounds", "shown")  # a wording's "releases", when not null
KERNEL_KEYS = ("title", "source", "names")
KERNEL_OPTIONAL_KEYS = ("framework",)  # only when not "jax": whose users call the kernel
# The site's assets/errkit/index.json: the same records, every regex in JavaScript syntax, and these.
SITE_TOP_KEYS = ("regex_flavour", "plan")
SITE_ENTRY_KEYS = ("page", "example")
REGEX_FLAVOUR = "JavaScript RegExp, flag u"

# -- limits ---------------------------------------------------------------------------------------
MAX_LINE = 16_384  # an error message is never longer; a longer line is read up to here
PASTE_SIZE = 256 * 1024  # an input this small is a paste: every line is read, wrapped lines are joined
TAIL = 256 * 1024  # what the approximate pass reads: the most recent part of the input
SHORTLIST = 40  # wordings compared in full by the approximate pass, whatever the catalogue's size
POSTINGS_BUDGET = 4000  # word postings read to pick them: the rarest words first
APPROXIMATE_MAX = 0.99  # the best similarity an approximate match shows
QUOTE_WORDS = 3  # a quoted fragment of prose this many words long is compared as the start of a message
REREAD_LINES = 14  # a paste of at most this many lines that matched is read again with its wrapped lines joined
TAG_REACH = 40  # characters a leading tag (`[Bug]: `, `INTERNAL: `) before a message spans at most
QUOTE_COVERAGE = 0.25  # of a quoted start's score, the share that grows with how much of the message it quotes
# A misspelt message (issue 52): the closest wording, this similar or more, is read with each of its
# fixed words missing from the text (at most TYPO_WORDS, each TYPO_LENGTH letters or more) put in
# for the one word of the text one edit from it (a letter left out, added, changed, or two swapped)
TYPO_SIMILARITY = 0.6
TYPO_WORDS = 2
TYPO_LENGTH = 4
TIE_CONTEXT = 16_384  # bytes before a line that may tell which kernel raised it
READ_WINDOW = 16_384  # bytes from a match's line where the lines after it may hold more values
FRAME_REACH = 4000  # bytes above an exception line searched for its traceback's last frame
TRACEBACK_LINES = 200  # lines after a traceback's frames searched for the exception line ending it
BLOCK_GAP = 3  # lines other than a traceback's that may come between two lines of one error printed over several
# Python's note between an exception and the one it caused: one raise's message printed again after it
CHAINED_NOTE = "The above exception was the direct cause of the following exception"
# What a traceback's chaining prints between an exception and the next (Python's, JAX's notes)
TRACEBACK_NOTES = ("Traceback (most recent call last)", CHAINED_NOTE,
                   "During handling of the above exception", "The stack trace below excludes JAX-internal frames",
                   "The preceding is the original exception that occurred", "The preceding stack trace is the source of the JAX operation",
                   "For simplicity, JAX has removed its internal frames")

# -- marks: fixed text that makes a line worth reading ----------------------------------------------
MARKERS = ("Error", "Exception")  # lines naming an exception are read for the wordings without a key
FRAME_MARK = 'File "'  # a traceback's frame: the exception line after the frames is read
NEXT_TRACEBACK = "Traceback (most recent call last)"  # where the lines after a message stop being its own

# -- context marks: where a text says its error was raised (errkit/explain/context.py) -------------
# Fixed text only that framework's code prints or lives under (a frame's path, a module, an
# exception's qualified name). torch_xla's own paths (`/torch_xla/`) are not PyTorch's here: its
# TPU kernels are JAX's Pallas kernels.
PYTORCH_MARKS = ("/torch/", "\\torch\\", "torch._inductor", "torch._dynamo", "torch.compile", "torch.nn.attention",
                 "InductorError", "BackendCompilerFailed", "triton_heuristics", "triton_tem_fused", "triton_per_fused",
                 "triton_red_fused", "triton_poi_fused")
JAX_MARKS = ("/jax/", "\\jax\\", "/jaxlib/", "jax._src", "jax.errors", "jaxlib.", "XlaRuntimeError", "JaxRuntimeError",
             "pallas_call", "jax.experimental")
TRITON_MARKS = ("/triton/", "\\triton\\", "triton.runtime", "triton.compiler", "triton.language", "@triton.jit")
# XLA's own operations: a fusion, or any HLO instruction the compiler allocates for ("while allocating
# on stack for %reduce-window.1 = ..." names one that is not a custom call).
FUSION_MARKS = ("%fusion", "XLA label: %", "fusion.", "_fusion", "allocating on stack for %")
# A kernel's custom call: Mosaic TPU's, Mosaic GPU's, a Triton call of Pallas GPU, scalar prefetch.
PALLAS_MARKS = ("pallas_call", "tpu_custom_call", "custom-call(", "mosaic_gpu", "__gpu$xla.gpu.triton",
                "prefetched SMEM operand")
# What shows that a wording other compilers print too (an entry's `needs_context`) came from JAX's side:
# JAX's or a kernel's marks, or JAX, XLA, Pallas or Mosaic named (a kernel of the catalogue counts too).
CONTEXT_MARKS = JAX_MARKS + PALLAS_MARKS + ("jax", "JAX", "XLA", "xla", "Pallas", "pallas", "Mosaic", "mosaic")
UNCONFIRMED = "other compilers print this wording too, and the text shows no JAX, XLA, Pallas or Mosaic"

# -- patterns (Python syntax, and each means the same in RE2: see errkit/core/regex.py) -------------
SPACE = values.SPACE  # the whitespace between a key's words, and after a message at a line's end
LINE_END = f"{SPACE}*$"  # what anchors a wording's regex at the end of a line (`at_line_end`)
WORD = Lazy(r"[A-Za-z_][A-Za-z0-9_]*")  # a word, for the approximate pass's postings; an identifier
# text quoted in prose ("... rejected with \"cuDNN doesn't support right window\".", a test's
# `_error = 'cuDNN only supports bias gradient'`): 20 to 400 characters within one pair of quotes
QUOTED = Lazy(r"\"([^\"\n]{20,400})\"|\u201c([^\u201d\n]{20,400})\u201d|`([^`\n]{20,400})`|(?<![A-Za-z])'([^'\n]{20,400})'(?![A-Za-z])", python=True)  # lookarounds: re only
ANSI = Lazy(r"\x1b\[[0-9;?]*[A-Za-z]")
# `SomeError: message`, possibly after a log prefix, pytest's `E   ` or a dotted module path (the
# character before the name is consumed, not looked behind: RE2 has no lookbehind)
HEADER = Lazy(
    rf"(?:^|[{PY_SPACE}:\[\]|>(])(?P<exc>(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*(?:Error|Exception))"
    r"(?:: ?(?P<msg>.*))?$", numbered=True,  # (the paste page runs .pattern, its groups by name)
)
FRAME = Lazy(rf'^[{PY_SPACE}]*File "(?P<path>[^"]+)", line (?P<line>[0-9]+), in (?P<func>[^{PY_SPACE}]+)')
# How our exceptions name their entry: the note `[RA105] title - see https://.../errors/RA105/`, a
# link to the entry's page (values in its query string).
NOTE = Lazy(rf"\[(?P<code>[A-Z]{{2,4}}[0-9]{{3}})\] .*? - see [^{PY_SPACE}]+")
DOCS_LINK = Lazy(rf"/errors/(?P<code>[A-Z]{{2,4}}[0-9]{{3}})/(?:\?(?P<query>[^{PY_SPACE}\"'<>)\]`]*))?")
LOOKUP_MARKS = (r"\[[A-Z]{2,4}[0-9]{3}\] ", r"/errors/[A-Z]{2,4}[0-9]{3}/")  # what finds those lines
# A release named in the text: `jax==0.4.31`, `jax 0.4.31`, `jax-0.4.31-py3`, `jax/0.4.31`, `jax version 0.4.31`.
RELEASE_SEEN = Lazy(r"(?<![A-Za-z0-9_.-])(?P<dist>[A-Za-z][A-Za-z0-9_.-]*?)(?:==|-| |/|@| version )v?"
                    r"(?P<version>[0-9]+(?:\.[0-9]+)+)(?![A-Za-z0-9_])", python=True)  # lookarounds: only ties read it


# A log record's prefix (errkit/explain/records.py): its stamp, the first words of its shape (each
# run of digits one 0) holding a digit and no letter but T, Z or a first one, each with the spaces
# after it; a record with longer numbers than another's may have a prefix up to RECORD_SLACK longer.
RECORD_STAMP = r"(?:[A-Za-z]?[^ \tA-SU-Ya-z]*0[^ \tA-SU-Ya-z]*[ \t]+)*"
RECORD_SLACK = 32
# Where str.splitlines() cuts a line, besides "\r\n" (a JSON string's lines: the browser has no splitlines)
LINE_BREAKS = ("\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def plan(wordings) -> tuple[list[str], list[list[int]], list[int], list[int]]:
    """(keys, the wordings of each key, wordings found by their raise site, wordings tried on every
    line): how the matcher looks for the wordings (in explain's index cache and the site's index:
    the browser's matcher reads it there, errkit/generate/assets.py)."""
    keyed: dict[str, list[int]] = {}
    located: list[int] = []
    always: list[int] = []
    for i, wording in enumerate(wordings):
        key = wording.get("key")
        if key:
            keyed.setdefault(key, []).append(i)
        elif wording["location"]:
            located.append(i)  # no fixed text to find it by: tried for exceptions raised there
        elif wording["template"]:
            always.append(i)  # fixed text too short to look for: tried on every line read
    keys = sorted(keyed)
    return keys, [keyed[k] for k in keys], located, always


def at_line_end(source: str) -> str:
    """A wording's regex anchored at the end of a line (for searching a log line)."""
    return f"(?:{source}){LINE_END}"


# -- what the browser's matcher is given (errkit generate writes them into match.js) ------------------
JS_CONSTANTS = ("VERSION", "MAX_LINE", "PASTE_SIZE", "TAIL", "SHORTLIST", "POSTINGS_BUDGET", "APPROXIMATE_MAX", "QUOTE_WORDS", "QUOTE_COVERAGE", "REREAD_LINES", "TAG_REACH",
                "TYPO_SIMILARITY", "TYPO_WORDS", "TYPO_LENGTH", "TIE_CONTEXT", "READ_WINDOW", "FRAME_REACH", "TRACEBACK_LINES", "BLOCK_GAP", "TRACEBACK_NOTES", "CHAINED_NOTE", "MARKERS", "FRAME_MARK",
                "NEXT_TRACEBACK", "PYTORCH_MARKS", "JAX_MARKS", "TRITON_MARKS", "FUSION_MARKS", "PALLAS_MARKS", "CONTEXT_MARKS", "UNCONFIRMED", "RECORD_SLACK",
                "LINE_BREAKS", "NORMALISED_CHARS", "HTML_ENTITIES")
JS_PATTERNS = ("SPACE", "LINE_END", "WORD", "QUOTED", "ANSI", "HEADER", "FRAME", "NOTE", "DOCS_LINK", "LOOKUP_MARKS",
               "RELEASE_SEEN", "RECORD_STAMP")


def pattern_source(value):
    """A pattern's Python source: a Lazy's pattern, a string as it is, a tuple as a list of them."""
    if isinstance(value, tuple):
        return [pattern_source(v) for v in value]
    return value.pattern if isinstance(value, Lazy) else value
