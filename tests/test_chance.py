"""Chance levels (closed forms) against every permutation of a small corpus, scored by the
metrics themselves."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from scipy import sparse

from goldenset.chance import chance_levels
from goldenset.metrics import evaluate, mean_metrics

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
