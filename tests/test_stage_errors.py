"""Errors a user can act on, from embed and score: one line, which param or file to fix."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.vectors import write_vectors
from tests.stages import assert_one_line_error, run_stage


def small_project(folder: Path, qrels_rows: list[str], ks: str = "[1, 3]") -> Path:
    """Three chunks of two documents, their vectors, and one real query."""
    chunks = pd.DataFrame(
        {
            "chunk_id": ["a#0", "a#1", "b#0"],
            "doc_id": ["a", "a", "b"],
            "start": [0, 10, 0],
            "end": [9, 20, 9],
            "text": ["red apple", "green pear", "blue plum"],
        }
    )
    (folder / "data" / "queries").mkdir(parents=True)
    chunks.to_parquet(folder / "data/chunks.parquet", index=False)
    (folder / "data/goldenset.jsonl").write_text("")
    queries = folder / "data/queries"
    (queries / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "pear"}) + "\n")
    (queries / "qrels.tsv").write_text(
        "\n".join(["query-id\tcorpus-id\tscore", *qrels_rows]) + "\n"
    )
    vectors = np.eye(3, dtype=np.float32)
    write_vectors(folder / "data/embeddings", "chunks", chunks["chunk_id"].tolist(), vectors)
    write_vectors(folder / "data/embeddings", "real", ["q1"], vectors[1:2])
    write_vectors(folder / "data/embeddings", "synthetic", [], np.zeros((0, 3), np.float32))
    (folder / "params.yaml").write_text(f"score:\n  ks: {ks}\n")
    return folder


def test_qrels_naming_unknown_documents_is_one_line(tmp_path):
    project = small_project(tmp_path, ["q1\ta\t1", "q1\tmissing-doc\t1"])
    assert_one_line_error(
        run_stage("score", project), "score.real_queries", "'missing-doc'", "ingest.path"
    )


def test_k_larger_than_the_corpus_warns_and_scores(tmp_path):
    project = small_project(tmp_path, ["q1\ta\t1"], ks="[1, 10]")
    process = run_stage("score", project)
    assert process.returncode == 0, process.stderr
    assert "warning: real has 2 items, fewer than k=10" in process.stderr
    scores = json.loads((project / "metrics/scores.json").read_text())
    assert scores["real"]["dense"]["recall@1"] == 1.0
    assert scores["real"]["hybrid"]["recall@10"] == 1.0
    results = pd.read_parquet(project / "data/results.parquet")
    dense_real = results[(results.query_set == "real") & (results.retriever == "dense")]
    assert dense_real["top_ids"].iloc[0].tolist() == ["a", "b"]


def test_unknown_embedding_model_is_one_line(tmp_path):
    project = small_project(tmp_path, ["q1\ta\t1"])
    (project / "params.yaml").write_text("embed:\n  model: no-such-org/no-such-model\n")
    assert_one_line_error(run_stage("embed", project), "embed.model", "no-such-org/no-such-model")


def test_nothing_to_score_is_one_line(tmp_path):
    project = small_project(tmp_path, ["q1\ta\t1"])
    (project / "params.yaml").write_text("score:\n  real_queries: data/none\n")
    assert_one_line_error(run_stage("score", project), "nothing to score", "score.real_queries")
