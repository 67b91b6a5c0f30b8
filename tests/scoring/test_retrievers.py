"""goldenset.scoring.retrievers: hybrid fusion, faiss ANN and its recall loss, external
retrievers."""

from __future__ import annotations

import re
import textwrap
from dataclasses import replace

import numpy as np
import pytest
from scipy.sparse import csr_array

from goldenset.core.errors import GoldensetError
from goldenset.params import parse_params
from goldenset.scoring.ranked import ItemJudgments
from goldenset.scoring.retriever_params import RetrieversParams
from goldenset.scoring.retrievers import (
    RETRIEVERS,
    Corpus,
    Queries,
    RankingContext,
    build_retrievers,
    rank_all,
)
from goldenset.scoring.retrievers.ann import ANNParams, recall_loss
from goldenset.scoring.retrievers.dense import Dense
from goldenset.scoring.retrievers.fusion import reciprocal_rank_fusion
from goldenset.scoring.topk import TopK, to_groups

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


def chunk_queries(corpus: Corpus, texts: list[str], vectors: np.ndarray) -> Queries:
    qids = [f"q{i}" for i in range(len(texts))]
    qrels = csr_array(np.ones((len(texts), len(corpus.chunk_ids))))
    return Queries(ItemJudgments("synthetic", qids, qrels, corpus.chunk_ids), texts, vectors)


def document_queries(corpus: Corpus, texts: list[str], vectors: np.ndarray) -> Queries:
    """Documents d0, d1, d2 of two chunks each."""
    qids = [f"r{i}" for i in range(len(texts))]
    qrels = csr_array(np.ones((len(texts), 3)))
    query_set = ItemJudgments("real", qids, qrels, ["d0", "d1", "d2"], np.array([0, 2, 4]))
    return Queries(query_set, texts, vectors)


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
    first = TopK(np.array([[3, 1, 2], [0, -1, -1]]), np.zeros((2, 3), np.float32))
    second = TopK(np.array([[1, 4, 3], [5, 0, -1]]), np.zeros((2, 3), np.float32))
    fused = reciprocal_rank_fusion([first, second], rrf_k=60, depth=4)
    # 1: 1/62 + 1/61; 3: 1/61 + 1/63; 2 and 4 once at rank 3 and 2; padding never counts
    assert fused.indices.tolist() == [[1, 3, 4, 2], [0, 5, -1, -1]]
    assert fused.scores[0, 0] == pytest.approx(1 / 62 + 1 / 61)
    assert fused.scores[1, 0] == pytest.approx(1 / 61 + 1 / 62)


def test_hybrid_fuses_the_lists_of_dense_and_bm25_on_one_score_run():
    corpus = small_corpus()
    queries = chunk_queries(
        corpus,
        ["red apples", "autumn pears", "sweet plums"],
        unit_rows(np.random.default_rng(1), 3, 8),
    )
    params = retrievers_params(
        ann={"enabled": False}, hybrid={"enabled": True, "fuse": ["bm25", "dense"], "rrf_k": 5}
    )
    ranked = rank_all(build_retrievers(params, corpus), queries, depth=4)
    assert list(ranked) == ["dense", "bm25", "hybrid"]
    for row in range(3):
        lists = [[i for i in ranked[name].indices[row] if i >= 0] for name in ("bm25", "dense")]
        expected = rrf_by_hand(lists, rrf_k=5)[:4]
        assert ranked["hybrid"].indices[row].tolist() == expected


def test_hybrid_of_disabled_retrievers_is_a_params_error():
    with pytest.raises(GoldensetError, match="hybrid.fuse names disabled retrievers"):
        retrievers_params(bm25={"enabled": False})


# --- ann -----------------------------------------------------------------------------------------


def exact_and_ann(params: ANNParams, groups: bool = False):
    rng = np.random.default_rng(7)
    items, query_vectors = unit_rows(rng, 3000, 32), unit_rows(rng, 200, 32)
    corpus = Corpus([f"d{i // 3}#{i % 3}" for i in range(3000)], [""] * 3000, items)
    if groups:
        qrels = csr_array(np.ones((200, 1000)))
        starts = np.arange(0, 3000, 3)
        query_set = ItemJudgments("real", [f"q{i}" for i in range(200)], qrels, [""] * 1000, starts)
    else:
        qrels = csr_array(np.ones((200, 3000)))
        query_set = ItemJudgments(
            "synthetic", [f"q{i}" for i in range(200)], qrels, corpus.chunk_ids
        )
    queries = Queries(query_set, [""] * 200, query_vectors)
    retrievers = build_retrievers(retrievers_params(ann=params.model_dump()), corpus)
    ranked = rank_all(retrievers, queries, depth=10)
    return ranked["dense"], ranked["ann"]


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
    loss = recall_loss(ann, exact, [1, 10])
    # random vectors in 32 dimensions are hard for a small graph or one probed cluster
    assert 0.05 < loss["recall_loss@10"] < 1.0
    assert loss["recall_loss@10"] == pytest.approx(overlap_by_hand(ann, exact, 10))
    assert loss["recall_loss@1"] == pytest.approx(overlap_by_hand(ann, exact, 1))
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
    assert recall_loss(ann, exact, [10]) == {"recall_loss@10": 0.0}


def test_ann_ranks_documents_by_their_best_chunk():
    exact, ann = exact_and_ann(ANNParams(index="ivf", ivf_nlist=8, ivf_nprobe=8), groups=True)
    np.testing.assert_array_equal(ann.indices, exact.indices)
    assert ann.indices.max() < 1000


def test_to_groups_keeps_each_documents_best_chunk_in_rank_order():
    found = TopK(np.array([[5, 4, 1, 0, -1]]), np.array([[9, 8, 7, 6, -np.inf]], np.float32))
    grouped = to_groups(found, np.array([0, 2, 4]), depth=3)
    assert grouped.indices.tolist() == [[2, 0, -1]]
    assert grouped.scores[0, :2].tolist() == [9.0, 7.0]


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
    on_chunks = rank_all(retrievers, chunk_queries(corpus, texts, np.zeros((2, 8))), depth=3)
    ids = [[corpus.chunk_ids[i] for i in row] for row in on_chunks["external"].indices]
    assert ids == [["d0#0", "d2#1", "d1#1"], ["d0#1", "d1#1", "d2#0"]]
    assert on_chunks["external"].scores[1].tolist() == [2.0, 1.0, 1.0]
    assert on_chunks["external"].scores[0].tolist() == pytest.approx([1, 1 / 2, 1 / 3])
    on_documents = rank_all(retrievers, document_queries(corpus, texts, np.zeros((2, 8))), 3)
    assert on_documents["external"].indices.tolist() == [[0, 2, 1], [0, 1, 2]]


def test_external_callable_errors_are_one_clear_line(search_module, tmp_path):
    corpus = small_corpus()
    package = search_module.split(".")[0]
    (tmp_path / package / "bad.py").write_text(
        "def search(q, ids, texts, k):\n    return [['nope'] for _ in q]\n"
    )
    queries = chunk_queries(corpus, ["red"], np.zeros((1, 8)))
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
    on_chunks = rank_all(retrievers, chunk_queries(corpus, texts, np.zeros((3, 8))), depth=3)
    ids = [
        [corpus.chunk_ids[i] if i >= 0 else None for i in r] for r in on_chunks["external"].indices
    ]
    assert ids == [["d2#1", "d1#0", "d0#0"], ["d0#1", None, None], [None, None, None]]
    assert on_chunks["external"].scores[0].tolist() == [3.5, 1.25, 1.25]
    on_documents = rank_all(retrievers, document_queries(corpus, ["x"], np.zeros((1, 8))), 3)
    assert on_documents["external"].indices.tolist() == [[1, 0, -1]]
    # a query set with no query in the file is not scored by it
    other = document_queries(corpus, ["x"], np.zeros((1, 8)))
    other.judged.qids[0] = "elsewhere"
    assert "external" not in rank_all(retrievers, other, 3)


def test_external_run_file_naming_unknown_items_says_which_ids_it_needs(tmp_path):
    run = tmp_path / "run.trec"
    # a golden-set question's chunk id beside a document id
    run.write_text("q0 Q0 d1#0 1 2.0 team\nq0 Q0 d0 2 1.0 team\n")
    params = retrievers_params(
        hybrid={"enabled": False}, external={"enabled": True, "run_file": str(run)}
    )
    corpus = small_corpus()
    queries = chunk_queries(corpus, ["a"], np.zeros((1, 8)))
    with pytest.raises(GoldensetError, match="unknown item id 'd0'.*rank chunk ids"):
        rank_all(build_retrievers(params, corpus), queries, 3)
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
    queries = chunk_queries(corpus, ["x"], corpus.vectors[[2]])
    assert Dense(corpus).rank(queries, 2).indices[0, 0] == 2


def test_ann_without_dense_measures_its_loss_against_exact_search():
    """dense (exact search) gives recall_loss its reference even when it is off."""
    corpus = small_corpus()
    queries = chunk_queries(corpus, ["a", "b"], corpus.vectors[[1, 4]])
    entry = RETRIEVERS["ann"]
    settings = ANNParams(index="ivf", ivf_nlist=3, ivf_nprobe=1)
    approximate = entry.build(settings, corpus, "cpu", None).rank(queries, 4)
    exact = Dense(corpus).rank(queries, 4)
    alone = entry.extra_metrics(approximate, RankingContext(queries, corpus, {}, 4), [1, 4])
    assert alone == recall_loss(approximate, exact, [1, 4])


def test_a_run_file_of_documents_has_no_run_of_their_chunks(tmp_path):
    """A run file ranks the ids it holds: asked for the chunks of a set judged per document (for
    its contexts), it has no run of them, so that set gets no context view from it; a golden-set
    run file of document ids is not scored on the golden set either."""
    run = tmp_path / "run.trec"
    run.write_text("q0 Q0 d1 1 2.0 team\nr0 Q0 d1 1 2.0 team\nr0 Q0 d0 2 1.0 team\n")
    params = retrievers_params(
        hybrid={"enabled": False}, external={"enabled": True, "run_file": str(run)}
    )
    corpus = small_corpus()
    retrievers = build_retrievers(params, corpus, names=["external"])
    assert list(retrievers) == ["external"]
    documents = document_queries(corpus, ["x"], np.zeros((1, 8)))
    assert rank_all(retrievers, documents, 3)["external"].indices.tolist() == [[1, 0, -1]]
    their_chunks = Queries(
        replace(documents.judged, item_ids=corpus.chunk_ids, groups=None), ["x"], np.zeros((1, 8))
    )
    assert rank_all(retrievers, their_chunks, 3) == {}
    assert rank_all(retrievers, chunk_queries(corpus, ["a"], np.zeros((1, 8))), 3) == {}
