"""Headline metrics, the long tail and intervals: what the score stage writes for dvc."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.params import IntervalParams
from goldenset.core.stats import bootstrap_interval
from goldenset.params import parse_params
from goldenset.scoring.outputs import headline_intervals, split_metrics


def test_split_keeps_headline_and_n_queries_apart_from_the_rest():
    values = {"ndcg@10": 0.5, "recall@10": 0.7, "recall@1": 0.2, "mrr": 0.4, "n_queries": 9.0}
    head, tail = split_metrics({"real": {"dense": values}}, ["ndcg@10", "mrr"])
    assert head == {"real": {"dense": {"ndcg@10": 0.5, "mrr": 0.4, "n_queries": 9.0}}}
    assert tail == {"real": {"dense": {"recall@10": 0.7, "recall@1": 0.2}}}


def test_intervals_come_from_the_per_question_values_without_unjudged_ones():
    mrr = np.array([1.0, 0.5, np.nan, 0.25, 1.0, 0.0])
    results = pd.DataFrame(
        {"query_set": "real", "retriever": "dense", "qid": list("abcdef"), "mrr": mrr}
    )
    params = IntervalParams(resamples=1000, confidence=0.9, seed=5)
    bounds = headline_intervals(results, ["mrr"], params)["real"]["dense"]["mrr"]
    expected = bootstrap_interval(mrr[~np.isnan(mrr)], 1000, 0.9, 5)
    assert bounds == {"low": expected.low, "high": expected.high}
    assert bounds["low"] < np.nanmean(mrr) < bounds["high"]


def test_intervals_by_hand_per_query_set_and_retriever():
    # two judged values 0 and 1: a resample's mean is 0, 0.5 or 1 with probability 1/4, 1/2,
    # 1/4, so of 1000 resamples about 250 are 0 and 250 are 1: the 5th and 95th percentiles are
    # 0 and 1. One judged value, or equal ones, give that value at both ends.
    rows = [
        ("real", "dense", [0.0, 1.0, np.nan]),
        ("real", "bm25", [0.25, 0.25, np.nan]),
        ("synthetic", "dense", [np.nan, 0.5]),
    ]
    results = pd.DataFrame(
        [
            {"query_set": name, "retriever": retriever, "qid": f"{name}-{i}", "recall@10": value}
            for name, retriever, values in rows
            for i, value in enumerate(values)
        ]
    )
    params = IntervalParams(resamples=1000, confidence=0.9, seed=5)
    assert headline_intervals(results, ["recall@10"], params) == {
        "real": {
            "dense": {"recall@10": {"low": 0.0, "high": 1.0}},
            "bm25": {"recall@10": {"low": 0.25, "high": 0.25}},
        },
        "synthetic": {"dense": {"recall@10": {"low": 0.5, "high": 0.5}}},
    }


@pytest.mark.parametrize(
    ("score", "message"),
    [
        ({"headline": ["ndcg@20"]}, "score.headline: ndcg@20 needs k=20 in score.ks"),
        ({"headline": ["map"]}, "unknown metric 'map'"),
        ({"intervals": {"resamples": 100}}, "score.intervals.resamples"),
    ],
)
def test_bad_headline_or_interval_params_are_named(score, message):
    with pytest.raises(GoldensetError, match=message):
        parse_params({"score": score})
