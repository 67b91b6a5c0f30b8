"""goldenset.evaluation.ranking against hand-computed values and against trec_eval (pytrec_eval)."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import rank_run
from goldenset.core.topk import top_k
from goldenset.evaluation.measures import MEASURES
from goldenset.evaluation.ranking import (
    evaluate,
    hit_at_k,
    ideal_gains,
    judged_gains,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    relevant_counts,
)
from goldenset.retrieval.retrievers.lexical import BM25Scores
from tests.conftest import SHARED_DATASETS
from tests.support.metrics import mean_metrics

SCIFACT = SHARED_DATASETS / "scifact"

# every measure declared with a trec_eval reference (recall_k, recip_rank, ...) is checked
# against it: the declaration's reference is what the metric table of docs/reading-results.md states
REFERENCED = [measure for measure in MEASURES.values() if measure.reference]


def our_and_trec_names(ks: list[int]) -> list[tuple[str, str]]:
    """(our metric name, trec_eval's key) for every referenced measure and k."""
    names = []
    for measure in REFERENCED:
        if measure.parameter == "k":
            stem = measure.reference.removesuffix("_k")
            names += [(f"{measure.name}@{k}", f"{stem}_{k}") for k in ks]
        else:
            names.append((measure.name, measure.reference))
    return names


# our name -> trec_eval's, with a {k} to fill: the cutoff measures, for tests elsewhere
TREC_NAMES = {
    f"{measure.name}@{{k}}": measure.reference.removesuffix("_k") + "_{k}"
    for measure in REFERENCED
    if measure.parameter == "k"
}


def qrels_matrix(grades: list[dict[int, float]], n_items: int) -> sparse.csr_array:
    rows = [row for row, judged in enumerate(grades) for _ in judged]
    columns = [item for judged in grades for item in judged]
    values = [grade for judged in grades for grade in judged.values()]
    return sparse.csr_array(
        (np.array(values, dtype=np.float64), (rows, columns)), shape=(len(grades), n_items)
    )


# --- hand-computed cases -----------------------------------------------------------------------


def test_one_relevant_item_at_rank_two():
    ranked = np.array([[4, 2, 7, -1]])
    qrels = qrels_matrix([{2: 1.0}], n_items=8)
    gains = judged_gains(ranked, qrels)
    assert gains.tolist() == [[0.0, 1.0, 0.0, 0.0]]
    assert recall_at_k(gains, relevant_counts(qrels), 1).tolist() == [0.0]
    assert recall_at_k(gains, relevant_counts(qrels), 2).tolist() == [1.0]
    assert hit_at_k(gains, 1).tolist() == [0.0]
    assert hit_at_k(gains, 3).tolist() == [1.0]
    assert reciprocal_rank(gains).tolist() == [0.5]
    assert precision_at_k(gains, 4).tolist() == [0.25]
    # DCG = 1/log2(3), ideal DCG = 1/log2(2) = 1.
    ndcg = ndcg_at_k(gains, ideal_gains(qrels, 10), 10)
    assert ndcg[0] == pytest.approx(1 / math.log2(3))


def test_graded_gains_and_ideal_order():
    # Grades: item 0 -> 3, item 1 -> 1, item 2 -> -2 (harmful, no gain), item 3 -> 2.
    qrels = qrels_matrix([{0: 3.0, 1: 1.0, 2: -2.0, 3: 2.0}], n_items=5)
    assert relevant_counts(qrels).tolist() == [3]
    assert ideal_gains(qrels, 2).tolist() == [[3.0, 2.0]]
    assert ideal_gains(qrels, 5).tolist() == [[3.0, 2.0, 1.0, 0.0, 0.0]]
    ranked = np.array([[2, 1, 0, 4]])
    gains = judged_gains(ranked, qrels)
    assert gains.tolist() == [[0.0, 1.0, 3.0, 0.0]]
    dcg = 1 / math.log2(3) + 3 / math.log2(4)
    ideal = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(gains, ideal_gains(qrels, 3), 3)[0] == pytest.approx(dcg / ideal)
    assert recall_at_k(gains, relevant_counts(qrels), 3)[0] == pytest.approx(2 / 3)


def test_queries_without_relevant_items_are_nan_per_metric_and_dropped_by_evaluate():
    qrels = qrels_matrix([{1: 1.0}, {0: 0.0}, {}], n_items=3)
    ranked = np.array([[1, 0], [0, 1], [2, -1]])
    gains = judged_gains(ranked, qrels)
    counts = relevant_counts(qrels)
    assert np.isnan(recall_at_k(gains, counts, 1)[1:]).all()
    assert np.isnan(ndcg_at_k(gains, ideal_gains(qrels, 1), 1)[1:]).all()
    result = evaluate(ranked, qrels, ks=[1, 2])
    assert result["query"].tolist() == [0]
    assert result["n_relevant"].tolist() == [1]
    assert ranked.shape[0] - len(result["query"]) == 2
    means = mean_metrics(result)
    assert "query" not in means and "n_relevant" not in means
    assert means == {
        "recall@1": 1.0,
        "hit@1": 1.0,
        "ndcg@1": 1.0,
        "precision@1": 1.0,
        "recall@2": 1.0,
        "hit@2": 1.0,
        "ndcg@2": 1.0,
        "precision@2": 0.5,
        "mrr": 1.0,
    }


def test_run_shorter_than_k_and_empty_run():
    qrels = qrels_matrix([{0: 1.0, 1: 1.0}, {2: 1.0}], n_items=3)
    ranked = np.array([[1, -1], [-1, -1]])
    result = evaluate(ranked, qrels, ks=[5])
    assert result["recall@5"].tolist() == [0.5, 0.0]
    assert result["precision@5"].tolist() == [0.2, 0.0]
    assert result["mrr"].tolist() == [1.0, 0.0]
    assert result["ndcg@5"][1] == 0.0


def test_mean_of_no_queries_is_nan():
    result = evaluate(np.zeros((1, 1), dtype=np.int64), qrels_matrix([{}], 1), ks=[1])
    assert len(result["query"]) == 0
    assert all(math.isnan(value) for value in mean_metrics(result).values())


def test_unsorted_csr_with_duplicates_is_read_without_being_changed():
    # Row 0 stores items 3 then 1 (unsorted), and item 3 twice (grades add up to 2).
    qrels = sparse.csr_array(
        (np.array([1.0, 1.0, 1.0]), np.array([3, 1, 3]), np.array([0, 3])), shape=(1, 4)
    )
    assert judged_gains(np.array([[3, 1, 0]]), qrels).tolist() == [[2.0, 1.0, 0.0]]
    assert ideal_gains(qrels, 2).tolist() == [[2.0, 1.0]]
    assert qrels.indices.tolist() == [3, 1, 3]


def test_bad_shapes_are_rejected():
    qrels = qrels_matrix([{0: 1.0}], n_items=2)
    with pytest.raises(ValueError, match="shape"):
        judged_gains(np.array([[0], [1]]), qrels)
    with pytest.raises(ValueError, match="item index 5"):
        judged_gains(np.array([[5]]), qrels)
    with pytest.raises(ValueError, match="ks"):
        evaluate(np.array([[0]]), qrels, ks=[0])


# --- rank_run: trec_eval's ordering --------------------------------------------------------------


def test_rank_run_breaks_ties_by_descending_item_id_like_trec_eval():
    items = ["10", "9", "a", "B", "z"]
    run = {"q": {"a": 1.0, "B": 1.0, "z": 1.0, "10": 1.0, "9": 1.0}}
    ranked = rank_run(run, items)
    # Descending byte order: "z" > "a" > "B" > "9" > "10".
    assert [items[i] for i in ranked[0]] == ["z", "a", "B", "9", "10"]
    # trec_eval agrees: with only "10" relevant, it sits at rank 5.
    trec = pytrec_eval.RelevanceEvaluator({"q": {"10": 1}}, {"recip_rank"}).evaluate(run)
    assert trec["q"]["recip_rank"] == pytest.approx(1 / 5)


def test_rank_run_orders_by_score_then_cuts_and_pads():
    run = {"q1": {"a": 0.1, "b": 0.9, "c": 0.5}, "q2": {"c": 2.0}}
    assert rank_run(run, ["a", "b", "c"]).tolist() == [[1, 2, 0], [2, -1, -1]]
    assert rank_run(run, ["a", "b", "c"], query_ids=["q2", "q3"], depth=2).tolist() == [
        [2, -1],
        [-1, -1],
    ]


def test_rank_run_rejects_unknown_item():
    with pytest.raises(GoldensetError, match="unknown item id 'x'"):
        rank_run({"q": {"x": 1.0}}, ["a"])


# --- agreement with trec_eval --------------------------------------------------------------------


def trec_eval_scores(qrels: dict, run: dict, ks: list[int]) -> dict[str, dict[str, float]]:
    cut = ",".join(str(k) for k in ks)
    measures = {
        f"{m.reference.removesuffix('_k')}.{cut}" if m.parameter == "k" else m.reference
        for m in REFERENCED
    }
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def assert_agrees_with_trec_eval(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    item_ids: list[str],
    ks: list[int],
) -> int:
    """Compare every metric of every query with a relevant item; returns how many were compared."""
    query_ids = list(qrels)
    index = {item: position for position, item in enumerate(item_ids)}
    matrix = qrels_matrix(
        [{index[item]: float(grade) for item, grade in qrels[q].items()} for q in query_ids],
        len(item_ids),
    )
    ranked = rank_run(run, item_ids, query_ids=query_ids)
    ours = evaluate(ranked, matrix, ks)
    trec = trec_eval_scores(qrels, {q: run.get(q, {}) for q in query_ids}, ks)
    for position, row in enumerate(ours["query"]):
        expected = trec[query_ids[row]]
        for our_name, trec_name in our_and_trec_names(ks):
            assert ours[our_name][position] == pytest.approx(expected[trec_name], abs=1e-9), (
                query_ids[row],
                our_name,
            )
    # trec_eval counts relevance from grade 1, like our "> 0" for integer grades.
    assert set(ours["query"].tolist()) == {
        i for i, q in enumerate(query_ids) if any(g > 0 for g in qrels[q].values())
    }
    return len(ours["query"])


def random_collection(rng: np.random.Generator, graded: bool, tied: bool):
    n_items = int(rng.integers(3, 60))
    # Ids of varied length and case, so that the id tie-break is really exercised.
    alphabet = list("abcXYZ0129")
    item_ids = sorted(
        {"".join(rng.choice(alphabet, size=rng.integers(1, 4))) for _ in range(n_items)}
    )
    rng.shuffle(item_ids)
    grades = [-1, 0, 1, 2, 3] if graded else [-1, 0, 1]
    qrels, run = {}, {}
    for q in range(int(rng.integers(1, 8))):
        judged = rng.choice(item_ids, size=rng.integers(0, len(item_ids) + 1), replace=False)
        qrels[f"q{q}"] = {str(item): int(rng.choice(grades)) for item in judged}
        # Any items, judged or not; some relevant ones are never retrieved.
        returned = rng.choice(item_ids, size=rng.integers(0, len(item_ids) + 1), replace=False)
        scores = rng.integers(0, 4, returned.size) if tied else rng.standard_normal(returned.size)
        run[f"q{q}"] = {
            str(item): float(score) for item, score in zip(returned, scores, strict=True)
        }
    ks = sorted({int(k) for k in rng.integers(1, 70, size=3)} | {1})
    return qrels, run, item_ids, ks


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
@pytest.mark.parametrize("tied", [False, True], ids=["distinct", "ties"])
def test_random_runs_agree_with_trec_eval(graded, tied):
    rng = np.random.default_rng(1234 + 2 * graded + tied)
    compared = 0
    for _ in range(150):
        compared += assert_agrees_with_trec_eval(*random_collection(rng, graded, tied))
    assert compared > 300  # the comparison really happened on many queries


@st.composite
def collections(draw):
    item_ids = draw(
        st.lists(st.text("aB9z", min_size=1, max_size=3), min_size=1, max_size=12, unique=True)
    )
    qrels, run = {}, {}
    for q in range(draw(st.integers(1, 4))):
        qrels[f"q{q}"] = draw(st.dictionaries(st.sampled_from(item_ids), st.integers(-1, 3)))
        run[f"q{q}"] = draw(
            st.dictionaries(st.sampled_from(item_ids), st.sampled_from([0.0, 0.5, 1.0, 2.5]))
        )
    ks = draw(st.lists(st.integers(1, 15), min_size=1, max_size=3, unique=True))
    return qrels, run, item_ids, sorted(ks)


@settings(max_examples=150, deadline=None)
@given(collections())
def test_generated_runs_agree_with_trec_eval(collection):
    assert_agrees_with_trec_eval(*collection)


# --- a real run: BM25 on SciFact -----------------------------------------------------------------


def load_scifact():
    with gzip.open(SCIFACT / "corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        corpus = [json.loads(line) for line in lines]
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as lines:
        # Only the text: the metadata carries the answers.
        queries = {row["_id"]: row["text"] for row in map(json.loads, lines)}
    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, grade = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return corpus, queries, qrels


@pytest.mark.skipif(not SCIFACT.exists(), reason="shared SciFact dataset not available")
def test_real_bm25_run_on_scifact_agrees_with_trec_eval():
    corpus, queries, qrels = load_scifact()
    item_ids = [doc["_id"] for doc in corpus]
    query_ids = list(qrels)
    source = BM25Scores(
        [f"{doc['title']} {doc['text']}" for doc in corpus], [queries[q] for q in query_ids]
    )
    best = top_k(source, 100)
    run = {
        q: {item_ids[i]: float(s) for i, s in zip(best.indices[row], best.scores[row], strict=True)}
        for row, q in enumerate(query_ids)
    }
    assert assert_agrees_with_trec_eval(qrels, run, item_ids, [1, 3, 5, 10, 100]) == len(qrels)
    # A sanity floor for BM25 on SciFact (published BM25 nDCG@10 is about 0.66).
    ndcg = trec_eval_scores(qrels, run, [10])
    assert np.mean([scores["ndcg_cut_10"] for scores in ndcg.values()]) > 0.55
