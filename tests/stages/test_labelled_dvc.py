"""Labelled questions through the pipeline with the real dvc CLI: ingest to metrics to compare."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.dvc_project import (
    PROJECT_FILES,
    call,
    commit,
    copy_project,
    edit_params,
    run,
    write_small_corpus,
)

pytestmark = pytest.mark.slow
GUIDE = "# Backups\n\nBackups run every night at two.\nA restore takes about an hour.\n"


def labelled_lines(docs: Path) -> list[dict]:
    """Real queries as labelled questions, each with a sentence of a judged abstract as its
    excerpt (no offsets: found by its text); one on guide.md with offsets; one found nowhere."""
    corpus = {
        d["_id"]: d["text"] for d in map(json.loads, (docs / "corpus.jsonl").open(encoding="utf-8"))
    }
    queries = {q["_id"]: q["text"] for q in map(json.loads, (docs / "queries.jsonl").open())}
    judged = dict(
        line.split("\t")[:2] for line in (docs / "qrels.tsv").read_text().splitlines()[1:]
    )
    rows = []
    for qid, doc_id in list(judged.items())[:12]:
        sentence = corpus[doc_id].split(". ")[1]
        rows.append({"_id": f"L{qid}", "text": queries[qid], "evidence": [
            {"doc_id": doc_id, "text": "  " + sentence.upper()}
        ]})  # fmt: skip
    start = GUIDE.index("A restore")
    rows.append({"_id": "backup", "text": "How long does a restore take?", "evidence": [
        {"doc_id": "guide.md", "text": "A restore takes about an hour.", "start": start,
         "end": start + 30}
    ]})  # fmt: skip
    rows.append({"_id": "nowhere", "text": "Who signs the contract?", "evidence": [
        {"doc_id": "guide.md", "text": "the contract is signed by the lead"}
    ]})  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("labelled") / "project", PROJECT_FILES)
    write_small_corpus(project, n_docs=30)
    docs = project / "data/docs"
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    rows = labelled_lines(docs)
    (docs / "labelled.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    edit_params(project, generate={"max_questions": 0})  # no LLM: labelled and real sets only
    project.joinpath("ingest.log").write_text(run(["dvc", "repro"], project))
    commit(project, "labelled questions")
    return project


def test_labelled_questions_are_a_query_set_of_their_own(project):
    output = project.joinpath("ingest.log").read_text()
    assert "left out nowhere (" in output and '"the contract is signed by the lead"' in output
    assert "labelled: 13 questions, 13 evidence spans from labelled.jsonl; left out 1" in output
    scores = json.loads((project / "metrics/scores.json").read_text())
    assert set(scores) == {"labelled", "real"}  # the golden set is empty here
    assert set(scores["labelled"]) == {"dense", "bm25", "ann", "hybrid"}
    for values in scores["labelled"].values():
        assert values["n_queries"] == 13
        assert 0 < values["ndcg@10"] <= 1
    intervals = json.loads((project / "metrics/intervals.json").read_text())
    headline = yaml.safe_load((project / "params.yaml").read_text())["score"]["headline"]
    assert set(intervals["labelled"]["dense"]) == set(headline)  # every view is defined on it


def test_compare_reads_labelled_questions_and_their_evidence(project):
    edit_params(project, embed={"max_seq_length": 4})  # a far worse embedding
    run(["dvc", "repro"], project)
    # no golden set here: the gate names the labelled and real sets
    gate = ["--gate", "labelled.dense.doc_ndcg@10", "--gate", "real.dense.ndcg@10"]
    process = call(
        [sys.executable, "-m", "goldenset", "compare", "HEAD", "--show", "20", "--budget", "1"]
        + gate,
        project,
    )
    assert process.returncode == 0, process.stderr
    out = process.stdout
    print(out)
    table = {tuple(line.split()[:3]) for line in out.splitlines()}
    assert ("labelled", "dense", "ndcg@10") in table and ("real", "dense", "ndcg@10") in table
    lines = [line for line in out.splitlines() if line.startswith("- labelled/dense ")]
    assert lines, out
    questions = {row["_id"]: row for row in labelled_lines(project / "data/docs")}
    for line in lines:
        qid = line.split()[2]
        assert f'"{questions[qid]["text"][:40]}' in line
        # the excerpt as it stands in the document, cut from it by its located span
        excerpt = " ".join(questions[qid]["evidence"][0]["text"].split())
        assert "evidence " in line and excerpt[:20].lower() in line.lower()
