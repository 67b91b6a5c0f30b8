"""Chance levels (closed forms) against every permutation of a small corpus, scored by the
metrics themselves."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from goldenset.evaluation.chance import chance_levels, context_chance
from goldenset.evaluation.measures import MEASURES, RANKING_VIEWS, Measure
from goldenset.evaluation.ranking import evaluate
from goldenset.evaluation.views import ItemChunks, Layout, span_views
from tests.support.metrics import mean_metrics

N_ITEMS = 6


def exhaustive_means(judged: dict[int, float], n_columns: int, ks, depth) -> dict[str, float]:
    """Mean of each metric over every ranking of the N_ITEMS items, cut at ``depth``."""
    ranked = np.array(list(permutations(range(N_ITEMS))))[:, :depth]
    columns = list(judged)
    qrels = sparse.csr_array(
        (
            np.tile(list(judged.values()), len(ranked)),
            (np.repeat(np.arange(len(ranked)), len(columns)), np.tile(columns, len(ranked))),
        ),
        shape=(len(ranked), n_columns),
    )
    return mean_metrics(evaluate(ranked, qrels, ks))


@pytest.mark.parametrize(
    "judged, n_columns",
    [
        ({2: 1.0}, N_ITEMS),  # one relevant item
        ({0: 1.0, 4: 1.0}, N_ITEMS),
        ({1: 2.0, 3: 1.0, 5: 3.0}, N_ITEMS),  # graded: nDCG's gains
        ({0: 1.0, N_ITEMS: 1.0}, N_ITEMS + 1),  # one judged item absent from the corpus
    ],
)
@pytest.mark.parametrize("depth", [3, N_ITEMS])
def test_closed_forms_equal_the_mean_over_every_ranking(judged, n_columns, depth):
    ks = [1, 2, 3, 8]  # 8 > N: the top 8 holds every item (those within depth)
    expected = exhaustive_means(judged, n_columns, ks, depth)
    columns = list(judged)
    qrels = sparse.csr_array(
        (list(judged.values()), ([0] * len(columns), columns)), shape=(1, n_columns)
    )
    levels = chance_levels(qrels, N_ITEMS, ks, depth)
    for name, value in expected.items():
        assert levels[name][0] == pytest.approx(value, abs=1e-12), name


def test_a_query_without_relevant_items_has_no_chance_level():
    qrels = sparse.csr_array(([1.0], ([1], [0])), shape=(2, 4))
    levels = chance_levels(qrels, 4, [1], 4)
    assert np.isnan(levels["recall@1"][0]) and np.isnan(levels["mrr"][0])
    assert levels["recall@1"][1] == pytest.approx(1 / 4)
    assert levels["hit@1"][1] == pytest.approx(1 / 4)


def test_context_chance_of_a_budget_holding_one_chunk_is_the_share_of_relevant_chunks():
    """Eight documents of one 5-token chunk each, a budget of 5 tokens: a random ranking puts
    exactly one document in the context, a relevant one with probability R / N."""
    n_docs = 8
    layout = Layout(
        [f"d{i}" for i in range(n_docs)],
        np.arange(n_docs),
        np.zeros(n_docs, dtype=np.int64),
        np.full(n_docs, 10),
        [list(range(0, 10, 2))] * n_docs,
    )
    evidence = pd.DataFrame(
        [("q0", "d0", 0, 10), ("q1", "d1", 0, 10), ("q1", "d5", 0, 5)],
        columns=["qid", "doc_id", "start", "end"],
    )
    views = span_views(["q0", "q1"], evidence, layout, ItemChunks.of(n_docs, None, None), [5])
    rankings = 4000
    levels = context_chance(views.context, [5], depth=100, rankings=rankings, seed=0)
    expected_hit = np.array([1 / 8, 2 / 8])
    sigma = np.sqrt(expected_hit * (1 - expected_hit) / rankings)
    assert np.all(np.abs(levels["context_hit@5"] - expected_hit) < 4 * sigma)
    # q1's evidence is 15 characters: d1 whole (10) or d5's first half (5), each with p 1/8
    assert levels["context_recall@5"][1] == pytest.approx((10 + 5) / 15 / 8, abs=4 * sigma[1])


def test_a_measure_without_a_closed_form_gets_an_estimate_over_random_rankings():
    """A new metric declares no chance function and still gets a chance level: the mean over
    seeded random rankings, near the mean over every ranking; the closed forms keep their
    order and values."""

    def found(judged, k):
        return (judged.gains[:, :k] > 0).sum(axis=1).astype(np.float64)

    qrels = sparse.csr_array(([1.0, 1.0, 1.0], ([0, 0, 1], [1, 4, 2])), shape=(3, N_ITEMS))
    before = chance_levels(qrels, N_ITEMS, [1, 3], 4)
    toy = Measure(
        name="found",
        parameter="k",
        views=RANKING_VIEWS,
        definition="relevant items in the top k",
        compute=found,
    )
    MEASURES.register("found", toy)
    try:
        levels = chance_levels(qrels, N_ITEMS, [1, 3], 4, rankings=4000, seed=1)
        without = chance_levels(qrels, N_ITEMS, [1], 4, rankings=0)
    finally:
        MEASURES.unregister("found")
    assert list(levels) == [
        *(
            f"{name}@{k}"
            for k in (1, 3)
            for name in ("recall", "precision", "hit", "ndcg", "found")
        ),
        "mrr",
    ]
    for name, values in before.items():
        np.testing.assert_array_equal(levels[name], values)
    # found@k = R k / N exactly; 4000 rankings put the estimate within a few hundredths
    assert levels["found@3"][:2] == pytest.approx([2 * 3 / N_ITEMS, 3 / N_ITEMS], abs=0.05)
    assert np.isnan(levels["found@1"][2])  # no relevant item: no chance level
    assert "found@1" not in without
