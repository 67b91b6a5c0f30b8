"""A person's fix of a query: its version placed in the document, the writer's checks as
warnings, the verdict line that keeps both, and generate leaving a fixed question alone."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from goldenset.audit.checks import Audit, opening
from goldenset.core.params import ReviewParams
from goldenset.corpus.queries import read_refused, refused_qids
from goldenset.corpus.verdicts import golden_line, parse_verdicts, verdict_problem
from goldenset.review.fixes import fix_warnings, fixed_version
from goldenset.review.pass_shares import person_estimate
from goldenset.review.verdicts import VerdictFile, verdict_row
from tests.review.conftest import post, served, verdicts_in, write_project
from tests.review.test_page import EVIDENCE, TEXT, toy_questions

START = TEXT.index(EVIDENCE)
GOOD = "Que répare la protéine p53 après une irradiation?"  # answered by EVIDENCE, in its language
QUERY = toy_questions(1)[0][0]


def test_a_version_is_placed_in_its_document_with_the_spans_edges_trimmed():
    version = fixed_version("  Que  répare\np53 ?", TEXT, START - 1, START + len(EVIDENCE) + 1)
    assert version == {
        "question": "Que répare p53 ?",
        "evidence": EVIDENCE,
        "evidence_start": START,
        "evidence_end": START + len(EVIDENCE),
    }
    for text, start, end in [(" ", START, START + 5), (GOOD, 5, 5), (GOOD, 0, len(TEXT) + 1)]:
        with pytest.raises(ValueError):
            fixed_version(text, TEXT, start, end)


def test_the_writers_checks_warn_about_a_version_they_would_reject():
    good = fixed_version(GOOD, TEXT, START, START + len(EVIDENCE))
    assert fix_warnings(good, TEXT, "question") == []
    short = {**good, "question": "p53?"}
    assert fix_warnings(short, TEXT, "question") == [
        "too short: the question has fewer than 4 words"
    ]
    assert fix_warnings(good, TEXT, "claim")[0].startswith("not a claim")  # its own form's rules


def test_a_fix_is_a_fail_for_a_or_b_holding_the_persons_version_and_older_lines_still_load():
    version = fixed_version(GOOD, TEXT, START, START + len(EVIDENCE))
    row = verdict_row(QUERY, "a", "", "ann", "random", fix=version, seconds=12.34)
    assert row["question"] == QUERY["question"] and row["failed"] == "a"
    assert row["fix"] == version and row["seconds"] == 12.3
    assert verdict_problem(row) is None
    for wrong, why in [
        ({"verdict": "pass", "failed": None}, "not a fail"),
        ({"failed": "nonsense"}, "not a fail"),
        ({"fix": {"question": GOOD}}, "an object of"),
        ({"fix": {**version, "evidence_start": 9, "evidence_end": 3}}, "no span"),
        ({"seconds": -1}, "negative"),
        ({"seconds": "10"}, "not a number"),
    ]:
        assert why in verdict_problem({**row, **wrong})
    older = verdict_row(QUERY, "b", "", "ann", "random")
    assert "fix" not in older and "seconds" not in older
    assert parse_verdicts(json.dumps(older), "old.jsonl").problems == []


def test_a_second_fix_with_new_text_is_a_change_and_the_seconds_alone_are_not(tmp_path):
    file = VerdictFile(tmp_path / "verdicts.jsonl")
    version = fixed_version(GOOD, TEXT, START, START + len(EVIDENCE))
    first = verdict_row(QUERY, "a", "", "ann", "random", fix=version, seconds=10)
    file.record(first)
    file.record({**first, "seconds": 30})
    assert len(file.read().lines) == 1
    better = {**version, "question": "Que répare la protéine p53 après irradiation?"}
    file.record({**first, "fix": better})
    assert len(file.read().lines) == 2 and file.read().of("ann")[QUERY["qid"]]["fix"] == better
    _, undone = file.undo("ann")
    assert undone == QUERY["qid"] and file.read().of("ann")[QUERY["qid"]]["fix"] == version


def test_generate_does_not_ask_again_a_question_someone_fixed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    fixed = {**QUERY, "qid": "gs-fixed", "doc_id": "d1"}
    version = fixed_version(GOOD, TEXT, START, START + len(EVIDENCE))
    rows = [
        verdict_row(QUERY, "a", "", "ann", "random"),
        verdict_row(fixed, "a", "", "ann", "random"),
        verdict_row(fixed, "b", "", "bob", "random", fix=version),  # another person's fix
    ]
    (tmp_path / "examples/verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    refused = read_refused("examples/verdicts.jsonl")
    assert list(refused) == [("d0", EVIDENCE)]


def test_generate_asks_again_what_review_disagreement_fails(tmp_path, monkeypatch):
    """A question one person failed and another passed is asked again under disagreement: fail,
    and kept under pass, as score keeps it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").mkdir()
    split = {**QUERY, "qid": "gs-split", "doc_id": "d2"}
    rows = [
        verdict_row(QUERY, "a", "", "ann", "random"),
        verdict_row(split, "b", "", "ann", "random"),
        verdict_row(split, "pass", "", "bob", "random"),
    ]
    (tmp_path / "examples/verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    both = [("d0", EVIDENCE), ("d2", EVIDENCE)]
    assert list(read_refused("examples/verdicts.jsonl", "fail")) == both
    assert list(read_refused("examples/verdicts.jsonl", "pass")) == [("d0", EVIDENCE)]
    asked = refused_qids("examples/verdicts.jsonl", both, "pass")
    assert asked == ["gs-000"] and refused_qids("examples/verdicts.jsonl", both) == [
        "gs-000",
        "gs-split",
    ]


def test_the_page_saves_a_fix_after_its_warnings_are_confirmed(tmp_path):
    project = write_project(tmp_path / "project", *toy_questions(3))
    with served(project) as url:
        warned = post(url + "/api/fix", {"qid": "gs-001", "failed": "a", "question": "p53?"})
        assert warned["saved"] is False and warned["warnings"][0].startswith("too short")
        assert verdicts_in(project) == {}  # nothing written until the person confirms
        body = {"qid": "gs-001", "failed": "a", "question": "p53?", "confirm": True, "seconds": 8}
        assert post(url + "/api/fix", body)["saved"] is True
        moved = {"evidence_start": 0, "evidence_end": START - 1, "question": GOOD, "failed": "b"}
        unanswered = post(url + "/api/fix", {"qid": "gs-002", **moved})  # the header says no such
        assert unanswered["saved"] is False and unanswered["warnings"][0].startswith("not answered")
        assert post(url + "/api/fix", {"qid": "gs-002", **moved, "confirm": True})["saved"] is True
        malformed = [
            {"failed": "nonsense", "question": GOOD},
            {"failed": "a", "question": ["not", "text"]},
            {"failed": "a", "question": GOOD, "evidence_start": [0], "evidence_end": 5},
            {"failed": "a", "question": GOOD, "seconds": "ten"},
        ]
        for body in malformed:  # each answered 400, none written
            with pytest.raises(urllib.error.HTTPError) as error:
                post(url + "/api/fix", {"qid": "gs-000", "confirm": True, **body})
            assert error.value.code == 400, body
        assert "gs-000" not in verdicts_in(project)
    verdicts = verdicts_in(project)
    first = verdicts["gs-001"]
    assert (first["question"], first["verdict"], first["failed"]) == (
        "Que répare p53 (1)?",
        "fail",
        "a",
    )
    assert first["fix"]["question"] == "p53?" and first["seconds"] == 8.0
    assert first["fix"]["evidence"] == EVIDENCE  # the original's evidence, unless moved
    assert verdicts["gs-002"]["fix"]["evidence"] == TEXT[: START - 1].strip()
    # once `dvc repro` applied them, the page names the qid each fix is scored under
    with served(project) as url:
        assert get(url, "gs-001")["fixed_as"] is None  # not applied yet
        run_apply(project)
        applied = [json.loads(line) for line in (project / "data/applied.jsonl").open()]
        fixed_as = {row["fixed_from"]: row["qid"] for row in applied if row.get("fixed_from")}
        assert set(fixed_as) == {"gs-001", "gs-002"}
        assert get(url, "gs-001")["fixed_as"] == fixed_as["gs-001"]
        assert get(url, "gs-000")["fixed_as"] is None


def get(url: str, qid: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/query?qid={qid}") as answer:
        return json.loads(answer.read())


def run_apply(project: Path) -> None:
    """The apply stage in the project folder, as `dvc repro` runs it."""
    subprocess.run([sys.executable, "-m", "goldenset.stages.apply"], cwd=project, check=True)


def test_the_review_says_what_it_kept_passed_fixed_or_failed_and_the_minutes_a_kept_question_took():
    version = fixed_version(GOOD, TEXT, START, START + len(EVIDENCE))
    queries = [{**QUERY, "qid": f"q{i}"} for i in range(5)]
    rows = [
        verdict_row(queries[0], "pass", "", "ann", "random", seconds=30),
        verdict_row(queries[1], "a", "", "ann", "random", fix=version, seconds=90),
        verdict_row(queries[2], "b", "", "ann", "random", fix=version, seconds=60),
        verdict_row(queries[3], "nonsense", "", "ann", "random", seconds=20),
        verdict_row(queries[4], "pass", "", "ann", "least_sure", seconds=500),  # not the sample
        verdict_row(queries[0], "pass", "", "bob", "random", seconds=40),  # a second person's time
    ]
    verdicts = parse_verdicts("".join(json.dumps(row) + "\n" for row in rows), "v.jsonl")
    qids = {query["qid"] for query in queries}
    person = person_estimate(verdicts, qids, set(), ReviewParams())
    assert (person["checked"], person["passed"]) == (4, 1)  # the writer's share: a fix fails
    golden = person["golden"]
    assert (golden["as_written"], golden["fixed"], golden["failed"]) == (1, 2, 1)
    assert (golden["checked"], golden["passed"]) == (4, 3)
    assert golden["minutes_per_golden"] == round((30 + 90 + 60 + 20 + 40) / 60 / 3, 2)
    assert golden_line(golden) == (
        "kept 3 of 4, 75% [30%, 95%]: 1 as written, 2 fixed, 1 failed; 1.3 min a question kept"
    )
    audit = Audit({"questions": 5, "review": {"person": person}}, [], pd.DataFrame(), [])
    assert "  - " + golden_line(golden) in opening(audit)
    unfixed = parse_verdicts(json.dumps(rows[0]) + "\n", "v.jsonl")
    assert "golden" not in person_estimate(unfixed, qids, set(), ReviewParams())
