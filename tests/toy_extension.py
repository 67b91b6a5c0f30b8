"""A toy retriever and a toy metric, each added in one place: one registry entry.

The toy retriever is what a module of goldenset.scoring.retrievers holds (its params section, how
to build it, its entry); the toy metric is one Measure. Imported at interpreter start (a
`sitecustomize` module that tests/test_extension_points.py puts on the path of the pipeline's
processes), so the score stage and `goldenset compare`, run as their real commands, see both.
"""

from __future__ import annotations

import numpy as np

from goldenset.scoring.measures import MEASURES, RANKING_VIEWS, Measure
from goldenset.scoring.retrievers import REGISTRY, RetrieverEntry, RetrieverSection


class ToyParams(RetrieverSection):
    k1: float = 1.2


def build_toy(settings: ToyParams, corpus, device):
    """bm25 with its own k1 and no length normalisation: a retriever the project does not have."""
    from goldenset.scoring.retrievers.lexical import BM25

    return BM25(corpus, settings.k1, 0.0)


def relevant_found(judged, k: int) -> np.ndarray:
    """Relevant items in the top k, counted."""
    return (judged.gains[:, :k] > 0).sum(axis=1).astype(np.float64)


REGISTRY["toy"] = RetrieverEntry(ToyParams, build_toy)
MEASURES["found"] = Measure(
    "found", "k", RANKING_VIEWS, "relevant items in the top k, counted", compute=relevant_found
)
