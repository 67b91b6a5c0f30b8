"""Errors a user can act on, from embed and score: one line, which param or file to fix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from goldenset.core.vectors import write_vectors
from tests.stage_runs import assert_one_line_error, run_stage


def small_project(
    folder: Path, qrels_rows: list[tuple[str, str, float, str]], ks: str = "[1, 3]"
) -> Path:
    """Three chunks of two documents, their vectors, and one real query as ingest wrote it."""
    chunks = pd.DataFrame(
        {
            "chunk_id": ["a#0", "a#1", "b#0"],
            "doc_id": ["a", "a", "b"],
            "start": [0, 10, 0],
            "end": [9, 20, 9],
            "text": ["red apple", "green pear", "blue plum"],
        }
    )
    (folder / "data").mkdir(parents=True)
    documents = pd.DataFrame({"doc_id": ["a", "b"], "text": ["red apple green pear", "blue plum"]})
    documents.to_parquet(folder / "data/documents.parquet", index=False)
    chunks.to_parquet(folder / "data/chunks.parquet", index=False)
    (folder / "data/goldenset.jsonl").write_text("")
    qids = ["q1"] if qrels_rows else []
    queries = pd.DataFrame({"qid": qids, "text": ["pear"] * len(qids)}, dtype=str)
    queries.to_parquet(folder / "data/queries.parquet", index=False)
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "doc_id", "grade", "absent"])
    qrels.astype({"grade": float}).to_parquet(folder / "data/qrels.parquet", index=False)
    queries.iloc[:0].to_parquet(folder / "data/labelled.parquet", index=False)
    evidence = pd.DataFrame({"qid": [], "doc_id": [], "start": [], "end": []})
    evidence.to_parquet(folder / "data/labelled_evidence.parquet", index=False)
    vectors = np.eye(3, dtype=np.float32)
    write_vectors(folder / "data/embeddings", "chunks", chunks["chunk_id"].tolist(), vectors)
    write_vectors(folder / "data/embeddings", "real", ["q1"], vectors[1:2])
    write_vectors(folder / "data/embeddings", "synthetic", [], np.zeros((0, 3), np.float32))
    # two documents: every chance level is high, and not what these tests are about
    (folder / "params.yaml").write_text(
        f"score:\n  ks: {ks}\n  headline: [recall@1, mrr]\n  max_chance: 1.0\n"
    )
    return folder


def test_k_larger_than_the_corpus_warns_and_scores(tmp_path):
    project = small_project(tmp_path, [("q1", "a", 1, "")], ks="[1, 10]")
    process = run_stage("score", project)
    assert process.returncode == 0, process.stderr
    assert "warning: real has 2 items, fewer than k=10" in process.stderr
    # the answers' folder, a DVC output, is never empty: DVC warns of an empty one
    assert (project / "cache/retrievers/README.md").is_file()
    scores = json.loads((project / "metrics/scores.json").read_text())
    detail = json.loads((project / "metrics/detail.json").read_text())
    assert scores["real"]["dense"]["recall@1"] == 1.0
    assert detail["real"]["hybrid"]["recall@10"] == 1.0
    results = pd.read_parquet(project / "data/results.parquet")
    dense_real = results[(results.query_set == "real") & (results.retriever == "dense")]
    assert dense_real["top_ids"].iloc[0].tolist() == ["a", "b"]


@pytest.mark.slow
def test_unknown_embedding_model_is_one_line(tmp_path):
    project = small_project(tmp_path, [("q1", "a", 1, "")])
    (project / "params.yaml").write_text("embed:\n  model: no-such-org/no-such-model\n")
    assert_one_line_error(run_stage("embed", project), "embed.model", "no-such-org/no-such-model")


def test_nothing_to_score_is_one_line(tmp_path):
    project = small_project(tmp_path, [])
    process = run_stage("score", project)
    assert process.returncode == 1 and "Traceback" not in process.stderr
    # the notice, then the error
    notice, error = process.stderr.strip().splitlines()
    assert notice == "no real queries: scoring the golden set only"
    assert error.startswith("error: score: nothing to score") and "generate.max_questions" in error


def test_a_judged_document_skipped_at_ingest_counts_as_missed_with_one_warning(tmp_path):
    project = small_project(tmp_path, [("q1", "a", 1, ""), ("q1", "gone", 1, "empty")], "[1, 2]")
    process = run_stage("score", project)
    assert process.returncode == 0, process.stderr
    warnings = [line for line in process.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: 1 judged documents were skipped at ingest (1 empty): they count as relevant "
        "and never retrieved, as trec_eval counts them"
    ]
    detail = json.loads((project / "metrics/detail.json").read_text())
    # a found, gone never: recall 1/2 at every k, as trec_eval (tests/scoring/test_relevance.py)
    assert detail["real"]["dense"]["recall@2"] == 0.5
    assert detail["real"]["dense"]["hit@1"] == 1.0
