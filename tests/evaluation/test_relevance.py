"""Evidence spans become chunk judgments under any chunking; real qrels become document rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.sparse import csr_array

from goldenset.core.ranked import rank_run
from goldenset.core.topk import top_k
from goldenset.corpus.queries import golden_evidence
from goldenset.evaluation.ranking import evaluate
from goldenset.evaluation.relevance import (
    collapse_items,
    document_qrels,
    evidence_qrels,
    group_starts,
    text_classes,
)
from goldenset.retrieval.retrievers.dense import DenseScores
from tests.evaluation.test_ranking import TREC_NAMES, trec_eval_scores


def chunks_of(spans: dict[str, list[tuple[int, int]]]) -> pd.DataFrame:
    rows = [
        {"chunk_id": f"{doc}#{i}", "doc_id": doc, "start": s, "end": e}
        for doc, doc_spans in spans.items()
        for i, (s, e) in enumerate(doc_spans)
    ]
    return pd.DataFrame(rows)


def question(doc_id: str, start: int, end: int) -> dict:
    return {
        "qid": f"gs-{doc_id}-{start}",
        "doc_id": doc_id,
        "evidence_start": start,
        "evidence_end": end,
    }


def relevant_chunks(
    questions: list[dict], chunks: pd.DataFrame, min_overlap: float = 0.5
) -> list[list[str]]:
    golden = pd.DataFrame(questions)
    evidence = golden_evidence(golden)
    qrels = evidence_qrels(golden["qid"].tolist(), evidence, chunks, min_overlap).toarray()
    ids = chunks["chunk_id"].to_numpy()
    return [ids[row > 0].tolist() for row in qrels]


def test_chunk_covering_the_evidence_is_relevant_in_its_own_document_only():
    chunks = chunks_of({"a": [(0, 100), (100, 200)], "b": [(0, 100), (100, 200)]})
    assert relevant_chunks([question("b", 120, 180)], chunks) == [["b#1"]]


def test_evidence_split_across_chunks_counts_each_covering_enough():
    chunks = chunks_of({"a": [(0, 100), (100, 200), (200, 300)]})
    assert relevant_chunks([question("a", 90, 150)], chunks) == [["a#1"]]  # 10/60 and 50/60
    assert relevant_chunks([question("a", 50, 150)], chunks) == [["a#0", "a#1"]]  # half each


def test_chunks_finer_than_the_evidence_are_relevant_when_inside_it():
    chunks = chunks_of({"a": [(0, 10), (10, 20), (20, 30), (30, 40)]})
    assert relevant_chunks([question("a", 5, 40)], chunks) == [["a#1", "a#2", "a#3"]]


def test_best_covering_chunk_counts_when_none_reaches_min_overlap():
    chunks = chunks_of({"a": [(0, 100), (100, 200)]})
    assert relevant_chunks([question("a", 40, 200)], chunks, min_overlap=0.9) == [["a#1"]]


def test_one_chunk_per_passage_reduces_to_one_gold_chunk():
    chunks = chunks_of({"a": [(0, 50), (51, 120)], "b": [(0, 80)]})
    questions = [question("a", 0, 50), question("a", 51, 120), question("b", 0, 80)]
    assert relevant_chunks(questions, chunks) == [["a#0"], ["a#1"], ["b#0"]]


def test_several_spans_in_several_documents_judge_one_question():
    chunks = chunks_of({"a": [(0, 100), (100, 200)], "b": [(0, 50), (50, 120)]})
    evidence = pd.DataFrame(
        {"qid": ["q", "q", "q", "r"], "doc_id": ["a", "b", "a", "b"], "start": [10, 60, 20, 0]}
    ).assign(end=[90, 110, 80, 40])
    qrels = evidence_qrels(["q", "other"], evidence, chunks, 0.5).toarray()
    ids = chunks["chunk_id"].to_numpy()
    # one row per question of `qids`, in that order; a span of another question is ignored
    assert [ids[row > 0].tolist() for row in qrels] == [["a#0", "b#1"], []]
    assert qrels.max() == 1.0  # two spans in one chunk judge it once


def test_each_span_gets_its_best_chunk_when_none_reaches_min_overlap():
    chunks = chunks_of({"a": [(0, 100), (100, 200), (200, 300)]})
    evidence = pd.DataFrame({"qid": ["q", "q"], "doc_id": ["a", "a"], "start": [40, 180]})
    qrels = evidence_qrels(["q"], evidence.assign(end=[140, 300]), chunks, 0.9).toarray()
    assert qrels.tolist() == [[1.0, 0.0, 1.0]]  # 60/100 of the first, 100/120 of the second


def test_document_judgments_follow_the_chunk_groups():
    chunks = chunks_of({"a": [(0, 10), (10, 20)], "b": [(0, 10)], "c": [(0, 5), (5, 9), (9, 12)]})
    starts = group_starts(chunks["doc_id"])
    np.testing.assert_array_equal(starts, [0, 2, 3])
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "doc_id": ["a", "c", "b"], "grade": [1, 2, 1]})
    by_doc = document_qrels(pd.Series(["q1", "q2"]), qrels, ["a", "b", "c"])
    np.testing.assert_array_equal(by_doc.toarray(), [[1, 0, 2], [0, 1, 0]])


def test_a_judged_document_absent_from_the_corpus_is_missed_as_in_trec_eval():
    """trec_eval counts every judged relevant document, retrieved or not."""
    doc_order = ["a", "b", "c", "d"]
    judged = {"q1": {"b": 1, "gone": 1}, "q2": {"gone": 2}, "q3": {"c": 2, "a": 1, "gone": 1}}
    qrels = pd.DataFrame(
        [(q, d, g) for q, docs in judged.items() for d, g in docs.items()],
        columns=["qid", "doc_id", "grade"],
    )
    run = {
        "q1": {"a": 0.9, "b": 0.8, "c": 0.1, "d": 0.0},
        "q2": {"a": 0.5, "b": 0.4, "c": 0.3, "d": 0.2},
        "q3": {"c": 0.7, "b": 0.6, "a": 0.5, "d": 0.4},
    }
    qids = list(judged)
    by_doc = document_qrels(pd.Series(qids), qrels, doc_order)
    assert by_doc.shape == (3, 5)  # "gone" is a column after the documents
    ks = [1, 2, 3, 10]
    ours = evaluate(rank_run(run, doc_order, query_ids=qids), by_doc, ks)
    trec = trec_eval_scores(judged, run, ks)
    assert ours["query"].tolist() == [0, 1, 2]
    for position, qid in enumerate(qids):
        for k in ks:
            for our_name, trec_name in TREC_NAMES.items():
                assert ours[our_name.format(k=k)][position] == pytest.approx(
                    trec[qid][trec_name.format(k=k)], abs=1e-9
                ), (qid, our_name.format(k=k))
    assert ours["recall@10"].tolist() == [0.5, 0.0, pytest.approx(2 / 3)]


def test_chunks_of_equal_text_are_one_item_and_rank_as_without_the_copy():
    texts = ["alpha", "beta", "gamma", "delta"]
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((4, 8)).astype(np.float32)
    queries = rng.standard_normal((6, 8)).astype(np.float32)
    # the corpus with copies of beta and delta (spacing and case differ) at the front
    copy_texts = ["  BETA ", "delta", *texts]
    copy_vectors = np.vstack([vectors[1], vectors[3], vectors])
    assert text_classes(pd.Series(texts)) is None
    classes = text_classes(pd.Series(copy_texts))
    np.testing.assert_array_equal(classes.of_chunk, [0, 1, 2, 0, 3, 1])
    np.testing.assert_array_equal(classes.first, [0, 1, 2, 4])
    plain = top_k(DenseScores(queries, vectors), 4)
    grouped = top_k(DenseScores(queries, copy_vectors[classes.order]), 4, groups=classes.starts)
    # class c is text ["beta", "delta", "alpha", "gamma"][c]: the same ranking, renamed
    as_text = np.array(["beta", "delta", "alpha", "gamma"])
    np.testing.assert_array_equal(as_text[grouped.indices], np.array(texts)[plain.indices])
    np.testing.assert_allclose(grouped.scores, plain.scores)
    # a question about alpha's copy-free chunk, one about the second copy of beta
    qrels = csr_array(np.array([[0, 0, 1, 0, 0, 0, 1], [0, 0, 0, 2, 0, 0, 0]], dtype=float))
    collapsed = collapse_items(qrels, classes.of_chunk, 4)  # column 6: judged, absent
    np.testing.assert_array_equal(collapsed.toarray(), [[0, 0, 1, 0, 1], [2, 0, 0, 0, 0]])
