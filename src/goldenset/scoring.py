"""One retriever on one query set: rankings, per-query metrics and the rows of results.parquet."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.metrics import QUERY_KEY, evaluate, judged_gains, mean_metrics, relevant_counts
from goldenset.retrieval import TopK

log = logging.getLogger("goldenset")


@dataclass(frozen=True)
class QuerySet:
    name: str  # the first key of a metric: synthetic, labelled or real
    qids: list[str]
    # (queries x items): items are chunks, text classes of chunks, or documents; columns past
    # item_ids are judged items absent from the corpus, which no retriever returns
    qrels: csr_array
    item_ids: list[str]
    groups: np.ndarray | None = None  # where each item's rows start: an item scores its best row
    rows: np.ndarray | None = None  # chunk rows the retriever scores, in order; None: all chunks


def score_ranked(
    query_set: QuerySet, retriever: str, found: TopK, ks: list[int], headline: list[str]
) -> tuple[dict[str, float], pd.DataFrame]:
    """Mean metrics over the judged queries, and one result row per query, from ranked lists
    (item indices best first, padded with -1 where shorter).

    The rows carry each query's value of the ``headline`` metrics (NaN for a query without any
    relevant item), the very numbers the means average: intervals and comparisons use them.
    """
    n_items = len(query_set.item_ids)
    if max(ks) > n_items:
        log.warning(
            "warning: %s has %d items, fewer than k=%d: recall@%d counts every item",
            query_set.name,
            n_items,
            max(ks),
            max(ks),
        )
    per_query = evaluate(found.indices, query_set.qrels, ks)
    metrics = mean_metrics(per_query)
    metrics["n_queries"] = float((relevant_counts(query_set.qrels) > 0).sum())
    rows = _result_rows(query_set, retriever, found, max(ks))
    for name in headline:
        values = np.full(len(rows), np.nan)
        values[per_query[QUERY_KEY]] = per_query[name]
        rows[name] = values
    return metrics, rows


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


def recall_plot_rows(metrics: dict[str, dict[str, dict[str, float]]], ks: list[int]) -> list[dict]:
    """Rows of plots/recall_at_k.json, one per query set, retriever and k: only what was scored.

    Long rather than one column per retriever, so that the plot template (.dvc/plots) draws any
    query set and retriever without a list of names to keep in step with the params.
    """
    return [
        {"query_set": set_name, "retriever": retriever, "k": k, "recall": values[f"recall@{k}"]}
        for set_name, retrievers in metrics.items()
        for retriever, values in retrievers.items()
        for k in ks
    ]
