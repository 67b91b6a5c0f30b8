"""Near-duplicate questions: the cosine of their content-word sets (goldenset.echo.content_words).

Lexical on purpose: the generate stage stays free of the embedding model, and two questions that
share nearly all their content words ask the same thing of a retriever. Paraphrases with other
words are what the audit's embedding cosine reports.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from goldenset.echo import content_words


def word_cosines(questions: Sequence[str]) -> np.ndarray:
    """Pairwise cosine of the questions' binary content-word vectors (dense, n x n)."""
    if not questions:
        return np.zeros((0, 0))
    vectorizer = CountVectorizer(analyzer=lambda text: sorted(content_words(text)), binary=True)
    try:
        matrix = normalize(vectorizer.fit_transform(questions).astype(np.float64))
    except ValueError:  # no question has a content word
        return np.zeros((len(questions), len(questions)))
    return (matrix @ matrix.T).toarray()


def near_duplicates(questions: Sequence[str], threshold: float) -> dict[int, tuple[int, float]]:
    """Questions to drop: index -> (index of the earlier kept question it repeats, cosine).

    Greedy in order, so the first of a group stays and the golden set does not depend on how
    the duplicates are compared.
    """
    cosines = word_cosines(questions)
    dropped: dict[int, tuple[int, float]] = {}
    kept: list[int] = []
    for i in range(len(questions)):
        if kept:
            best = kept[int(np.argmax(cosines[i, kept]))]
            if cosines[i, best] >= threshold:
                dropped[i] = (best, float(cosines[i, best]))
                continue
        kept.append(i)
    return dropped
