"""A toy retriever, a toy metric and a toy query set, each added in one place: one entry.

Imported at interpreter start (a `sitecustomize` module that tests/test_extension_points.py puts
on the path of the pipeline's processes), so the score stage and `goldenset compare`, run as
their real commands, see all three. The toy query set reads the real queries' files again, so that
it needs no stage and no dvc.yaml line of its own: a set with files of its own also lists them in
dvc.yaml (tests/test_query_sets.py scores one).
"""

from __future__ import annotations

import numpy as np

from goldenset.core import paths
from goldenset.core.registry import (
    MEASURES,
    RANKING_VIEWS,
    REGISTRY,
    Measure,
    RetrieverEntry,
    RetrieverSection,
)
from goldenset.corpus.querysets import DOCUMENTS, QuerySetEntry, declare


class ToyParams(RetrieverSection):
    k1: float = 1.2


def build_toy(settings: ToyParams, corpus, device):
    """bm25 with its own k1 and no length normalisation: a retriever the project does not have."""
    from goldenset.scoring.retrievers import BM25

    return BM25(corpus, settings.k1, 0.0)


def relevant_found(judged, k: int) -> np.ndarray:
    """Relevant items in the top k, counted."""
    return (judged.gains[:, :k] > 0).sum(axis=1).astype(np.float64)


REGISTRY["toy"] = RetrieverEntry(ToyParams, build_toy)
MEASURES["found"] = Measure(
    "found", "k", RANKING_VIEWS, "relevant items in the top k, counted", compute=relevant_found
)
declare(QuerySetEntry("toy", paths.QUERIES, "text", DOCUMENTS, paths.QRELS, echo_label="toy"))
