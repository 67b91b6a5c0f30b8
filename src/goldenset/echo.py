"""How much a question echoes its source: the one measure used for generated and real queries.

Content words are the lowercased `[a-z0-9]+` tokens longer than 2 characters that are not in
scikit-learn's English stop words. A question's overlap with a text is the share of its content
words that also occur in that text. A golden set whose questions reuse their source's words
flatters lexical retrievers, and can rank dense and lexical retrieval the opposite way to real
users' queries; real SciFact claims have a median overlap of 0.50 with their documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

_TOKEN = re.compile(r"[a-z0-9]+")
MIN_WORD_CHARS = 3


def content_words(text: str) -> set[str]:
    """The distinct content words of a text."""
    return {
        token
        for token in _TOKEN.findall(text.lower())
        if len(token) >= MIN_WORD_CHARS and token not in ENGLISH_STOP_WORDS
    }


def overlap(question: str, source: str | Iterable[str]) -> float:
    """Share of the question's content words found in the source (text, or its content words).

    A question without content words overlaps nothing: 0.0.
    """
    asked = content_words(question)
    if not asked:
        return 0.0
    known = content_words(source) if isinstance(source, str) else set(source)
    return len(asked & known) / len(asked)
