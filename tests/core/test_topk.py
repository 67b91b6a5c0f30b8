"""goldenset.core.topk: blocked top-k equals a brute-force full sort; the BM25 and dense
sources of goldenset.retrieval.retrievers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import TopK
from goldenset.core.selection import select_top_k
from goldenset.core.topk import block_rows_for, resolve_device, top_k
from goldenset.retrieval.retrievers.dense import DenseScores
from goldenset.retrieval.retrievers.lexical import BM25Scores


class MatrixScores:
    """A ScoreSource over a fixed matrix, recording the row blocks asked for."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix = np.asarray(matrix, dtype=np.float32)
        self.blocks: list[slice] = []

    @property
    def n_queries(self) -> int:
        return self.matrix.shape[0]

    @property
    def n_items(self) -> int:
        return self.matrix.shape[1]

    def scores(self, rows: slice) -> np.ndarray:
        self.blocks.append(rows)
        return self.matrix[rows].copy()


def brute_force(matrix: np.ndarray, k: int, groups: np.ndarray | None = None) -> TopK:
    """Full sort of every row: score descending (NaN as -inf), ties by ascending index."""
    matrix = np.where(np.isnan(matrix), -np.inf, matrix).astype(np.float32)
    if groups is not None:
        bounds = list(groups) + [matrix.shape[1]]
        matrix = np.stack(
            [
                matrix[:, start:end].max(axis=1)
                for start, end in zip(bounds[:-1], bounds[1:], strict=True)
            ],
            axis=1,
        )
    indices = np.empty((matrix.shape[0], min(k, matrix.shape[1])), dtype=np.int64)
    for row, values in enumerate(matrix):
        order = sorted(range(len(values)), key=lambda i: (-values[i], i))
        indices[row] = order[: indices.shape[1]]
    return TopK(indices=indices, scores=np.take_along_axis(matrix, indices, axis=1))


def assert_same(got: TopK, expected: TopK) -> None:
    assert got.indices.dtype == np.int64 and got.scores.dtype == np.float32
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.scores, expected.scores)


def random_matrix(rng: np.random.Generator, n_queries: int, n_items: int, kind: str) -> np.ndarray:
    if kind == "continuous":
        return rng.standard_normal((n_queries, n_items)).astype(np.float32)
    if kind == "ties":  # few distinct values: ties everywhere, also across the k-th place
        return rng.integers(0, 4, (n_queries, n_items)).astype(np.float32)
    if kind == "sparse":  # BM25-like: mostly zero
        matrix = rng.random((n_queries, n_items)).astype(np.float32)
        return np.where(rng.random((n_queries, n_items)) < 0.97, 0.0, matrix).astype(np.float32)
    matrix = rng.standard_normal((n_queries, n_items)).astype(np.float32)
    matrix[rng.random(matrix.shape) < 0.1] = np.nan
    matrix[rng.random(matrix.shape) < 0.05] = -np.inf
    return matrix


@pytest.mark.parametrize("kind", ["continuous", "ties", "sparse", "nan"])
def test_top_k_equals_full_sort(kind):
    rng = np.random.default_rng(7)
    for _ in range(25):
        n_queries, n_items = int(rng.integers(1, 40)), int(rng.integers(1, 5000))
        k = int(rng.integers(1, 150))
        matrix = random_matrix(rng, n_queries, n_items, kind)
        block_rows = int(rng.integers(1, n_queries + 3))
        got = top_k(MatrixScores(matrix), k, block_rows=block_rows)
        assert_same(got, brute_force(matrix, k))


@pytest.mark.parametrize("kind", ["continuous", "ties", "nan"])
def test_top_k_over_groups_ranks_each_group_by_its_best_item(kind):
    rng = np.random.default_rng(11)
    for _ in range(25):
        n_queries, n_items = int(rng.integers(1, 30)), int(rng.integers(1, 3000))
        n_groups = int(rng.integers(1, n_items + 1))
        groups = np.sort(rng.choice(np.arange(1, n_items), n_groups - 1, replace=False))
        groups = np.concatenate(([0], groups)).astype(np.int64)
        matrix = random_matrix(rng, n_queries, n_items, kind)
        k = int(rng.integers(1, 120))
        got = top_k(MatrixScores(matrix), k, groups=groups, block_rows=int(rng.integers(1, 9)))
        assert_same(got, brute_force(matrix, k, groups))


def test_groups_example():
    # Documents: {0, 1}, {2}, {3, 4, 5}; the third wins by its best chunk.
    matrix = np.array([[0.1, 0.5, 0.4, 0.0, 0.9, 0.2]])
    got = top_k(MatrixScores(matrix), 3, groups=np.array([0, 2, 3]))
    assert got.indices.tolist() == [[2, 0, 1]]
    np.testing.assert_allclose(got.scores, [[0.9, 0.5, 0.4]])


def test_ties_rank_by_lower_index_even_across_the_cut():
    matrix = np.array([[1.0, 3.0, 1.0, 3.0, 1.0, 1.0]])
    assert top_k(MatrixScores(matrix), 3).indices.tolist() == [[1, 3, 0]]


def test_k_larger_than_items_returns_every_item():
    matrix = np.array([[0.2, 0.7, 0.1], [0.0, 0.0, 0.5]])
    got = top_k(MatrixScores(matrix), 10)
    assert got.indices.tolist() == [[1, 0, 2], [2, 0, 1]]
    assert got.indices.shape == got.scores.shape == (2, 3)
    assert top_k(MatrixScores(matrix), 10, groups=np.array([0, 1])).indices.shape == (2, 2)


def test_blocks_cover_every_row_once_even_when_they_do_not_divide():
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((10, 500))
    source = MatrixScores(matrix)
    got = top_k(source, 5, block_rows=4, progress=True)
    assert [(block.start, block.stop) for block in source.blocks] == [(0, 4), (4, 8), (8, 10)]
    assert_same(got, brute_force(matrix, 5))


def test_default_block_size_follows_the_memory_budget():
    assert block_rows_for(100_000) == 256 * 2**20 // 400_000 == 671
    assert block_rows_for(1000, budget_bytes=4 * 1000 * 3) == 3
    assert block_rows_for(10**9) == 1
    assert block_rows_for(0) > 0
    source = MatrixScores(np.zeros((3, 10)))
    top_k(source, 2)
    assert [(block.start, block.stop) for block in source.blocks] == [(0, 3)]


def test_empty_queries_and_empty_items():
    assert top_k(MatrixScores(np.zeros((0, 5))), 3).indices.shape == (0, 3)
    empty_items = top_k(MatrixScores(np.zeros((2, 0))), 3)
    assert empty_items.indices.shape == empty_items.scores.shape == (2, 0)


def test_bad_arguments():
    source = MatrixScores(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="k must be positive"):
        top_k(source, 0)
    for groups in ([1, 3], [0, 3, 3], [0, 5], [[0, 1]]):
        with pytest.raises(ValueError, match="groups"):
            top_k(source, 2, groups=np.array(groups))


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=300),
        elements=st.sampled_from([0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan]),
    ),
    st.integers(1, 400),
)
def test_select_top_k_on_generated_blocks(matrix, k):
    k = min(k, matrix.shape[1])
    indices, scores = select_top_k(matrix, k)
    assert_same(TopK(indices, scores), brute_force(matrix, k))


# --- sources -------------------------------------------------------------------------------------


def test_dense_scores_are_inner_products_and_rank_the_nearest_item_first():
    rng = np.random.default_rng(5)
    items = rng.standard_normal((50, 8)).astype(np.float32)
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    queries = items[[7, 21, 3]] + 0.01 * rng.standard_normal((3, 8)).astype(np.float32)
    source = DenseScores(queries, items)
    assert (source.n_queries, source.n_items) == (3, 50)
    np.testing.assert_allclose(source.scores(slice(1, 3)), queries[1:3] @ items.T, rtol=1e-5)
    assert top_k(source, 1, block_rows=2).indices[:, 0].tolist() == [7, 21, 3]


def test_dense_top_k_in_uneven_blocks_equals_full_sort_of_all_inner_products():
    rng = np.random.default_rng(9)
    items = rng.standard_normal((3000, 16)).astype(np.float32)
    queries = rng.standard_normal((25, 16)).astype(np.float32)
    got = top_k(DenseScores(queries, items), 40, block_rows=7)  # fills one reused buffer
    expected = brute_force(queries.astype(np.float64) @ items.T.astype(np.float64), 40)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_allclose(got.scores, expected.scores, rtol=1e-5, atol=1e-5)


def test_dense_scores_on_the_resolved_device_match_numpy_in_both_paths():
    """score.device: the code path a GPU runs, here with the device torch resolves (the CPU on
    machines without one): scores() and the reused buffer of scores_into() both match numpy."""
    device = resolve_device("auto")
    assert device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    rng = np.random.default_rng(11)
    items = rng.standard_normal((500, 32)).astype(np.float32)
    queries = rng.standard_normal((30, 32)).astype(np.float32)
    source = DenseScores(queries, items, resolve_device("cpu"))
    # float32 sums of 32 products: near zero only an absolute tolerance holds
    expected_scores = queries[3:9] @ items.T
    np.testing.assert_allclose(source.scores(slice(3, 9)), expected_scores, rtol=1e-5, atol=1e-5)
    got = top_k(DenseScores(queries, items, device), 10, block_rows=7)
    expected = brute_force(queries.astype(np.float64) @ items.T.astype(np.float64), 10)
    np.testing.assert_array_equal(got.indices, expected.indices)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_score_device_cuda_without_a_gpu_is_one_clear_error():
    with pytest.raises(GoldensetError, match="score.device is cuda but torch sees no GPU"):
        resolve_device("cuda")


def test_dense_scores_reject_mismatched_dimensions():
    with pytest.raises(GoldensetError, match="384 dimensions but item vectors have 768"):
        DenseScores(np.zeros((2, 384)), np.zeros((3, 768)))


def test_bm25_ranks_the_document_with_the_query_terms_first():
    documents = [
        "The cat sat on the mat.",
        "Quantum entanglement of photon pairs measured in the laboratory.",
        "Dogs and cats are common pets.",
        "A recipe for bread with flour, water and salt.",
    ]
    queries = ["photon entanglement", "bread flour", "the"]
    source = BM25Scores(documents, queries, k1=1.2, b=0.75)
    assert (source.n_queries, source.n_items) == (3, 4)
    scores = source.scores(slice(0, 3))
    assert scores.dtype == np.float32 and scores.shape == (3, 4)
    assert top_k(source, 1).indices[:2, 0].tolist() == [1, 3]
    assert scores[0, 1] > 0 and scores[0, [0, 2, 3]].tolist() == [0, 0, 0]
    # A query of stopwords only scores nothing, and still ranks (by index).
    assert scores[2].tolist() == [0, 0, 0, 0]
    assert top_k(source, 4).indices[2].tolist() == [0, 1, 2, 3]


def test_bm25_without_any_token_does_not_crash():
    assert BM25Scores(["", "the a of"], ["anything", ""]).scores(slice(0, 2)).tolist() == [
        [0, 0],
        [0, 0],
    ]
    assert BM25Scores([], ["query"]).scores(slice(0, 1)).shape == (1, 0)
    assert BM25Scores(["some text"], []).n_queries == 0


def test_bm25_parameters_change_scores():
    documents = ["apple apple apple banana", "apple cherry", "cherry cherry banana"]
    low = BM25Scores(documents, ["apple"], k1=0.1).scores(slice(0, 1))
    high = BM25Scores(documents, ["apple"], k1=3.0).scores(slice(0, 1))
    # Term frequency saturates sooner with a small k1: the doc with 3 "apple" gains less.
    assert low[0, 0] / low[0, 1] < high[0, 0] / high[0, 1]
