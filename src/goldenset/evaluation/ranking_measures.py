"""The ranking measures: recall@k, hit@k, ndcg@k, precision@k and mrr, each registered in
goldenset.evaluation.measures.MEASURES with the function that computes it (over a
goldenset.evaluation.ranking.LabelledRanking) and its value under a random ranking in closed form.

Closed forms, per query, for N ranked items of which R are relevant (R_all counts judged items
missing from the corpus too, which no ranking returns), G the sum of the relevant grades in the
corpus, and a random ranking cut at depth D, k' = min(k, N, D):

- recall@k = R k' / (N R_all)
- precision@k = R k' / (N k)
- hit@k = 1 - C(N - R, k') / C(N, k')
- mrr = sum_{i=1..min(D, N)} P(first relevant at i) / i, with
  P(first relevant after i) = C(N - i, R) / C(N, R)
- ndcg@k = (G / N) sum_{i=1..k'} 1 / log2(i + 1) / IDCG@k (each place holds gain G/N on average)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from goldenset.evaluation.measures import MEASURES, RANKING_VIEWS, Measure
from goldenset.evaluation.ranking import (
    LabelledRanking,
    hit_at_k,
    ideal_gains,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    relevant_counts,
)


def _none_in_first(n_items: int, n_relevant: np.ndarray, places: int) -> np.ndarray:
    """P(no relevant item in the first ``places``) = C(N - R, i) / C(N, i), for i = 0..places."""
    out = np.ones((n_relevant.size, places + 1))
    for i in range(places):
        step = np.clip((n_items - n_relevant - i) / (n_items - i), 0.0, None)
        out[:, i + 1] = out[:, i] * step
    return out


@dataclass(frozen=True)
class RandomRanking:
    """A uniformly random ranking of the first ``n_items`` columns of ``qrels``, cut at a depth,
    as the closed forms read it (one value per query)."""

    qrels: sparse.csr_array
    n: int  # N, at least 1
    reach: int  # places the ranking fills: min(depth, N)
    relevant: np.ndarray  # R: relevant items in the corpus
    relevant_all: np.ndarray  # R_all: with the judged items absent from the corpus
    gain: np.ndarray  # G: the sum of the relevant grades in the corpus
    has_relevant: np.ndarray  # R_all > 0
    none: np.ndarray  # (queries, reach + 1): P(no relevant item in the first i)

    @classmethod
    def of(cls, qrels: sparse.csr_array, n_items: int, depth: int) -> RandomRanking:
        in_corpus = sparse.csr_array(qrels[:, :n_items])
        r_all = relevant_counts(qrels).astype(np.float64)
        r = relevant_counts(in_corpus).astype(np.float64)
        gain = np.asarray(in_corpus.multiply(in_corpus > 0).sum(axis=1)).ravel()
        reach = min(depth, n_items)
        none = _none_in_first(n_items, r, reach)
        return cls(qrels, max(n_items, 1), reach, r, r_all, gain, r_all > 0, none)

    def shown(self, k: int) -> int:
        return min(k, self.reach)


# The closed forms: (RandomRanking, k) -> per query.
def recall_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    r, shown = ranking.relevant, ranking.shown(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            ranking.has_relevant, r * shown / (ranking.n * ranking.relevant_all), np.nan
        )


def precision_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    r, shown = ranking.relevant, ranking.shown(k)
    return np.where(ranking.has_relevant, r * shown / (ranking.n * k), np.nan)


def hit_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    return np.where(ranking.has_relevant, 1.0 - ranking.none[:, ranking.shown(k)], np.nan)


def ndcg_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    discounts = (1.0 / np.log2(np.arange(2, ranking.shown(k) + 2))).sum()
    ideal = ideal_gains(ranking.qrels, k)
    ideal_dcg = (ideal / np.log2(np.arange(2, k + 2))).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal_dcg > 0, ranking.gain / ranking.n * discounts / ideal_dcg, np.nan)


def mrr_chance(ranking: RandomRanking, k: None) -> np.ndarray:
    none, reach = ranking.none, ranking.reach
    first_at = none[:, :reach] - none[:, 1 : reach + 1]  # P(first relevant at i), i = 1..reach
    return np.where(ranking.has_relevant, (first_at / np.arange(1, reach + 1)).sum(axis=1), np.nan)


# The computed values: (LabelledRanking, k) -> per query.
def recall_measure(labelled: LabelledRanking, k: int) -> np.ndarray:
    return recall_at_k(labelled.gains, labelled.n_relevant, k)


def hit_measure(labelled: LabelledRanking, k: int) -> np.ndarray:
    return hit_at_k(labelled.gains, k)


def ndcg_measure(labelled: LabelledRanking, k: int) -> np.ndarray:
    return ndcg_at_k(labelled.gains, labelled.ideal, k)


def precision_measure(labelled: LabelledRanking, k: int) -> np.ndarray:
    return precision_at_k(labelled.gains, k)


def mrr_measure(labelled: LabelledRanking, k: None) -> np.ndarray:
    return reciprocal_rank(labelled.gains)


for _measure in (
    Measure(
        name="recall",
        parameter="k",
        views=RANKING_VIEWS,
        definition="share of the question's relevant items in the top k",
        reference="recall_k",
        compute=recall_measure,
        chance=recall_chance,
    ),
    Measure(
        name="hit",
        parameter="k",
        views=RANKING_VIEWS,
        definition="1 when a relevant item is in the top k",
        reference="success_k",
        compute=hit_measure,
        chance=hit_chance,
    ),
    Measure(
        name="ndcg",
        parameter="k",
        views=RANKING_VIEWS,
        definition="DCG of the top k over the ideal DCG, linear gains, log2(rank + 1) discount",
        reference="ndcg_cut_k",
        compute=ndcg_measure,
        chance=ndcg_chance,
    ),
    Measure(
        name="precision",
        parameter="k",
        views=RANKING_VIEWS,
        definition="relevant items in the top k divided by k",
        reference="P_k",
        compute=precision_measure,
        chance=precision_chance,
    ),
    Measure(
        name="mrr",
        parameter=None,
        views=RANKING_VIEWS,
        definition="1 / rank of the first relevant item within `score.depth`; 0 when none",
        reference="recip_rank",
        compute=mrr_measure,
        chance=mrr_chance,
    ),
):
    MEASURES.register(_measure.name, _measure)
