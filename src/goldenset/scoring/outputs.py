"""What the score stage writes for `dvc metrics`: headline means, the long tail, intervals.

`dvc metrics diff` stays readable when metrics/scores.json holds only the headline metrics
(and n_queries); every other k and metric goes to metrics/detail.json, and the bootstrap
interval of each headline mean to metrics/intervals.json.
"""

from __future__ import annotations

import pandas as pd

from goldenset.core.params import IntervalParams
from goldenset.core.stats import bootstrap_interval

Nested = dict[str, dict[str, dict[str, float]]]


def split_metrics(metrics: Nested, headline: list[str]) -> tuple[Nested, Nested]:
    """(headline metrics and n_queries, every other metric), both nested set -> retriever."""
    kept = [*headline, "n_queries"]
    head: Nested = {}
    tail: Nested = {}
    for set_name, retrievers in metrics.items():
        for retriever, values in retrievers.items():
            head.setdefault(set_name, {})[retriever] = {
                name: values[name] for name in kept if name in values
            }
            tail.setdefault(set_name, {})[retriever] = {
                name: value for name, value in values.items() if name not in kept
            }
    return head, tail


def headline_intervals(
    results: pd.DataFrame, headline: list[str], params: IntervalParams
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """Bootstrap interval of each headline mean, from the per-question values in results.

    Questions without a relevant item (NaN) are left out, as they are from the means.
    """
    intervals: dict = {}
    for (set_name, retriever), rows in results.groupby(["query_set", "retriever"], sort=False):
        for name in headline:
            values = rows[name].dropna().to_numpy()
            if values.size == 0:  # a metric this set does not have (doc_ on real queries)
                continue
            interval = bootstrap_interval(values, params.resamples, params.confidence, params.seed)
            intervals.setdefault(set_name, {}).setdefault(retriever, {})[name] = {
                "low": interval.low,
                "high": interval.high,
            }
    return intervals
