"""Evidence spans become chunk judgments under any chunking; real qrels become document rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from goldenset.relevance import (
    document_qrels,
    evidence_qrels,
    group_starts,
)


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
    qrels = evidence_qrels(pd.DataFrame(questions), chunks, min_overlap).toarray()
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


def test_document_judgments_follow_the_chunk_groups():
    chunks = chunks_of({"a": [(0, 10), (10, 20)], "b": [(0, 10)], "c": [(0, 5), (5, 9), (9, 12)]})
    starts = group_starts(chunks["doc_id"])
    np.testing.assert_array_equal(starts, [0, 2, 3])
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "doc_id": ["a", "c", "b"], "grade": [1, 2, 1]})
    by_doc = document_qrels(pd.Series(["q1", "q2"]), qrels, ["a", "b", "c"])
    np.testing.assert_array_equal(by_doc.toarray(), [[1, 0, 2], [0, 1, 0]])
