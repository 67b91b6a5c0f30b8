"""Chance levels: each rank metric's expected value under a random ranking of the same items.

On a corpus of a few dozen items a top-5 hit is nearly certain whatever the retriever does;
the chance level beside a metric says how much of its value a random ranking already gets.
Exact closed forms, per query, for N ranked items of which R are relevant (R_all counts judged
items missing from the corpus too, which no ranking returns), G the sum of the relevant
grades in the corpus, and a random ranking cut at depth D, k' = min(k, N, D):

- recall@k = R k' / (N R_all)
- precision@k = R k' / (N k)
- hit@k = 1 - C(N - R, k') / C(N, k')
- mrr = sum_{i=1..min(D, N)} P(first relevant at i) / i, with
  P(first relevant after i) = C(N - i, R) / C(N, R)
- ndcg@k = (G / N) sum_{i=1..k'} 1 / log2(i + 1) / IDCG@k (each place holds gain G/N on average)

The context metrics have no closed form (they depend on every chunk's length and overlaps):
:func:`context_chance` averages them over seeded uniformly random rankings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from goldenset.scoring.metrics import ideal_gains, relevant_counts
from goldenset.scoring.views import ContextInputs, context_view


def _none_in_first(n_items: int, n_relevant: np.ndarray, places: int) -> np.ndarray:
    """P(no relevant item in the first ``places``) = C(N - R, i) / C(N, i), for i = 0..places."""
    out = np.ones((n_relevant.size, places + 1))
    for i in range(places):
        step = np.clip((n_items - n_relevant - i) / (n_items - i), 0.0, None)
        out[:, i + 1] = out[:, i] * step
    return out


def chance_levels(
    qrels: sparse.csr_array, n_items: int, ks: Sequence[int], depth: int
) -> dict[str, np.ndarray]:
    """Per query: recall@k, precision@k, hit@k, ndcg@k and mrr of a random ranking of the
    first ``n_items`` columns of ``qrels`` (columns past them: judged items absent from the
    corpus). NaN for a query without any relevant item, like the metrics themselves."""
    in_corpus = sparse.csr_array(qrels[:, :n_items])
    r_all = relevant_counts(qrels).astype(np.float64)
    r = relevant_counts(in_corpus).astype(np.float64)
    gain = np.asarray(in_corpus.multiply(in_corpus > 0).sum(axis=1)).ravel()
    judged = r_all > 0
    out: dict[str, np.ndarray] = {}
    n = max(n_items, 1)
    reach = min(depth, n_items)
    none = _none_in_first(n_items, r, reach)
    for k in ks:
        shown = min(k, reach)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"recall@{k}"] = np.where(judged, r * shown / (n * r_all), np.nan)
        out[f"precision@{k}"] = np.where(judged, r * shown / (n * k), np.nan)
        out[f"hit@{k}"] = np.where(judged, 1.0 - none[:, shown], np.nan)
        discounts = (1.0 / np.log2(np.arange(2, shown + 2))).sum()
        ideal = ideal_gains(qrels, k)
        ideal_dcg = (ideal / np.log2(np.arange(2, k + 2))).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"ndcg@{k}"] = np.where(ideal_dcg > 0, gain / n * discounts / ideal_dcg, np.nan)
    first_at = none[:, :reach] - none[:, 1 : reach + 1]  # P(first relevant at i), i = 1..reach
    out["mrr"] = np.where(judged, (first_at / np.arange(1, reach + 1)).sum(axis=1), np.nan)
    return out


def context_chance(
    inputs: ContextInputs, budgets: Sequence[int], depth: int, rankings: int, seed: int
) -> dict[str, np.ndarray]:
    """Per query: each context metric averaged over ``rankings`` uniformly random rankings of
    the chunk items (a Monte Carlo estimate of its chance level)."""
    rng = np.random.default_rng(seed)
    n_queries, n_items = len(inputs.relevant_docs), len(inputs.item_chunk)
    totals: dict[str, np.ndarray] = {}
    for _ in range(rankings):
        ranked = np.argsort(rng.random((n_queries, n_items)), axis=1)[:, : min(depth, n_items)]
        for name, values in context_view(ranked, inputs, budgets).items():
            totals[name] = totals.get(name, 0.0) + values
    return {name: total / rankings for name, total in totals.items()}
