"""A toy retriever, metric, question writer, chunking strategy and query set, each declared in one
place (tests/toy_extension.py: one entry each), show in the chunks, the golden set, the scores,
the plot and `goldenset compare`, through the real `dvc repro` and `goldenset compare`
commands."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from goldenset.core.spans import trim_span
from goldenset.testing.dvc_project import (
    PROJECT_FILES,
    ROOT,
    call,
    commit,
    copy_project,
    edit_params,
    run,
    stages_run,
    write_small_corpus,
)

pytestmark = pytest.mark.slow


def halves(text: str) -> list[tuple[int, int]]:
    middle = len(text) // 2
    pieces = (trim_span(text, 0, middle), trim_span(text, middle, len(text)))
    return [span for span in pieces if span is not None]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """Two commits scored with the toys registered: the toy writer's questions on the toy
    chunker's chunks, the toy retriever's k1 at 1.2, then at 0.1."""
    base = tmp_path_factory.mktemp("extension")
    startup = base / "startup"
    startup.mkdir()
    (startup / "sitecustomize.py").write_text("import tests.toy_extension  # noqa: F401\n")
    path = [str(startup), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {"PYTHONPATH": os.pathsep.join(part for part in path if part)}
    project = copy_project(base / "project", PROJECT_FILES)
    write_small_corpus(project, n_docs=20)
    edit_params(
        project,
        chunk={"strategy": "toy"},
        generate={
            "provider": "toy",
            "max_questions": 8,
            "example_queries": None,
            "toy": {"opening": "What do we know of"},  # the toy writer's own section
        },
        score={"headline": ["ndcg@10", "found@10"]},
        retrievers={"toy": {"enabled": True, "k1": 1.2}},
    )
    run(["dvc", "repro", "score"], project, env)
    commit(project, "toy k1 1.2")
    run(["git", "tag", "a"], project)
    edit_params(project, retrievers={"toy": {"enabled": True, "k1": 0.1}})
    # the toy's own params section is a param of score: changing it re-runs the stage
    assert "score" in stages_run(run(["dvc", "repro", "score"], project, env))
    commit(project, "toy k1 0.1")
    run(["git", "tag", "b"], project)
    return project, env


def test_the_toy_chunker_cuts_the_chunks(project):
    folder, _ = project
    documents = pd.read_parquet(folder / "data/documents.parquet")
    chunks = pd.read_parquet(folder / "data/chunks.parquet")
    expected = [
        (doc_id, start, end)
        for doc_id, text in zip(documents["doc_id"], documents["text"], strict=True)
        # the toy chunker's halves; importing tests.toy_extension here would register the toys
        # in this process, for every test after this one
        for start, end in halves(text)
    ]
    assert list(zip(chunks["doc_id"], chunks["start"], chunks["end"], strict=True)) == expected


def test_the_toy_writer_writes_the_golden_set(project):
    folder, _ = project
    lines = (folder / "data/goldenset.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert rows and {(row["provider"], row["model"]) for row in rows} == {("toy", "toy-writer")}
    assert all(row["question"].startswith("What do we know of ") for row in rows)
    scores = json.loads((folder / "metrics/scores.json").read_text())
    assert "toy" in scores["synthetic"]  # the toy's questions are scored


def test_the_toy_retriever_and_metric_are_scored(project):
    folder, _ = project
    scores = json.loads((folder / "metrics/scores.json").read_text())
    detail = json.loads((folder / "metrics/detail.json").read_text())
    assert set(scores["real"]) == {"dense", "bm25", "ann", "hybrid", "toy"}
    for values in scores["real"].values():
        assert 0 <= values["found@10"] <= 10
    # found@1 <= 1, and the doc_ view's form where there is one: evaluate reads the declaration
    assert 0 <= detail["real"]["toy"]["found@1"] <= 1
    assert scores["real"]["toy"]["ndcg@10"] > 0
    # the toy metric declares no chance level: it gets one estimated over random rankings
    assert 0 <= detail["chance"]["real"]["found@10"] <= 10


def test_the_toy_query_set_is_embedded_and_scored(project):
    folder, _ = project
    scores = json.loads((folder / "metrics/scores.json").read_text())
    detail = json.loads((folder / "metrics/detail.json").read_text())
    assert list(scores) == ["synthetic", "real", "toy"]  # declared order, the toy last
    # the real queries' files again: the same figures, to the last digit
    assert scores["toy"] == scores["real"] and detail["toy"] == detail["real"]
    assert (folder / "data/embeddings/toy.npy").is_file()
    assert (folder / "data/export/runs/toy.bm25.trec").is_file()


def test_the_toy_retriever_is_plotted(project):
    folder, _ = project
    rows = json.loads((folder / "plots/recall_at_k.json").read_text())
    assert {row["k"] for row in rows if row["retriever"] == "toy"} == {1, 3, 5, 10}


def test_goldenset_compare_compares_the_toy_metric_of_the_toy_retriever(project):
    folder, env = project
    process = call(
        [sys.executable, "-m", "goldenset", "compare", "a", "b", "--format", "markdown"]
        + ["--gate", "real.toy.ndcg@10"],  # a gated metric is compared anyway: not the toy
        folder,
        env,
    )
    assert process.returncode in (0, 1), process.stderr
    rows = {tuple(line.split(" | ")[:3]) for line in process.stdout.splitlines() if "|" in line}
    assert ("| real", "toy", "found@10") in rows
    assert "Holm-corrected over 1 gated metric(s)" in process.stdout
    assert ("| real", "toy", "ndcg@10") in rows
    assert ("| real", "dense", "found@10") in rows
    assert ("| toy", "toy", "found@10") in rows
