"""Made-up documents for tests and benchmarks: prose whose every sentence has its own words."""

from __future__ import annotations

import random

_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "be",
    "da",
    "fi",
    "gu",
    "ho",
    "ja",
    "ke",
    "li",
    "mo",
    "nu",
    "pe",
    "qui",
    "ra",
    "se",
    "to",
    "ve",
    "wu",
    "xa",
    "yo",
    "ze",
]


def make_documents(count: int, sentences: int = 6, seed: int = 0) -> list[tuple[str, str]]:
    """(doc_id, text) pairs of made-up prose: every sentence has its own long words, so questions
    built by `question_for` differ from sentence to sentence."""
    rng = random.Random(seed)

    def word(low: int, high: int) -> str:
        return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(low, high)))

    documents = []
    for index in range(count):
        text = " ".join(
            " ".join([word(1, 2).capitalize()] + [word(1, 5) for _ in range(rng.randint(8, 14))])
            + "."
            for _ in range(sentences)
        )
        documents.append((f"doc-{index:04d}", text))
    return documents
