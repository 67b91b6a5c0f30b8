"""An approximate search measured against the exact search it approximates, at the same depth:
``recall_loss@k``, the share of the exact top k it misses (goldenset.retrieval.retrievers.ann
against dense). It reads two rankings and no judgment."""

from __future__ import annotations

import numpy as np

from goldenset.evaluation.measures import MEASURES, Measure


def recall_loss(approximate: np.ndarray, exact: np.ndarray, k: int) -> float:
    """1 - |approximate top k ∩ exact top k| / k, averaged over queries: rankings of item
    indices best first, -1 padded. k is capped by the items the exact search returned (a
    corpus smaller than k); no query, or no item, loses nothing."""
    cut = min(k, exact.shape[1])
    if cut == 0 or exact.shape[0] == 0:
        return 0.0
    shared = [
        np.intersect1d(a[a >= 0], e[e >= 0]).size
        for a, e in zip(approximate[:, :cut], exact[:, :cut], strict=True)
    ]
    return float(1.0 - np.mean(shared) / cut)


MEASURES.register(
    "recall_loss",
    Measure(
        name="recall_loss",
        parameter="k",
        views=("exact",),
        definition="share of the exact search's top k an approximate search misses (ann "
        "against dense), a mean over questions",
        per_question=False,
        compute=recall_loss,
    ),
)
