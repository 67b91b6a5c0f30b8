"""A fourth query set, registered in one place (one QUERY_SETS entry) with its files, is embedded,
scored, exported, measured by the audit and read by `goldenset compare`; a set made by the ingest
stage from the documents is written under data/query_sets; dvc.yaml lists every registered set's
files where the stages read them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from goldenset.audit.checks import document_indexes, reference_echoes
from goldenset.compare.regressed import Texts
from goldenset.compare.revisions import read_texts
from goldenset.core import paths
from goldenset.corpus.queries import evidence_frame
from goldenset.corpus.querysets import (
    BY_DOCUMENTS,
    BY_SPANS,
    QUERY_SETS,
    QuerySetEntry,
    document_judged,
    made_by_ingest,
    make_query_sets,
    read_query_set,
    read_query_sets,
    references,
)
from goldenset.params import load_params
from goldenset.stages import chunk, embed, score
from tests.conftest import ROOT
from tests.scoring.test_exports import golden_questions, sample_documents

TOY = QuerySetEntry(
    "toy",
    Path("data/toy.parquet"),
    "text",
    BY_SPANS,
    Path("data/toy_evidence.parquet"),
    echo_label="toy_questions",
)


def stages_of(path: str) -> dict[str, set[str]]:
    """Stage name -> the paths it lists as deps and as outs."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    found = {}
    for name, stage in stages.items():
        listed = [next(iter(e)) if isinstance(e, dict) else e for e in stage.get(path, [])]
        found[name] = set(listed)
    return found


def test_dvc_yaml_lists_every_registered_sets_files_where_the_stages_read_them():
    deps, outs = stages_of("deps"), stages_of("outs")
    made = set().union(*outs.values())
    # the sets the ingest stage makes are in one folder that every stage reading sets depends on
    folder = paths.QUERY_SETS.as_posix()
    assert folder in outs["ingest"]
    assert {folder} <= deps["embed"] & deps["score"] & deps["audit"]
    for entry in QUERY_SETS.values():
        files = {path.as_posix() for path in entry.files}
        assert files <= made, entry.name  # some stage writes them
        assert entry.questions_file.as_posix() in deps["embed"], entry.name
        assert files <= deps["score"], entry.name
        assert files <= deps["audit"], entry.name


def test_the_registered_sets_are_the_three_of_the_pipeline():
    assert list(QUERY_SETS) == ["synthetic", "labelled", "real"]
    assert document_judged() == {"real"}
    assert [entry.echo_label for entry in references()] == ["real_queries", "labelled_queries"]


@pytest.fixture
def project(tmp_path, monkeypatch) -> Iterator[Path]:
    """Documents chunked, a golden set, no labelled questions nor real queries, and the toy
    set: the golden set's questions and spans again, in files of its own."""
    monkeypatch.chdir(tmp_path)
    QUERY_SETS.register(TOY.name, TOY)
    data = tmp_path / "data"
    data.mkdir()
    sample_documents(12).to_parquet(data / "documents.parquet", index=False)
    params = load_params(ROOT / "params.yaml")
    chunk.main(params)
    golden = golden_questions(pd.read_parquet(data / "chunks.parquet"))
    (data / "goldenset.jsonl").write_text("".join(json.dumps(q) + "\n" for q in golden))
    pd.DataFrame(columns=["qid", "text"]).to_parquet(data / "queries.parquet")
    pd.DataFrame(columns=["qid", "doc_id", "grade", "absent"]).to_parquet(data / "qrels.parquet")
    pd.DataFrame(columns=["qid", "text"]).to_parquet(data / "labelled.parquet")
    evidence_frame().to_parquet(data / "labelled_evidence.parquet", index=False)
    toy = pd.DataFrame({"qid": [q["qid"] for q in golden], "text": [q["question"] for q in golden]})
    toy.to_parquet(TOY.questions_file, index=False)
    spans = [(q["qid"], q["doc_id"], q["evidence_start"], q["evidence_end"]) for q in golden]
    evidence_frame(spans).to_parquet(TOY.judgments, index=False)
    try:
        embed.main(params)
        score.main(params)
        yield tmp_path
    finally:
        QUERY_SETS.unregister(TOY.name)


@pytest.mark.slow
def test_a_fourth_query_set_declared_once_is_embedded_and_scored(project):
    assert (project / "data/embeddings/toy.npy").is_file()
    scores = json.loads((project / "metrics/scores.json").read_text())
    detail = json.loads((project / "metrics/detail.json").read_text())
    assert list(scores) == ["synthetic", "toy"]  # no labelled nor real questions
    # the golden set's questions and spans again: the same figures, to the last digit
    assert scores["toy"] == scores["synthetic"]
    assert detail["toy"] == detail["synthetic"]
    assert detail["chance"]["toy"] == detail["chance"]["synthetic"]
    results = pd.read_parquet(project / "data/results.parquet")
    assert set(results["query_set"]) == {"synthetic", "toy"}
    assert (project / "data/export/runs/toy.dense.trec").is_file()
    plotted = json.loads((project / "plots/recall_at_k.json").read_text())
    assert {row["query_set"] for row in plotted} == {"synthetic", "toy"}


@pytest.mark.slow
def test_the_audit_and_compare_read_the_fourth_set(project):
    query_sets = read_query_sets()
    documents = document_indexes(pd.read_parquet("data/documents.parquet"))
    echoes = reference_echoes(query_sets, documents)
    assert list(echoes) == ["real_queries", "labelled_queries", "toy_questions"]
    assert echoes["real_queries"] is None and len(echoes["toy_questions"]) == len(query_sets["toy"])
    texts = read_texts(None, str(project), {"toy"})
    assert isinstance(texts, Texts)
    qid, question = query_sets["toy"].qids[0], query_sets["toy"].texts[0]
    assert texts.question_texts["toy"][qid] == question
    golden = query_sets["synthetic"].table.set_index("qid")
    document = pd.read_parquet("data/documents.parquet").set_index("doc_id")["text"]
    start, end = golden.loc[qid, ["evidence_start", "evidence_end"]]
    assert texts.evidence["toy"][qid] == document[golden.loc[qid, "doc_id"]][start:end]


def first_words(documents: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    qids = [f"w-{doc_id}" for doc_id in documents["doc_id"]]
    questions = pd.DataFrame({"qid": qids, "text": [t[:30] for t in documents["text"]]})
    qrels = pd.DataFrame({"qid": qids, "doc_id": documents["doc_id"], "grade": 1.0, "absent": ""})
    return questions, qrels


def test_a_set_made_by_ingest_is_made_from_the_documents_into_its_folder():
    entry = made_by_ingest("words", first_words, BY_DOCUMENTS)
    assert entry.questions_file == paths.QUERY_SETS / "words.parquet"
    assert entry.judgments == paths.QUERY_SETS / "words.judgments.parquet"
    documents = sample_documents(3)
    assert make_query_sets(documents).counts == {}  # the built-in sets have stages of their own
    QUERY_SETS.register("words", entry)
    try:
        made = make_query_sets(documents)
        assert list(QUERY_SETS) == ["synthetic", "labelled", "real", "words"]
        assert document_judged() == {"real", "words"}
    finally:
        QUERY_SETS.unregister("words")
    assert made.counts == {"words": 3}
    questions, qrels = made.tables[entry.questions_file], made.tables[entry.judgments]
    assert (
        questions["qid"].tolist()
        == qrels["qid"].tolist()
        == [f"w-{doc_id}" for doc_id in documents["doc_id"]]
    )


def test_the_golden_set_is_read_as_applied_and_as_written_at_a_revision_before_apply():
    row = {"qid": "q1", "question": "Q?", "doc_id": "d1", "evidence_start": 0, "evidence_end": 2}
    applied = {**row, "qid": "fx-1", "question": "Fixed?", "fixed_from": "q1"}
    files = {
        paths.GOLDENSET: (json.dumps(row) + "\n").encode(),
        paths.APPLIED: (json.dumps(applied) + "\n").encode(),
    }
    golden = QUERY_SETS["synthetic"]
    now = read_query_set(golden, files.get)
    assert (now.qids, now.texts) == (["fx-1"], ["Fixed?"])
    assert now.judgments["qid"].tolist() == ["fx-1"]
    files.pop(paths.APPLIED)  # a revision committed before the apply stage existed
    before = read_query_set(golden, files.get)
    assert (before.qids, before.texts) == (["q1"], ["Q?"])
