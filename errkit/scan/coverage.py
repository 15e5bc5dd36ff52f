"""Coverage: which catalogue entry covers a site, by the explain matcher index."""

from __future__ import annotations

import re

from errkit.core import UsageError, template, values
from errkit.explain.matching.approximate import shortlist
from errkit.explain.matching.around import match_location
from errkit.explain.matching.keys import candidates
from errkit.explain.matching.line import match_line
from errkit.scan.messages import parse_template
from errkit.scan.sites import Site


def render(site: Site, type_of: dict[str, str], seed: int) -> str | None:
    """The site's message with a sample value of the given type for each field expression; one line."""
    value_of = {name: values.sample(type_, seed + i) for i, (name, type_) in enumerate(type_of.items())}
    try:
        text = parse_template(site.template).render(lambda f: value_of[f.name])
    except (ValueError, TypeError, KeyError):
        return None  # a spec the sample value cannot take
    return " ".join(text.split("\n")).strip()


def renderings(site: Site) -> list[str]:
    """The site's message rendered with sample values of its inferred param types."""
    type_of = {source: site.params[param] for source, param in site.param_of.items()}
    return [text for text in (render(site, type_of, seed) for seed in (0, 1)) if text is not None]


class Coverage:
    """Which catalogue entry covers a site, by the explain matcher index."""

    def __init__(self, index) -> None:
        self.index = index
        self._placed: dict[str, bool] = {}  # file -> whether a wording recognised by its raise site is there
        self._files: list[str] | None = None  # the files those wordings name
        self._rendered: dict[int, str | None] = {}  # wording -> its sample rendering (_sample_rendering)
        self._every: str | None = None  # every wording's, joined (_every_rendering)

    def covered_by(self, site: Site) -> str | None:
        if not site.template:
            found = match_location(self.index, site.abspath, site.bare_function, site.line)
            return found.code if found else ("generated" if site.generated else None)
        texts = renderings(site)
        located = self.located_in(site.abspath)
        for text in texts:
            code = self.code_for(site, text, located)
            if code is not None:
                return code
        for text in self.typed_renderings(site, texts):  # only when the guessed types found nothing
            code = self.code_for(site, text, located)
            if code is not None:
                return code
        code = self.printable(site, texts) or (self.placed_at(site) if located and not _fixed_words(site) else None)
        return code or ("generated" if site.generated else None)

    def printable(self, site: Site, texts: list[str]) -> str | None:
        """The code of a wording the site prints for some values of its fields: one whose rendering
        the site's template reads with each field as any text. A field may be a name the caller
        chooses (`{prefix}{suffix}={minor}`, which jax's BlockSizes calls with block_k, block_q and
        _dkv): no sample value guesses it, but the fixed text around it must all be there, in order.
        Asked only of the wordings sharing a prefilter key with a rendering or rare words with the
        template (the approximate pass's shortlist), and only for a template with words of its own."""
        if not _fixed_words(site) or not texts:
            return None
        tpl = parse_template(site.template)
        pieces = tpl.pieces
        every = self._every_rendering()
        if not all(piece in every for piece in pieces):
            return None  # a piece no wording's rendering holds: none reads (most sites of a package)
        asked = dict.fromkeys([*candidates(self.index, texts[0]), *shortlist(self.index, " ".join(tpl.literals))])
        rendered = [(i, text) for i in asked if (text := self._sample_rendering(i)) is not None]
        return next((self.index.wordings[i]["code"] for i, text in rendered if _reads(pieces, text)), None)

    def _every_rendering(self) -> str:
        """Every wording's sample rendering, joined by NUL: a piece of a site's text that is in none
        of them rules printable out without the shortlist (8 ms once for this catalogue's 454
        wordings; 4,446 of jax's 4,614 sites asking are answered by it)."""
        if self._every is None:
            self._every = "\0".join(filter(None, map(self._sample_rendering, range(len(self.index.wordings)))))
        return self._every

    def _sample_rendering(self, i: int) -> str | None:
        """Wording i rendered with a sample value of each capture's type; None when it has no field
        or a sample does not render. Kept: a jax scan asks it of the same wordings for 5,000 sites."""
        if i in self._rendered:
            return self._rendered[i]
        wording = self.index.wordings[i]
        try:
            tpl_w = template.parse(wording["template"])
            types = dict(zip((f.name for f in tpl_w.fields), (c[2] for c in wording["captures"])))
            rendered = tpl_w.render(lambda f: values.sample(types.get(f.name, "int"), 0)) if tpl_w.fields else None
        except (ValueError, TypeError, KeyError):  # (a TemplateError is a ValueError)
            rendered = None
        self._rendered[i] = rendered
        return rendered

    def placed_at(self, site: Site) -> str | None:
        """The code of a wording the catalogue places at this very raise site (file and function,
        same exception) for a message with no fixed text of its own (an assert printing a tuple of
        shapes): nothing in a sample rendering can tell it, the catalogue's location does."""
        path = site.abspath.replace("\\", "/")
        for i in self.index.located:
            wording = self.index.wordings[i]
            place, _, where = (wording["location"] or "").partition(" in ")
            file = place.partition(":")[0]
            if file and path.endswith(file) and where == site.bare_function and wording["exception"] == site.base:
                return wording["code"]
        return None

    def code_for(self, site: Site, text: str, located: bool = True) -> str | None:
        """The code of the wording that reads `text` whole; `located`: whether the site's file has
        wordings recognised by their raise site (see located_in)."""
        found = match_line(self.index, text)
        if found is not None and re.fullmatch(found.wording["regex"], text):
            return found.code
        # a message with no fixed text is recognised by its raise site
        found = match_location(self.index, site.abspath, site.bare_function, site.line, site.base, text) if located else None
        return found.code if found is not None else None

    def located_in(self, path: str) -> bool:
        """Can a wording recognised by its raise site be placed in this file at all? Asked once
        per file: `match_location` is then not asked for every rendering of every site.

        The test is match_location's own first one (the location's file is a suffix of the path);
        an index whose located wordings read otherwise is asked every time.
        """
        placed = self._placed.get(path)
        if placed is None:
            if self._files is None:
                try:
                    self._files = [self.index.wordings[i]["location"].partition(" in ")[0].partition(":")[0]
                                   for i in self.index.located]
                except (AttributeError, KeyError, TypeError, IndexError):
                    self._files = [""]  # every path ends with ""
            frame = path.replace("\\", "/")
            placed = self._placed[path] = any(frame.endswith(f) for f in self._files)
        return placed

    def typed_renderings(self, site: Site, texts: list[str]) -> list[str]:
        """Renderings with the value types of each candidate wording, field by field.

        A guessed type ("batch_axis" reads like an int) must not hide a wording that prints a
        string there: the candidates come from the anchor words, their captures give the types.
        """
        fields = parse_template(site.template).fields
        out = []
        for i in dict.fromkeys(i for text in texts[:1] for i in candidates(self.index, text)):
            captures = self.index.wordings[i]["captures"]
            if len(captures) != len(fields):
                continue
            type_of: dict[str, str] = {}
            for f, capture in zip(fields, captures):
                type_of.setdefault(f.name, capture[2])
            text = render(site, type_of, 0)
            if text is not None:
                out.append(text)
        return out


def _fixed_words(site: Site) -> bool:
    """Whether the site's template has fixed text of its own: a word of 3+ letters."""
    return any(re.search(r"[A-Za-z]{3}", part) for part in parse_template(site.template).literals)


def load_index(path: str | None):
    from errkit.explain.matching.index import INDEX_FILE, Index

    try:
        return Index.load(path or INDEX_FILE)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(f"cannot read the matcher index {path or INDEX_FILE}: {err} (run `errkit generate`)") from None


def _reads(pieces: tuple[str, ...], text: str) -> bool:
    """Whether `text` is a template's pieces (Template.pieces) in order with one or more characters
    of any kind between each two (each field's value): the first piece starts it, the last ends
    it, and each piece between is found leftmost (a later place only leaves less room for the rest)."""
    if len(pieces) == 1:
        return text == pieces[0]
    first, *middle, last = pieces
    if not text.startswith(first):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, at + 1, end - 1)
        if found < 0:
            return False
        at = found + len(piece)
    return at < end and text.endswith(last)
