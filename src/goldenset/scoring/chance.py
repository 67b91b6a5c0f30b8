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

Each measure declares its closed form (``chance`` in goldenset.scoring.measures.MEASURES); a
ranking measure without one gets the mean over seeded uniformly random rankings instead.
The context metrics have no closed form (they depend on every chunk's length and overlaps):
:func:`context_chance` averages them over seeded uniformly random rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from goldenset.scoring.measures import Measure, named, ranking_measures
from goldenset.scoring.metrics import ideal_gains, judge, measured, relevant_counts
from goldenset.scoring.views import ContextInputs, context_view

# detail.json has listed these closed forms in this order, for each k, since it first held chance
# levels; a measure declared later follows them in MEASURES order (its bytes stay the same)
LISTED = ("recall", "precision", "hit", "ndcg")


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
    judged: np.ndarray  # R_all > 0
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


# The closed forms of the measures of goldenset.scoring.measures: (RandomRanking, k) -> per query.
def recall_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    r, shown = ranking.relevant, ranking.shown(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ranking.judged, r * shown / (ranking.n * ranking.relevant_all), np.nan)


def precision_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    r, shown = ranking.relevant, ranking.shown(k)
    return np.where(ranking.judged, r * shown / (ranking.n * k), np.nan)


def hit_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    return np.where(ranking.judged, 1.0 - ranking.none[:, ranking.shown(k)], np.nan)


def ndcg_chance(ranking: RandomRanking, k: int) -> np.ndarray:
    discounts = (1.0 / np.log2(np.arange(2, ranking.shown(k) + 2))).sum()
    ideal = ideal_gains(ranking.qrels, k)
    ideal_dcg = (ideal / np.log2(np.arange(2, k + 2))).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal_dcg > 0, ranking.gain / ranking.n * discounts / ideal_dcg, np.nan)


def mrr_chance(ranking: RandomRanking, k: None) -> np.ndarray:
    none, reach = ranking.none, ranking.reach
    first_at = none[:, :reach] - none[:, 1 : reach + 1]  # P(first relevant at i), i = 1..reach
    return np.where(ranking.judged, (first_at / np.arange(1, reach + 1)).sum(axis=1), np.nan)


def chance_levels(
    qrels: sparse.csr_array,
    n_items: int,
    ks: Sequence[int],
    depth: int,
    rankings: int = 10,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Per query: each ranking measure (recall@k, precision@k, hit@k, ndcg@k, ..., mrr) of a
    random ranking of the first ``n_items`` columns of ``qrels`` (columns past them: judged items
    absent from the corpus). NaN for a query without any relevant item, like the metrics
    themselves. A measure without a closed form is averaged over ``rankings`` seeded random
    rankings (0: left out)."""
    measures = sorted(ranking_measures(), key=_listed)
    ranking = RandomRanking.of(qrels, n_items, depth)
    estimated = [measure for measure in measures if measure.chance is None]
    estimates = _estimates(estimated, qrels, n_items, ks, depth, rankings, seed)
    out: dict[str, np.ndarray] = {}
    for name, measure, k in named(measures, ks):
        form = measure.closed_form()
        if form is not None:
            out[name] = form(ranking, k)
        elif name in estimates:
            out[name] = estimates[name]
    return out


def _listed(measure: Measure) -> int:
    return LISTED.index(measure.name) if measure.name in LISTED else len(LISTED)


def _estimates(
    measures: list[Measure],
    qrels: sparse.csr_array,
    n_items: int,
    ks: Sequence[int],
    depth: int,
    rankings: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Per query: each measure averaged over ``rankings`` seeded uniformly random rankings (a
    Monte Carlo estimate of its chance level), NaN for a query without a relevant item."""
    if not measures or not rankings:
        return {}
    rng = np.random.default_rng(seed)
    n_queries = qrels.shape[0]
    unjudged = relevant_counts(qrels) == 0  # the queries evaluate() leaves out
    totals: dict[str, np.ndarray] = {}
    for _ in range(rankings):
        ranked = np.argsort(rng.random((n_queries, n_items)), axis=1)[:, : min(depth, n_items)]
        kept, judged = judge(ranked, qrels, max(ks))
        for name, values in measured(measures, judged, ks).items():
            totals.setdefault(name, np.zeros(n_queries))[kept] += values
    return {name: np.where(unjudged, np.nan, total / rankings) for name, total in totals.items()}


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
