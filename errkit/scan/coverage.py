"""Coverage: which catalogue entry covers a site, by the explain matcher index."""

from __future__ import annotations

import re

from .. import values
from ..errors import UsageError
from .messages import parse_template
from .sites import Site


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

    def covered_by(self, site: Site) -> str | None:
        if not site.template:
            found = self.index.match_location(site.abspath, site.bare_function, site.line)
            return found.code if found else ("generated" if site.generated else None)
        texts = renderings(site)
        for text in texts + self.typed_renderings(site, texts):
            found = self.index.match_line(text)
            if found is not None and re.fullmatch(found.wording["regex"], text):
                return found.code
            # a message with no fixed text is recognised by its raise site
            found = self.index.match_location(site.abspath, site.bare_function, site.line, site.base, text)
            if found is not None:
                return found.code
        return "generated" if site.generated else None

    def typed_renderings(self, site: Site, texts: list[str]) -> list[str]:
        """Renderings with the value types of each candidate wording, field by field.

        A guessed type ("batch_axis" reads like an int) must not hide a wording that prints a
        string there: the candidates come from the anchor words, their captures give the types.
        """
        fields = parse_template(site.template).fields
        out = []
        for i in dict.fromkeys(i for text in texts[:1] for i in self.index.candidates(text)):
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


def load_index(path: str | None):
    from ..match import INDEX_FILE, Index

    try:
        return Index.load(path or INDEX_FILE)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(f"cannot read the matcher index {path or INDEX_FILE}: {err} (run `errkit generate`)") from None
