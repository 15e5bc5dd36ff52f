"""Titles as they read inside a sentence, for every side that writes one into prose."""


_ARTICLES = ("This", "The", "An", "A", "Our")


def in_sentence(title: str) -> str:
    """A title as it reads inside a sentence or heading: a leading capitalised "This", "The", "A",
    "An" or "Our" lowercased ("What this project's ranker kernel requires"); else as it is. (No
    regex: explain's text rendering imports this, and a paste's start imports no `re`.)"""
    for word in _ARTICLES:
        if title.startswith(word) and title[len(word):len(word) + 1].isspace():
            return word.lower() + title[len(word):]
    return title
