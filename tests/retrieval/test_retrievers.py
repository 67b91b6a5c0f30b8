"""goldenset.retrieval.retrievers: hybrid fusion, faiss ANN and its recall loss, external
retrievers; each a run keyed by id, read as a query set's items by
goldenset.evaluation.projection."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import TopK
from goldenset.evaluation.approximation import recall_loss
from goldenset.evaluation.projection import RunItems
from goldenset.params import parse_params
from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.retrievers import (
    Corpus,
    Queries,
    Run,
    build_references,
    build_retrievers,
    rank_all,
)
from goldenset.retrieval.retrievers.ann import ANNParams
from goldenset.retrieval.retrievers.dense import Dense
from goldenset.retrieval.retrievers.fusion import reciprocal_rank_fusion

TEXTS = [
    "red apples grow on trees",
    "green pears ripen in autumn",
    "blue plums are sweet",
    "apples and pears make cider",
    "trees lose leaves in autumn",
    "sweet cider from red apples",
]


def unit_rows(rng: np.random.Generator, n: int, dimension: int) -> np.ndarray:
    vectors = rng.standard_normal((n, dimension)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def small_corpus(seed: int = 0) -> Corpus:
    ids = [f"d{i // 2}#{i % 2}" for i in range(len(TEXTS))]
    return Corpus(ids, TEXTS, unit_rows(np.random.default_rng(seed), len(TEXTS), 8))


def chunk_queries(texts: list[str], vectors: np.ndarray) -> Queries:
    return Queries("synthetic", [f"q{i}" for i in range(len(texts))], texts, vectors)


def document_queries(texts: list[str], vectors: np.ndarray) -> Queries:
    return Queries("real", [f"r{i}" for i in range(len(texts))], texts, vectors)


def as_chunks(corpus: Corpus, queries: Queries) -> RunItems:
    """A run's ids read as the corpus' chunks."""
    n = len(corpus.chunk_ids)
    return RunItems(queries.name, queries.qids, corpus.chunk_ids, np.arange(n), n)


def as_documents(corpus: Corpus, queries: Queries, chunks_each: int = 2) -> RunItems:
    """A run's ids read as documents d0, d1, ... of ``chunks_each`` chunks each."""
    n = len(corpus.chunk_ids)
    documents = [f"d{i}" for i in range(n // chunks_each)]
    of_chunk = np.arange(n) // chunks_each
    return RunItems(
        queries.name, queries.qids, corpus.chunk_ids, of_chunk, len(documents), documents
    )


def listed_ids(run: Run) -> list[list[str | None]]:
    return [[run.ids[i] if i >= 0 else None for i in row] for row in run.found.indices]


def retrievers_params(**sections) -> RetrieversParams:
    return parse_params({"retrievers": sections}).retrievers


def rrf_by_hand(lists: list[list[int]], rrf_k: int) -> list[int]:
    fused: dict[int, float] = {}
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(fused, key=lambda item: (-fused[item], item))


# --- hybrid --------------------------------------------------------------------------------------


def test_reciprocal_rank_fusion_example():
    ids = [f"c{i}" for i in range(6)]
    first = Run(ids, TopK(np.array([[3, 1, 2], [0, -1, -1]]), np.zeros((2, 3), np.float32)))
    second = Run(ids, TopK(np.array([[1, 4, 3], [5, 0, -1]]), np.zeros((2, 3), np.float32)))
    fused = reciprocal_rank_fusion([first, second], rrf_k=60)
    # 1: 1/62 + 1/61; 3: 1/61 + 1/63; 2 and 4 once at rank 3 and 2; padding never counts
    assert fused.found.indices.tolist() == [[1, 3, 4, 2], [0, 5, -1, -1]]
    assert fused.found.scores[0, 0] == pytest.approx(1 / 62 + 1 / 61)
    assert fused.found.scores[1, 0] == pytest.approx(1 / 61 + 1 / 62)


def test_fusion_reads_ids_not_positions():
    """Runs over the same ids listed in other orders fuse to the same ranking of ids."""
    ids = [f"c{i}" for i in range(6)]
    first = Run(ids, TopK(np.array([[3, 1, 2]]), np.zeros((1, 3), np.float32)))
    second = Run(ids, TopK(np.array([[1, 4, 3]]), np.zeros((1, 3), np.float32)))
    reversed_ids = ids[::-1]  # c5 ... c0: c3 is at 2, c1 at 4, c2 at 3, c4 at 1
    second_reversed = Run(reversed_ids, TopK(np.array([[4, 1, 2]]), np.zeros((1, 3), np.float32)))
    together = reciprocal_rank_fusion([first, second], rrf_k=60)
    apart = reciprocal_rank_fusion([first, second_reversed], rrf_k=60)
    assert listed_ids(apart) == listed_ids(together) == [["c1", "c3", "c4", "c2"]]
    np.testing.assert_array_equal(apart.found.scores, together.found.scores)


def test_hybrid_fuses_the_lists_of_dense_and_bm25_on_one_score_run():
    corpus = small_corpus()
    queries = chunk_queries(
        ["red apples", "autumn pears", "sweet plums"], unit_rows(np.random.default_rng(1), 3, 8)
    )
    params = retrievers_params(
        ann={"enabled": False}, hybrid={"enabled": True, "fuse": ["bm25", "dense"], "rrf_k": 5}
    )
    ranked = rank_all(build_retrievers(params, corpus), queries, depth=4)
    assert list(ranked) == ["dense", "bm25", "hybrid"]
    for row in range(3):
        lists = [
            [i for i in ranked[name].found.indices[row] if i >= 0] for name in ("bm25", "dense")
        ]
        expected = rrf_by_hand(lists, rrf_k=5)  # every id the two return
        assert [i for i in ranked["hybrid"].found.indices[row] if i >= 0] == expected


def test_hybrid_of_disabled_retrievers_is_a_params_error():
    with pytest.raises(GoldensetError, match="hybrid.fuse names disabled retrievers"):
        retrievers_params(bm25={"enabled": False})


# --- ann -----------------------------------------------------------------------------------------


def exact_and_ann(params: ANNParams, documents: bool = False) -> tuple[TopK, TopK]:
    """dense's and ann's runs read as chunks, or as documents of three chunks each (read from
    runs of 3 x 10 chunks, enough for 10 documents)."""
    rng = np.random.default_rng(7)
    items, query_vectors = unit_rows(rng, 3000, 32), unit_rows(rng, 200, 32)
    ids = [f"d{i // 3}#{i % 3}" for i in range(3000)]
    corpus = Corpus(ids, [f"text {i}" for i in range(3000)], items)
    queries = chunk_queries([""] * 200, query_vectors)
    retrievers = build_retrievers(retrievers_params(ann=params.model_dump()), corpus)
    items = (
        as_documents(corpus, queries, chunks_each=3) if documents else as_chunks(corpus, queries)
    )
    ranked = rank_all(retrievers, queries, depth=30 if documents else 10)
    return items.project(ranked["dense"], 10, "dense"), items.project(ranked["ann"], 10, "ann")


def overlap_by_hand(approximate: TopK, exact: TopK, k: int) -> float:
    shared = [
        len(set(a[:k].tolist()) & set(e[:k].tolist()))
        for a, e in zip(approximate.indices, exact.indices, strict=True)
    ]
    return 1.0 - float(np.mean(shared)) / k


@pytest.mark.parametrize(
    "settings",
    [
        {"index": "hnsw", "hnsw_m": 4, "ef_construction": 8, "ef_search": 1},
        {"index": "ivf", "ivf_nlist": 64, "ivf_nprobe": 1},
    ],
    ids=["hnsw", "ivf"],
)
def test_ann_reports_the_recall_it_loses_against_exact_search(settings):
    exact, ann = exact_and_ann(ANNParams(**settings))
    loss = recall_loss(ann.indices, exact.indices, 10)
    # random vectors in 32 dimensions are hard for a small graph or one probed cluster
    assert 0.05 < loss < 1.0
    assert loss == pytest.approx(overlap_by_hand(ann, exact, 10))
    assert recall_loss(ann.indices, exact.indices, 1) == pytest.approx(
        overlap_by_hand(ann, exact, 1)
    )
    # what ANN returns is still ranked by the same inner product
    assert np.all(np.diff(ann.scores, axis=1) <= 1e-6)


@pytest.mark.parametrize(
    "settings",
    [
        {"index": "hnsw", "hnsw_m": 32, "ef_construction": 200, "ef_search": 3000},
        {"index": "ivf", "ivf_nlist": 16, "ivf_nprobe": 16},
    ],
    ids=["hnsw", "ivf"],
)
def test_ann_searching_everything_loses_nothing(settings):
    exact, ann = exact_and_ann(ANNParams(**settings))
    assert recall_loss(ann.indices, exact.indices, 10) == 0.0


def test_ann_read_as_documents_ranks_each_at_its_best_chunk():
    exact, ann = exact_and_ann(ANNParams(index="ivf", ivf_nlist=8, ivf_nprobe=8), documents=True)
    np.testing.assert_array_equal(ann.indices, exact.indices)
    assert ann.indices.max() < 1000 and (ann.indices >= 0).all()


def test_a_run_read_as_documents_keeps_each_documents_best_chunk_in_rank_order():
    corpus = small_corpus()
    queries = document_queries(["x"], np.zeros((1, 8)))
    found = TopK(np.array([[5, 4, 1, 0, -1]]), np.array([[9, 8, 7, 6, -np.inf]], np.float32))
    read = as_documents(corpus, queries).project(Run(corpus.chunk_ids, found), 3, "test")
    assert read.indices.tolist() == [[2, 0, -1]]
    assert read.scores[0, :2].tolist() == [9.0, 7.0]


def test_a_run_naming_a_chunk_twice_counts_it_once_at_its_first_place():
    corpus = small_corpus()
    queries = chunk_queries(["x"], np.zeros((1, 8)))
    found = TopK(np.array([[3, 1, 3, 2]]), np.array([[4, 3, 2, 1]], np.float32))
    read = as_chunks(corpus, queries).project(Run(corpus.chunk_ids, found), 4, "test")
    assert read.indices.tolist() == [[3, 1, 2, -1]]


# --- external ------------------------------------------------------------------------------------


SEARCH_MODULE = """
def search(query_texts, chunk_ids, chunk_texts, k):
    # word overlap, ties by chunk order; ids only for the first query, pairs for the others
    ranked = []
    for number, query in enumerate(query_texts):
        words = set(query.split())
        overlap = [len(words & set(text.split())) for text in chunk_texts]
        best = sorted(range(len(chunk_ids)), key=lambda i: (-overlap[i], i))[:k]
        if number == 0:
            ranked.append([chunk_ids[i] for i in best])
        else:
            ranked.append([(chunk_ids[i], float(overlap[i])) for i in best])
    return ranked
"""


@pytest.fixture
def search_module(tmp_path, monkeypatch):
    # a package name of its own per test: Python keeps imported modules for the session
    name = "team_" + re.sub(r"\W", "_", tmp_path.name)
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "search.py").write_text(textwrap.dedent(SEARCH_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}.search:search"


def test_external_callable_is_scored_on_chunks_and_on_documents(search_module):
    corpus = small_corpus()
    params = retrievers_params(
        dense={"enabled": False},
        bm25={"enabled": False},
        ann={"enabled": False},
        hybrid={"enabled": False},
        external={"enabled": True, "callable": search_module},
    )
    retrievers = build_retrievers(params, corpus)
    texts = ["red apples", "autumn pears"]
    on_chunks = rank_all(retrievers, chunk_queries(texts, np.zeros((2, 8))), depth=3)["external"]
    assert listed_ids(on_chunks) == [["d0#0", "d2#1", "d1#1"], ["d0#1", "d1#1", "d2#0"]]
    assert on_chunks.found.scores[1].tolist() == [2.0, 1.0, 1.0]
    assert on_chunks.found.scores[0].tolist() == pytest.approx([1, 1 / 2, 1 / 3])
    queries = document_queries(texts, np.zeros((2, 8)))
    run = rank_all(retrievers, queries, 6)["external"]
    on_documents = as_documents(corpus, queries).project(run, 3, "external")
    assert on_documents.indices.tolist() == [[0, 2, 1], [0, 1, 2]]


def test_external_callable_errors_are_one_clear_line(search_module, tmp_path):
    corpus = small_corpus()
    package = search_module.split(".")[0]
    (tmp_path / package / "bad.py").write_text(
        "def search(q, ids, texts, k):\n    return [['nope'] for _ in q]\n"
    )
    queries = chunk_queries(["red"], np.zeros((1, 8)))
    for spec, message in [
        (f"{package}.bad:search", "unknown chunk id 'nope'"),
        (f"{package}.bad:missing", "has no function 'missing'"),
        (f"{package}.nothing:search", f"cannot import '{package}.nothing'"),
    ]:
        params = retrievers_params(
            hybrid={"enabled": False}, external={"enabled": True, "callable": spec}
        )
        with pytest.raises(GoldensetError, match=message):
            rank_all(build_retrievers(params, corpus), queries, depth=3)


def test_external_run_file_ranks_like_trec_eval(tmp_path):
    corpus = small_corpus()
    run = tmp_path / "run.trec"
    run.write_text(
        "q0 Q0 d2#1 1 3.5 team\n"
        "q0 Q0 d0#0 2 1.25 team\n"
        "q0 Q0 d1#0 3 1.25 team\n"  # tied with d0#0: trec_eval ranks the higher id first
        "q1 Q0 d0#1 1 0.5 team\n"
        "r0 Q0 d1 1 2.0 team\n"  # a real query: document ids
        "r0 Q0 d0 2 1.0 team\n"
    )
    params = retrievers_params(
        hybrid={"enabled": False}, external={"enabled": True, "run_file": str(run)}
    )
    retrievers = build_retrievers(params, corpus)
    texts = ["a", "b", "c"]
    on_chunks = rank_all(retrievers, chunk_queries(texts, np.zeros((3, 8))), depth=3)["external"]
    assert listed_ids(on_chunks) == [["d2#1", "d1#0", "d0#0"], ["d0#1", None, None], [None] * 3]
    assert on_chunks.found.scores[0].tolist() == [3.5, 1.25, 1.25]
    queries = document_queries(["x"], np.zeros((1, 8)))
    run = rank_all(retrievers, queries, 3)["external"]
    assert as_documents(corpus, queries).project(run, 3, "external").indices.tolist() == [
        [1, 0, -1]
    ]
    # a query set with no query in the file is not scored by it
    other = Queries("real", ["elsewhere"], ["x"], np.zeros((1, 8)))
    assert "external" not in rank_all(retrievers, other, 3)


def test_external_run_file_naming_unknown_items_says_which_ids_it_needs(tmp_path):
    run = tmp_path / "run.trec"
    # a golden-set question's chunk id beside a document id
    run.write_text("q0 Q0 d1#0 1 2.0 team\nq0 Q0 d0 2 1.0 team\n")
    params = retrievers_params(
        hybrid={"enabled": False}, external={"enabled": True, "run_file": str(run)}
    )
    corpus = small_corpus()
    queries = chunk_queries(["a"], np.zeros((1, 8)))
    ranked = rank_all(build_retrievers(params, corpus), queries, 3)["external"]
    message = "retrievers.external ranks unknown item id 'd0'.*synthetic queries rank chunk ids"
    with pytest.raises(GoldensetError, match=message):
        as_chunks(corpus, queries).project(ranked, 3, "retrievers.external")
    run.write_text("q0 Q0 d0\n")
    with pytest.raises(GoldensetError, match="run.trec:1: expected 'qid Q0 docid rank score tag'"):
        rank_all(build_retrievers(params, corpus), queries, 3)


def test_external_needs_exactly_one_source():
    with pytest.raises(GoldensetError, match="exactly one of callable"):
        retrievers_params(external={"enabled": True})
    with pytest.raises(GoldensetError, match="retrievers.external.callable"):
        retrievers_params(external={"enabled": True, "callable": "no colon"})


def test_dense_is_the_exact_reference():
    corpus = small_corpus()
    queries = chunk_queries(["x"], corpus.vectors[[2]])
    assert listed_ids(Dense(corpus).rank(queries, 2))[0][0] == corpus.chunk_ids[2]


def test_ann_without_dense_has_dense_ranked_as_its_reference():
    """dense (exact search) gives recall_loss its reference even when it is off: it is built as
    a reference, ranked, and never scored."""
    corpus = small_corpus()
    params = retrievers_params(
        dense={"enabled": False}, hybrid={"enabled": False}, ann={"enabled": True}
    )
    built = build_retrievers(params, corpus)
    references = build_references(params, corpus, built)
    assert "dense" not in built and list(references) == ["dense"]
    assert build_references(retrievers_params(hybrid={"enabled": False}), corpus, {}) == {}


def test_a_run_file_of_documents_has_no_run_of_their_chunks(tmp_path):
    """A run file ranks the ids it holds: read as the chunks of a set judged per document (for
    its contexts), it names none of them, so that set gets no context view from it; a
    golden-set run file of document ids is not scored on the golden set either."""
    run = tmp_path / "run.trec"
    run.write_text("q0 Q0 d1 1 2.0 team\nr0 Q0 d1 1 2.0 team\nr0 Q0 d0 2 1.0 team\n")
    params = retrievers_params(
        hybrid={"enabled": False}, external={"enabled": True, "run_file": str(run)}
    )
    corpus = small_corpus()
    retrievers = build_retrievers(params, corpus, names=["external"])
    assert list(retrievers) == ["external"]
    documents = document_queries(["x"], np.zeros((1, 8)))
    ranked = rank_all(retrievers, documents, 3)["external"]
    read = as_documents(corpus, documents).project(ranked, 3, "external")
    assert read.indices.tolist() == [[1, 0, -1]]
    assert as_chunks(corpus, documents).project(ranked, 3, "external") is None
    golden = chunk_queries(["a"], np.zeros((1, 8)))
    ranked = rank_all(retrievers, golden, 3)["external"]
    assert as_chunks(corpus, golden).project(ranked, 3, "external") is None
