"""One retriever on one query set, scored: rankings, per-query metrics, chance levels and the
rows of results.parquet."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from goldenset.core.ranked import TopK
from goldenset.core.stats import mean_present
from goldenset.evaluation.chance import chance_levels, context_chance
from goldenset.evaluation.context import context_view
from goldenset.evaluation.qrels import Qrels
from goldenset.evaluation.ranking import (
    N_RELEVANT_KEY,
    QUERY_KEY,
    evaluate,
    first_relevant_rank,
    judged_gains,
    relevant_counts,
)
from goldenset.evaluation.views import Views, document_view

log = logging.getLogger("goldenset")
# keys of chance_means() that count what a random ranking draws from
N_ITEMS_KEY, N_DOCUMENTS_KEY = "items", "documents"


def score_ranked(
    judged: Qrels,
    retriever: str,
    found: TopK,
    ks: list[int],
    headline: list[str],
    views: Views | None = None,
    chunk_ranked: np.ndarray | None = None,
    chunk_view: bool = True,
) -> tuple[dict[str, float], pd.DataFrame]:
    """Mean metrics over the judged queries, and one result row per query, from a run (item
    indices best first, padded with -1 where shorter): the one evaluator of every retriever.

    The rows carry each query's value of the ``headline`` metrics (NaN for a query without any
    relevant item, or a metric this set does not have), the very numbers the means average:
    intervals and comparisons use them. ``chunk_ranked``: the ranking of chunk items the
    context view reads (default: ``found``, when the set's items are chunks). ``chunk_view``
    False: the items' own metrics are not measured (a store that lists no chunks), nor the rank
    of each query's first relevant item.
    """
    n_items = len(judged.item_ids)
    if max(ks) > n_items and chunk_view:
        log.warning(
            "warning: %s has %d items, fewer than k=%d: recall@%d counts every item",
            judged.name,
            n_items,
            max(ks),
            max(ks),
        )
    n_queries = len(judged.qids)
    per_query = {}
    if chunk_view:
        per_query = _every_query(evaluate(found.indices, judged.qrels, ks), n_queries)
    if views is not None:
        per_query.update(_view_metrics(views, found.indices, chunk_ranked, ks, n_queries))
    metrics = {name: mean_present(values) for name, values in per_query.items()}
    metrics["n_queries"] = float((relevant_counts(judged.qrels) > 0).sum())
    rows = _result_rows(judged, retriever, found, max(ks), chunk_view)
    for name in headline:
        rows[name] = per_query.get(name, np.full(n_queries, np.nan))
    return metrics, rows


def _view_metrics(
    views: Views, indices: np.ndarray, chunk_ranked: np.ndarray | None, ks: list[int], n: int
) -> dict[str, np.ndarray]:
    per_query: dict[str, np.ndarray] = {}
    if views.items is not None and views.doc_qrels is not None:
        chunk_doc = views.context.chunk_doc
        per_query.update(
            _every_query(document_view(indices, views.items, chunk_doc, views.doc_qrels, ks), n)
        )
    ranked = indices if chunk_ranked is None else chunk_ranked
    per_query.update(_measurable(views, context_view(ranked, views.context, views.budgets)))
    return per_query


def _measurable(views: Views, context: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The context metrics a set's judgments define: a set judged per document (no evidence
    spans) has the hit alone."""
    if views.context.evidence is not None:
        return context
    return {name: values for name, values in context.items() if "_hit@" in name}


def _every_query(per_query: dict[str, np.ndarray], n_queries: int) -> dict[str, np.ndarray]:
    """evaluate()'s metrics with one value per query, NaN for those it left out (unjudged)."""
    out = {}
    for name, values in per_query.items():
        if name in (QUERY_KEY, N_RELEVANT_KEY):
            continue
        full = np.full(n_queries, np.nan)
        full[per_query[QUERY_KEY]] = values
        out[name] = full
    return out


def chance_means(
    judged: Qrels, views: Views, ks: list[int], depth: int, rankings: int, seed: int
) -> dict[str, float]:
    """Mean chance level of each metric over the judged queries (goldenset.evaluation.chance),
    with the number of items (and, for the document view, documents) a random ranking draws from.
    ``rankings`` random rankings estimate the context metrics' and those without a closed form
    (0: none)."""
    n_items = len(judged.item_ids)
    levels = chance_levels(judged.qrels, n_items, ks, depth, rankings, seed)
    out = {
        N_ITEMS_KEY: float(n_items),
        **{name: mean_present(values) for name, values in levels.items()},
    }
    if views.doc_qrels is not None:
        n_docs = len(views.context.token_starts)
        levels = chance_levels(views.doc_qrels, n_docs, ks, depth, rankings, seed)
        out[N_DOCUMENTS_KEY] = float(n_docs)
        out.update({f"doc_{name}": mean_present(values) for name, values in levels.items()})
    if rankings:
        levels = _measurable(
            views, context_chance(views.context, views.budgets, depth, rankings, seed)
        )
        out.update({name: mean_present(values) for name, values in levels.items()})
    return out


def _result_rows(
    judged: Qrels, retriever: str, found: TopK, shown: int, chunk_view: bool
) -> pd.DataFrame:
    first = first_relevant_rank(judged_gains(found.indices, judged.qrels))
    if not chunk_view:
        first = np.zeros_like(first)
    item_ids = np.asarray(judged.item_ids, dtype=object)
    top = found.indices[:, :shown]
    return pd.DataFrame(
        {
            "query_set": judged.name,
            "retriever": retriever,
            "qid": judged.qids,
            "first_relevant_rank": pd.array(np.where(first > 0, first, None), dtype="Int64"),
            "top_ids": [item_ids[row[row >= 0]].tolist() for row in top],
            "top_scores": [
                scores[: (row >= 0).sum()].tolist()
                for row, scores in zip(top, found.scores, strict=True)
            ],
        }
    )
