"""Titles as they read inside a sentence, for every side that writes one into prose."""

from __future__ import annotations

import re

_LEADING_ARTICLE = re.compile(r"^(This|The|An?|Our)(?=\s)")


def in_sentence(title: str) -> str:
    """A title as it reads inside a sentence or heading: a leading capitalised "This", "The", "A",
    "An" or "Our" lowercased ("What this project's ranker kernel requires"); else as it is."""
    return _LEADING_ARTICLE.sub(lambda m: m.group(1).lower(), title, count=1)
