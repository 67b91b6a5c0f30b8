"""Near-duplicate questions: the cosine of their content-word sets
(goldenset.core.echo.content_words).

Lexical on purpose: the generate stage stays free of the embedding model, and two questions that
share nearly all their content words ask the same thing of a retriever. Paraphrases with other
words are what the audit's embedding cosine reports.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from goldenset.core.echo import content_words

BLOCK = 1024  # questions compared at a time: memory stays O(BLOCK x n), not O(n^2)


def word_vectors(texts: Sequence[str]):
    """Unit-length binary content-word vectors (sparse rows); None when no question has a word."""
    vectorizer = CountVectorizer(analyzer=lambda text: sorted(content_words(text)), binary=True)
    try:
        return normalize(vectorizer.fit_transform(texts).astype(np.float64))
    except ValueError:  # empty vocabulary
        return None


def near_duplicates(texts: Sequence[str], threshold: float) -> dict[int, tuple[int, float]]:
    """Questions to drop: index -> (index of the earlier kept question it repeats, cosine).

    Greedy in order, so the first of a group stays and the golden set does not depend on how
    the duplicates are compared.
    """
    vectors = word_vectors(texts) if len(texts) > 1 else None
    if vectors is None:
        return {}
    dropped: dict[int, tuple[int, float]] = {}
    kept: list[int] = []
    for start in range(0, len(texts), BLOCK):
        end = min(start + BLOCK, len(texts))
        cosines = (vectors[start:end] @ vectors[:end].T).toarray()
        for i in range(start, end):
            if kept:
                row = cosines[i - start, kept]
                best = int(np.argmax(row))
                if row[best] >= threshold:
                    dropped[i] = (kept[best], float(row[best]))
                    continue
            kept.append(i)
    return dropped


def repeated_questions(
    texts: Sequence[str], qids: Sequence[str], threshold: float | None
) -> dict[int, tuple[str, str]]:
    """The questions to drop, index -> the reject reason (code, detail) naming the kept question
    each one repeats; none when threshold (generate.duplicate_cosine) is None."""
    reasons: dict[int, tuple[str, str]] = {}
    if threshold is None:
        return reasons
    for i, (j, cosine) in near_duplicates(texts, threshold).items():
        detail = f"content-word cosine {cosine:.2f} with {qids[j]}: {texts[j]!r}"
        reasons[i] = ("near_duplicate", detail)
    return reasons
