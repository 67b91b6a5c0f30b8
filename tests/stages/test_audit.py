"""The audit stage as DVC runs it: a golden set that copies its evidence is flagged in
metrics/audit.json, in the report and on stderr."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from goldenset.core.vectors import write_vectors
from goldenset.corpus.queries import LABELLED_COLUMNS, evidence_frame
from tests.audit.test_checks import ECHOING, TEXTS
from tests.stage_runs import assert_one_line_error, run_stage


def make_project(tmp_path):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    titles, texts = zip(*(text.split(". ", 1) for text in TEXTS.values()), strict=True)
    pd.DataFrame({"doc_id": list(TEXTS), "title": titles, "text": texts}).to_parquet(
        project / "data" / "documents.parquet"
    )
    rows = ECHOING.assign(evidence_start=0, evidence_end=1).to_dict("records")
    (project / "data" / "goldenset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    vectors = np.eye(3, 4, dtype=np.float32)
    write_vectors(project / "data" / "embeddings", "synthetic", ECHOING["qid"].tolist(), vectors)
    # ingest always writes the real-query tables; empty here: no real queries
    pd.DataFrame({"qid": [], "text": []}, dtype=str).to_parquet(project / "data/queries.parquet")
    qrels = pd.DataFrame({"qid": [], "doc_id": [], "grade": []}).astype({"grade": float})
    qrels.to_parquet(project / "data/qrels.parquet")
    # and the labelled tables, empty: no labelled questions
    pd.DataFrame(columns=LABELLED_COLUMNS).to_parquet(project / "data/labelled.parquet")
    evidence_frame().to_parquet(project / "data/labelled_evidence.parquet", index=False)
    # three documents: every ranking is near chance, which has its own test below; the judge's
    # flag has its own test too (tests/judge/test_judge.py)
    (project / "params.yaml").write_text(
        "audit:\n  sample_size: 3\n  min_pass_share: 0.0\nscore:\n  max_chance: 1.0\n"
    )
    return project


@pytest.mark.slow
def test_an_echoing_golden_set_is_flagged(tmp_path):
    project = make_project(tmp_path)
    stats = {"answers": 4, "yield": 0.75, "rejects": {"not_json": 1}}
    (project / "data" / "generate_stats.json").write_text(json.dumps(stats))
    result = run_stage("audit", project)
    assert result.returncode == 0, result.stderr
    metrics = json.loads((project / "metrics" / "audit.json").read_text())
    assert metrics["echo_share"] == 1.0 and metrics["flags"] == 1
    assert 0 <= metrics["judge"]["pass"]["low"] <= metrics["judge"]["pass"]["high"] <= 1
    assert metrics["judge"]["judged"] == 3
    # without the judge (no bundled model at hand): the rest of the audit, no estimate
    params = (
        (project / "params.yaml").read_text().replace("audit:\n", "audit:\n  judge_sample: 0\n")
    )
    (project / "params.yaml").write_text(params)
    assert run_stage("audit", project).returncode == 0
    assert "judge" not in json.loads((project / "metrics" / "audit.json").read_text())
    assert metrics["yield"] == 0.75 and metrics["rejects"] == {"total": 1, "not_json": 1}
    assert "real_queries" not in metrics  # no real queries in this project
    assert "audit: echo: 100% of questions" in result.stderr
    report = (project / "reports" / "audit.md").read_text()
    assert "- echo: 100% of questions" in report and "> The backup job runs nightly" in report


@pytest.mark.slow
def test_three_documents_are_flagged_as_a_corpus_a_random_ranking_already_solves(tmp_path):
    project = make_project(tmp_path)
    (project / "params.yaml").write_text("audit:\n  sample_size: 3\n")  # max_chance 0.05
    (project / "data" / "generate_stats.json").write_text(json.dumps({"answers": 3}))
    result = run_stage("audit", project)
    assert result.returncode == 0, result.stderr
    metrics = json.loads((project / "metrics" / "audit.json").read_text())
    assert metrics["chance"]["documents"] == 3
    assert metrics["chance"]["doc_hit@1"] == round(1 / 3, 6)
    (line,) = [line for line in result.stderr.splitlines() if "a random ranking" in line]
    assert "of the 3 documents scores" in line and "doc_hit@1 0.333," in line
    assert "more documents, or smaller k" in result.stderr


def test_without_generate_stats_it_says_which_stage_to_run(tmp_path):
    result = run_stage("audit", make_project(tmp_path))
    assert_one_line_error(result, "data/generate_stats.json not found", "dvc repro generate")


@pytest.mark.slow
def test_labelled_questions_are_the_echo_reference_where_there_are_no_real_queries(tmp_path):
    project = make_project(tmp_path)
    (project / "data" / "generate_stats.json").write_text(json.dumps({"answers": 3}))
    first_doc = next(iter(TEXTS))
    labelled = pd.DataFrame({"qid": ["l1"], "text": ["a question with no word of any document"]})
    labelled.to_parquet(project / "data/labelled.parquet")
    evidence = evidence_frame([("l1", first_doc, 0, 5), ("l1", first_doc, 10, 20)])
    evidence.to_parquet(project / "data/labelled_evidence.parquet", index=False)
    result = run_stage("audit", project)
    assert result.returncode == 0, result.stderr
    metrics = json.loads((project / "metrics" / "audit.json").read_text())
    assert metrics["labelled_queries"]["pairs"] == 1  # one (question, document) pair
    assert metrics["labelled_queries"]["echo"]["median"] == 0.0
    assert metrics["echo_gap_against"] == "labelled_queries"
    assert metrics["echo_median_gap"] == metrics["echo"]["median"]
