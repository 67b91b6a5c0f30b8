"""A ranking metric: found@k, the relevant items in the top k, counted (no closed-form chance
level: goldenset estimates it over random rankings)."""

from __future__ import annotations

import numpy as np
from goldenset.metrics.measures import MEASURES, RANKING_VIEWS, Measure


def relevant_found(labelled, k: int) -> np.ndarray:
    return (labelled.gains[:, :k] > 0).sum(axis=1).astype(np.float64)


MEASURES.register(
    "found",
    Measure(
        name="found",
        parameter="k",
        views=RANKING_VIEWS,
        definition="relevant items in the top k, counted",
        compute=relevant_found,
    ),
)
