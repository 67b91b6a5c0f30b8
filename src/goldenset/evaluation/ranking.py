"""Retrieval metrics over ranked index arrays, computed like trec_eval, vectorised with numpy.

Representation:
- ``ranked``: int64 array (n_queries, depth) of item indices in rank order; -1 pads runs that
  returned fewer than ``depth`` items.
- ``qrels``: ``scipy.sparse.csr_array`` (n_queries, n_items) of relevance grades. A grade > 0
  means relevant; grades are the (linear) gains of nDCG, as in trec_eval's ``ndcg_cut``.
  Zero, negative and absent grades give no gain.

With integer grades every metric equals trec_eval's (``recall_k``, ``success_k``,
``recip_rank``, ``ndcg_cut_k``, ``P_k``) for runs ordered by :func:`rank_run`; the tests check
this against pytrec_eval. (trec_eval counts a document as relevant when its grade is >= 1, so
fractional grades in (0, 1) are where the two would differ.)

Queries without any relevant item have no defined recall or nDCG: the per-metric functions
return NaN for them (so a mean over them is NaN, never a silently lowered score), and
:func:`evaluate` drops them before computing anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from goldenset.evaluation.measures import Measure, named, ranking_measures

# Keys of evaluate()'s result that describe queries rather than measure them.
QUERY_KEY = "query"
N_RELEVANT_KEY = "n_relevant"


def _canonical(qrels: sparse.csr_array) -> sparse.csr_array:
    """Sorted indices and no duplicates (duplicates summed), without touching the caller's copy."""
    qrels = sparse.csr_array(qrels)
    if not qrels.has_canonical_format:
        qrels = qrels.copy()
        qrels.sum_duplicates()
    return qrels


def _row_of_each_entry(qrels: sparse.csr_array) -> np.ndarray:
    return np.repeat(np.arange(qrels.shape[0], dtype=np.int64), np.diff(qrels.indptr))


def judged_gains(ranked: np.ndarray, qrels: sparse.csr_array) -> np.ndarray:
    """Grade of each ranked item, (n_queries, depth) float64; 0 for padding, unjudged, <= 0."""
    ranked = np.asarray(ranked, dtype=np.int64)
    if ranked.ndim != 2 or ranked.shape[0] != qrels.shape[0]:
        raise ValueError(
            f"ranked has shape {ranked.shape}, expected ({qrels.shape[0]}, depth) like qrels"
        )
    n_queries, n_items = qrels.shape
    if ranked.size and ranked.max() >= n_items:
        raise ValueError(f"ranked holds item index {ranked.max()} but qrels has {n_items} items")
    qrels = _canonical(qrels)
    # Row-major keys of the canonical CSR are already sorted, so one searchsorted finds every
    # ranked (query, item) pair among the judged ones.
    judged_keys = _row_of_each_entry(qrels) * n_items + qrels.indices.astype(np.int64)
    grades = np.maximum(qrels.data.astype(np.float64), 0.0)
    gains = np.zeros(ranked.shape, dtype=np.float64)
    if judged_keys.size == 0:
        return gains
    valid = ranked >= 0
    keys = np.arange(n_queries, dtype=np.int64)[:, None] * n_items + ranked
    position = np.minimum(np.searchsorted(judged_keys, keys), judged_keys.size - 1)
    matched = valid & (judged_keys[position] == keys)
    gains[matched] = grades[position[matched]]
    return gains


def relevant_counts(qrels: sparse.csr_array) -> np.ndarray:
    """Number of items with grade > 0 per query, int64."""
    qrels = _canonical(qrels)
    rows = _row_of_each_entry(qrels)[qrels.data > 0]
    return np.bincount(rows, minlength=qrels.shape[0]).astype(np.int64)


def ideal_gains(qrels: sparse.csr_array, k: int) -> np.ndarray:
    """The k best grades of each query, descending, zero padded: (n_queries, k) float64."""
    qrels = _canonical(qrels)
    positive = qrels.data > 0
    rows = _row_of_each_entry(qrels)[positive]
    grades = qrels.data[positive].astype(np.float64)
    order = np.lexsort((-grades, rows))
    rows, grades = rows[order], grades[order]
    first_of_row = np.searchsorted(rows, np.arange(qrels.shape[0]))
    position = np.arange(rows.size) - first_of_row[rows]
    keep = position < k
    ideal = np.zeros((qrels.shape[0], k), dtype=np.float64)
    ideal[rows[keep], position[keep]] = grades[keep]
    return ideal


def _top(gains: np.ndarray, k: int) -> np.ndarray:
    """First k columns, zero padded when the run is shorter than k."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    head = gains[:, :k]
    if head.shape[1] < k:
        head = np.pad(head, ((0, 0), (0, k - head.shape[1])))
    return head


def recall_at_k(gains: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    """Share of a query's relevant items found in its top k; NaN when it has none."""
    hits = (_top(gains, k) > 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = hits / np.asarray(n_relevant, dtype=np.float64)
    return np.where(np.asarray(n_relevant) > 0, recall, np.nan)


def hit_at_k(gains: np.ndarray, k: int) -> np.ndarray:
    """1.0 when any relevant item is in the top k (trec_eval's success_k)."""
    return (_top(gains, k) > 0).any(axis=1).astype(np.float64)


def precision_at_k(gains: np.ndarray, k: int) -> np.ndarray:
    """Relevant items in the top k divided by k, even when fewer than k were returned."""
    return (_top(gains, k) > 0).sum(axis=1) / float(k)


def first_relevant_rank(gains: np.ndarray) -> np.ndarray:
    """1-based rank of each query's first relevant item over the whole depth; 0 when none was
    retrieved (int64)."""
    relevant = gains > 0
    if relevant.shape[1] == 0:
        return np.zeros(relevant.shape[0], dtype=np.int64)
    return np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, 0).astype(np.int64)


def misses_worst_first(ranks: np.ndarray) -> np.ndarray:
    """The positions of the queries whose first relevant item did not rank first (``ranks``:
    first_relevant_rank's, 0 for never ranked), worst first: the never ranked, then by rank,
    lowest first; ties in position order. The worst-misses report and the review page's list."""
    ranks = np.asarray(ranks, dtype=np.float64)
    misses = np.flatnonzero(ranks != 1)
    lowest = np.where(ranks[misses] == 0, np.inf, ranks[misses])
    return misses[np.lexsort((misses, -lowest))]


def reciprocal_rank(gains: np.ndarray) -> np.ndarray:
    """1 / rank of the first relevant item over the whole depth; 0 when none was retrieved."""
    rank = first_relevant_rank(gains)
    with np.errstate(divide="ignore"):
        return np.where(rank > 0, 1.0 / rank, 0.0)


def _dcg(gains: np.ndarray) -> np.ndarray:
    discounts = np.log2(np.arange(2, gains.shape[1] + 2, dtype=np.float64))
    return (gains / discounts).sum(axis=1)


def ndcg_at_k(gains: np.ndarray, ideal: np.ndarray, k: int) -> np.ndarray:
    """DCG@k / ideal DCG@k, linear gains, log2(rank + 1) discount; NaN when nothing is relevant."""
    ideal_dcg = _dcg(_top(ideal, k))
    with np.errstate(invalid="ignore", divide="ignore"):
        ndcg = _dcg(np.maximum(_top(gains, k), 0.0)) / ideal_dcg
    return np.where(ideal_dcg > 0, ndcg, np.nan)


@dataclass(frozen=True)
class LabelledRanking:
    """A ranking read against its judgments, over the queries with a relevant item: what every
    ranking measure (goldenset.evaluation.measures.MEASURES) computes from."""

    gains: np.ndarray  # (queries, depth): grade of each ranked item, 0 when not relevant
    n_relevant: np.ndarray  # relevant items per query
    ideal: np.ndarray  # (queries, largest k): the best grades, descending


def evaluate(
    ranked: np.ndarray, qrels: sparse.csr_array, ks: Iterable[int]
) -> dict[str, np.ndarray]:
    """Per-query metrics over the queries that have at least one relevant item.

    Returns every ranking measure of goldenset.evaluation.measures (``recall@k``, ``hit@k``,
    ``ndcg@k``, ``precision@k`` for each k, then ``mrr``; float64 arrays, one value per kept
    query), plus
    ``query`` (row index of each kept query in ``ranked``/``qrels``) and ``n_relevant``.
    Queries with no relevant item are dropped: ``ranked.shape[0] - len(result["query"])`` of
    them.
    """
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] <= 0:
        raise ValueError(f"ks must be positive integers, got {ks}")
    kept, labelled = label_ranking(ranked, qrels, ks[-1])
    result: dict[str, np.ndarray] = {QUERY_KEY: kept, N_RELEVANT_KEY: labelled.n_relevant}
    result.update(measured(ranking_measures(), labelled, ks))
    return result


def label_ranking(
    ranked: np.ndarray, qrels: sparse.csr_array, largest_k: int
) -> tuple[np.ndarray, LabelledRanking]:
    """The queries with a relevant item (their rows) and their ranking read against qrels."""
    gains = judged_gains(ranked, qrels)
    n_relevant = relevant_counts(qrels)
    kept = np.flatnonzero(n_relevant > 0)
    labelled = LabelledRanking(gains[kept], n_relevant[kept], ideal_gains(qrels, largest_k)[kept])
    return kept, labelled


def measured(
    measures: Sequence[Measure], labelled: LabelledRanking, ks: Iterable[int]
) -> dict[str, np.ndarray]:
    """Each measure's values per query, by metric name (goldenset.evaluation.measures.named)."""
    return {name: measure.compute(labelled, k) for name, measure, k in named(measures, ks)}
