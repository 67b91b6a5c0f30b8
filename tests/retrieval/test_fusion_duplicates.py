"""Reciprocal rank fusion reads a run as the evaluator does: an id a run lists twice counts
once, at its first place, the ids after it ranked among the distinct ids."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.core.ranked import TopK
from goldenset.evaluation.projection import RunItems
from goldenset.retrieval.retrievers import Run
from goldenset.retrieval.retrievers.fusion import reciprocal_rank_fusion

IDS = [f"c{i}" for i in range(4)]


def run_of(ids: list[str], indices: list[list[int]]) -> Run:
    positions = np.array(indices, dtype=np.int64)
    return Run(ids, TopK(positions, np.zeros(positions.shape, np.float32)))


def test_an_id_listed_twice_fuses_as_if_listed_once():
    twice, once = run_of(IDS, [[2, 2, 1, -1]]), run_of(IDS, [[2, 1, -1, -1]])
    other = run_of(IDS, [[1, 3, 2, 0]])
    fused_twice = reciprocal_rank_fusion([twice, other], rrf_k=60)
    fused_once = reciprocal_rank_fusion([once, other], rrf_k=60)
    # c1: 1/62 + 1/61 beats c2: 1/61 + 1/63; counted twice, c2 would lead with 2/61 + 1/63
    assert fused_twice.found.indices.tolist() == [[1, 2, 3, 0]]
    assert fused_twice.found.scores[0, 0] == pytest.approx(1 / 62 + 1 / 61)
    np.testing.assert_array_equal(fused_twice.found.indices, fused_once.found.indices)
    np.testing.assert_array_equal(fused_twice.found.scores, fused_once.found.scores)


def test_the_evaluator_reads_the_two_runs_alike_too():
    view = RunItems("synthetic", ["q0"], IDS, np.arange(len(IDS)), len(IDS))
    twice = view.project(run_of(IDS, [[2, 2, 1, -1]]), 4, "twice")
    once = view.project(run_of(IDS, [[2, 1, -1, -1]]), 4, "once")
    assert twice is not None and once is not None
    np.testing.assert_array_equal(twice.indices, once.indices)


def test_an_id_a_run_file_names_at_two_positions_counts_once():
    """A run over its own id list, naming c2 at positions 0 and 2, fused with one over IDS."""
    own = run_of(["c2", "c1", "c2", "c3"], [[0, 2, 1, -1]])
    other = run_of(IDS, [[1, 3, 2, 0]])
    fused = reciprocal_rank_fusion([own, other], rrf_k=60)
    assert [[fused.ids[i] for i in row if i >= 0] for row in fused.found.indices] == [
        ["c1", "c2", "c3", "c0"]
    ]
    assert fused.found.scores[0, 1] == pytest.approx(1 / 61 + 1 / 63)
