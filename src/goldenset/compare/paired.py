"""Paired comparison of two runs, question by question: the rows of per-question results
both runs scored, and per query set, retriever and metric the mean difference, its paired
bootstrap interval and a paired randomization test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from goldenset.compare.gate import Row, apply_gate
from goldenset.compare.params import CompareParams
from goldenset.core.errors import GoldensetError
from goldenset.core.paths import RESULT_KEYS
from goldenset.core.stats import bootstrap_interval, randomization_test
from goldenset.evaluation.measures import is_per_question_metric


class DifferentQuestions(GoldensetError):
    """The two runs were scored on different questions: their means are not comparable."""


def metric_columns(results: pd.DataFrame) -> list[str]:
    """The per-question metric columns of results.parquet (evaluation.measures.MEASURES)."""
    return [name for name in results.columns if is_per_question_metric(str(name))]


def shared_questions(a: pd.DataFrame, b: pd.DataFrame, labels: tuple[str, str]) -> list[str]:
    """Complaints, one per query set, whose questions differ between the runs (empty: same)."""
    problems = []
    for set_name in sorted(set(a["query_set"]) | set(b["query_set"])):
        qids_a = set(a.loc[a["query_set"] == set_name, "qid"])
        qids_b = set(b.loc[b["query_set"] == set_name, "qid"])
        if qids_a != qids_b:
            problems.append(
                f"{set_name}: {len(qids_a - qids_b)} only in {labels[0]}, "
                f"{len(qids_b - qids_a)} only in {labels[1]}, {len(qids_a & qids_b)} shared"
            )
    return problems


def between_retrievers(
    results: pd.DataFrame, baseline: str, candidate: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two retrievers of one run as two runs to pair: the baseline's rows, named as the
    candidate's so that each question pairs with itself, and the candidate's; on the query sets
    both scored (a run file may hold one set only)."""
    scored = sorted(set(results["retriever"]))
    for name in dict.fromkeys([baseline, candidate]):
        if name not in scored:
            raise GoldensetError(f"--retrievers: {name!r} has no results; the run has {scored}")
    if baseline == candidate:
        raise GoldensetError(f"--retrievers: {baseline!r} twice; name two retrievers")
    a = results[results["retriever"] == baseline]
    b = results[results["retriever"] == candidate]
    both = set(a["query_set"]) & set(b["query_set"])
    if not both:
        raise GoldensetError(f"--retrievers: {baseline} and {candidate} share no query set")
    a = a[a["query_set"].isin(both)].assign(retriever=candidate)
    return a.reset_index(drop=True), b[b["query_set"].isin(both)].reset_index(drop=True)


def gate_between_retrievers(gate: list[str], baseline: str, candidate: str) -> list[str]:
    """compare.gate read for two retrievers of one run: the candidate must not lose what the
    gate protects of the baseline (`real.dense.ndcg@10` gates the candidate's real ndcg@10),
    nor of itself; what it protects of other retrievers does not apply."""
    gated = []
    for name in gate:
        query_set, retriever, metric = name.split(".", 2)
        if retriever in (baseline, candidate):
            gated.append(f"{query_set}.{candidate}.{metric}")
    return list(dict.fromkeys(gated))


def pair(
    a: pd.DataFrame, b: pd.DataFrame, labels: tuple[str, str], intersect: bool = False
) -> pd.DataFrame:
    """One row per (query_set, retriever, qid) scored in both runs, columns suffixed _a and _b.

    Different question sets are refused unless ``intersect``: then only shared ones are kept.
    """
    problems = shared_questions(a, b, labels)
    if problems and not intersect:
        raise DifferentQuestions(
            "the two runs were scored on different questions ("
            + "; ".join(problems)
            + "); compare runs of the same golden set and queries, or pass --intersect "
            "to compare the shared questions only"
        )
    metrics = [name for name in metric_columns(a) if name in set(metric_columns(b))]
    if not metrics:
        raise GoldensetError(
            f"no per-question metric is in the results of both {labels[0]} and {labels[1]}; "
            "results written before per-question metrics existed need `dvc repro` there"
        )
    return a.merge(b, on=RESULT_KEYS, suffixes=("_a", "_b"), validate="one_to_one")


def compare(paired: pd.DataFrame, metrics: list[str], settings: CompareParams) -> list[Row]:
    """A row per query set, retriever and metric, in the order they first appear; the gated
    ones (``settings.gate``) judged together, Holm-corrected, the others shown uncorrected."""
    rows = []
    for (set_name, retriever), group in paired.groupby(["query_set", "retriever"], sort=False):
        for metric in metrics:
            if f"{metric}_a" not in paired.columns:  # gated, but not scored: apply_gate() says so
                continue
            values = group[[f"{metric}_a", f"{metric}_b"]].dropna().to_numpy(dtype=np.float64)
            if not len(values):  # a metric this query set does not have (doc_ on real queries)
                continue
            rows.append(
                _compare_one(set_name, retriever, metric, values[:, 0], values[:, 1], settings)
            )
    return apply_gate(rows, settings)


def _compare_one(
    set_name: str,
    retriever: str,
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    settings: CompareParams,
) -> Row:
    differences = b - a
    interval = bootstrap_interval(
        differences, settings.resamples, settings.confidence, settings.seed
    )
    test = randomization_test(a, b, settings.permutations, settings.seed)
    return Row(
        query_set=set_name,
        retriever=retriever,
        metric=metric,
        n=int(a.size),
        mean_a=float(a.mean()) if a.size else float("nan"),
        mean_b=float(b.mean()) if b.size else float("nan"),
        delta=test.statistic,
        low=interval.low,
        high=interval.high,
        p_value=test.p_value,
        exact=test.exact,
        worse=int((differences < 0).sum()),
        better=int((differences > 0).sum()),
    )
