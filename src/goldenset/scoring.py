"""One retriever on one query set: rankings, per-query metrics and the rows of results.parquet."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.metrics import evaluate, judged_gains, mean_metrics, relevant_counts
from goldenset.retrieval import ScoreSource, TopK, top_k

log = logging.getLogger("goldenset")


@dataclass(frozen=True)
class QuerySet:
    name: str  # the first key of a metric: synthetic or real
    qids: list[str]
    qrels: csr_array  # (queries x items): items are chunks, or documents when groups is set
    item_ids: list[str]
    groups: np.ndarray | None = None  # chunk rows where each document starts: rank documents


def score(
    query_set: QuerySet, retriever: str, source: ScoreSource, ks: list[int], depth: int
) -> tuple[dict[str, float], pd.DataFrame]:
    """Mean metrics over the judged queries, and one result row per query."""
    found = top_k(source, max(depth, max(ks)), groups=query_set.groups)
    return score_ranked(query_set, retriever, found, ks)


def score_ranked(
    query_set: QuerySet, retriever: str, found: TopK, ks: list[int]
) -> tuple[dict[str, float], pd.DataFrame]:
    """Like :func:`score`, for lists already ranked (padded with -1 where shorter)."""
    n_items = len(query_set.item_ids)
    if max(ks) > n_items:
        log.warning(
            "warning: %s has %d items, fewer than k=%d: recall@%d counts every item",
            query_set.name,
            n_items,
            max(ks),
            max(ks),
        )
    metrics = mean_metrics(evaluate(found.indices, query_set.qrels, ks))
    metrics["n_queries"] = float((relevant_counts(query_set.qrels) > 0).sum())
    return metrics, _result_rows(query_set, retriever, found, max(ks))


def _result_rows(query_set: QuerySet, retriever: str, found, shown: int) -> pd.DataFrame:
    gains = judged_gains(found.indices, query_set.qrels)
    relevant = gains > 0
    first = np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, -1)
    item_ids = np.asarray(query_set.item_ids, dtype=object)
    top = found.indices[:, :shown]
    return pd.DataFrame(
        {
            "query_set": query_set.name,
            "retriever": retriever,
            "qid": query_set.qids,
            "first_relevant_rank": pd.array(np.where(first > 0, first, None), dtype="Int64"),
            "top_ids": [item_ids[row[row >= 0]].tolist() for row in top],
            "top_scores": [
                scores[: (row >= 0).sum()].tolist()
                for row, scores in zip(top, found.scores, strict=True)
            ],
        }
    )


def recall_plot_rows(
    metrics: dict[str, dict[str, dict[str, float]]], ks: list[int], columns: list[str]
) -> list[dict]:
    """Rows of plots/recall_at_k.json: one per k, with a `<set>_<retriever>` value per column.

    Every column is always there (null when that set or retriever was not scored), since the
    plot definition in dvc.yaml names them.
    """
    recall = {
        f"{set_name}_{retriever}": values
        for set_name, retrievers in metrics.items()
        for retriever, values in retrievers.items()
    }
    return [
        {"k": k, **{name: recall.get(name, {}).get(f"recall@{k}") for name in columns}} for k in ks
    ]
