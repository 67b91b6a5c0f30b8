"""Chance levels: each rank metric's expected value under a random ranking of the same items.

On a corpus of a few dozen items a top-5 hit is nearly certain whatever the retriever does;
the chance level beside a metric says how much of its value a random ranking already gets.

Each measure declares its closed form (``chance`` of its goldenset.evaluation.measures.Measure); a
ranking measure without one gets the mean over seeded uniformly random rankings instead.
The context metrics have no closed form (they depend on every chunk's length and overlaps):
:func:`context_chance` averages them over seeded uniformly random rankings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from goldenset.evaluation.context import ContextInputs, context_view
from goldenset.evaluation.measures import Measure, named, ranking_measures
from goldenset.evaluation.ranking import label_ranking, measured, relevant_counts
from goldenset.evaluation.ranking_measures import RandomRanking

# detail.json has listed these closed forms in this order, for each k, since it first held chance
# levels; a measure declared later follows them in MEASURES order (its bytes stay the same)
LISTED = ("recall", "precision", "hit", "ndcg")


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
        if measure.chance is not None:
            out[name] = measure.chance(ranking, k)
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
        kept, labelled = label_ranking(ranked, qrels, max(ks))
        for name, values in measured(measures, labelled, ks).items():
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
