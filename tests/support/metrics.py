"""Means of goldenset.evaluation.ranking.evaluate()'s per-query values, for the tests and the
benchmarks; the score stage takes its own means, over every query of a set."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from goldenset.evaluation.ranking import N_RELEVANT_KEY, QUERY_KEY


def mean_metrics(per_query: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Mean of each metric over queries (NaN when there are none); skips the query descriptors."""
    means = {}
    for name, values in per_query.items():
        if name in (QUERY_KEY, N_RELEVANT_KEY):
            continue
        means[name] = float(np.mean(values)) if len(values) else float("nan")
    return means
