"""A person's verdicts in the pipeline, under the real dvc CLI: the verdict file re-runs only
the stages that read it, score leaves out what the person failed exactly as a hand computation
on data/results.parquet predicts, a fix is scored in place of its question with only its new text
embedded, the audit reports the person's share; and the misses view of the page reads that run's
outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from goldenset.llm_stand_in import LoopbackLLM
from goldenset.review.fixes import fixed_version
from goldenset.review.verdicts import VerdictFile, verdict_row
from goldenset.review.views import missed
from tests.review.conftest import current_qid, golden_rows, open_page, served
from tests.support.dvc_project import (
    PROJECT_FILES,
    commit,
    copy_project,
    edit_params,
    run,
    stages_run,
    write_small_corpus,
)

pytestmark = pytest.mark.slow
# a verdict re-runs these, never generate: embed encodes nothing new for a fail
REVIEWED = {"apply", "embed", "score", "audit"}
HEADLINE = ["doc_ndcg@10", "context_recall@512", "context_hit@512", "ndcg@10", "recall@10", "mrr"]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    with LoopbackLLM(api_key=None) as server:
        project = copy_project(tmp_path_factory.mktemp("review") / "project", PROJECT_FILES)
        write_small_corpus(project)
        edit_params(
            project,
            generate={
                "provider": "openai",
                "model": "loopback-model",
                "max_questions": 60,
                "form": "question",  # the stand-in's questions: more distinct than its claims
                "openai": {"base_url": server.openai_url},
            },
            audit={"judge_sample": 0},  # the judge has its own tests: no model loaded here
        )
        run(["dvc", "repro"], project)
    commit(project, "first run")
    return project


def test_verdicts_rerun_score_and_audit_and_leave_failed_questions_out(project):
    before = pd.read_parquet(project / "data/results.parquet")
    before = before[before["query_set"] == "synthetic"]
    rows = golden_rows(project)
    assert len(rows) >= 6
    checked = rows[: len(rows) * 2 // 3]
    failed = {row["qid"] for row in checked[::3]}
    VerdictFile(project / "review/verdicts.jsonl").record(
        *(verdict_row(row, verdicts_of_me(row, failed), "", "me", "random") for row in checked)
    )
    output = run(["dvc", "repro"], project)
    assert stages_run(output) == REVIEWED
    scores = json.loads((project / "metrics/scores.json").read_text())["synthetic"]
    kept = before[~before["qid"].isin(failed)]
    for retriever, found in kept.groupby("retriever"):
        assert scores[retriever]["n_queries"] == len(rows) - len(failed)
        for metric in HEADLINE:
            hand = float(np.mean(found[metric]))
            assert scores[retriever][metric] == pytest.approx(hand, abs=1e-9), (retriever, metric)
    detail = json.loads((project / "metrics/detail.json").read_text())
    assert detail["review"] == {
        "questions": len(rows),
        "checked": len(checked),
        "fixed": 0,
        "left_out": len(failed),
        "scored": len(rows) - len(failed),
        "scored_checked": len(checked) - len(failed),
    }
    audit = json.loads((project / "metrics/audit.json").read_text())
    person = audit["review"]["person"]
    assert (person["checked"], person["passed"]) == (len(checked), len(checked) - len(failed))
    report = (project / "reports/audit.md").read_text()
    assert "## People's review" in report
    opening = report.split("## Figures")[0].splitlines()
    assert len(opening) <= 30 and max(map(len, opening)) <= 100
    assert f"{len(checked) - len(failed)} of {len(checked)} pass" in opening[4]
    commit(project, "reviewed")
    # a second reviewer: fails one the first passed, passes one the first failed
    passed_by_me = [row for row in checked if row["qid"] not in failed]
    flipped = {passed_by_me[0]["qid"]: "b", checked[0]["qid"]: "pass"}
    VerdictFile(project / "review/verdicts.jsonl").record(
        *(
            verdict_row(
                row, flipped.get(row["qid"], verdicts_of_me(row, failed)), "", "you", "random"
            )
            for row in checked
        )
    )
    assert stages_run(run(["dvc", "repro"], project)) == REVIEWED
    split = failed | {passed_by_me[0]["qid"]}  # review.disagreement: fail, the default
    detail = json.loads((project / "metrics/detail.json").read_text())
    assert detail["review"]["left_out"] == len(split)
    review = json.loads((project / "metrics/audit.json").read_text())["review"]
    [agreement] = review["agreement"]
    assert (agreement["questions"], agreement["agreed"]) == (len(checked), len(checked) - 2)
    assert review["labellers"]["you"]["passed"] == len(checked) - len(failed)  # one each way
    report = (project / "reports/audit.md").read_text()
    assert "### Where me and you disagree" in report
    disagreements = report.split("### Where")[1].split("\n## ")[0]
    assert sum(line.startswith("- **") for line in disagreements.splitlines()) == 2
    edit_params(project, review={"disagreement": "pass"})
    # generate reads it for generate.failed_queries: it runs, from its cache, asking nothing
    assert stages_run(run(["dvc", "repro"], project)) == {"generate", *REVIEWED}
    detail = json.loads((project / "metrics/detail.json").read_text())
    assert detail["review"]["left_out"] == len(failed - {checked[0]["qid"]})
    edit_params(project, review={"disagreement": "fail"})
    run(["dvc", "repro"], project)
    # leave_out_failed: false scores every question again
    edit_params(project, review={"leave_out_failed": False})
    assert stages_run(run(["dvc", "repro"], project)) == REVIEWED
    scores = json.loads((project / "metrics/scores.json").read_text())["synthetic"]
    assert scores["dense"]["n_queries"] == len(rows)
    edit_params(project, review={"leave_out_failed": True})
    run(["dvc", "repro"], project)


def verdicts_of_me(row: dict, failed: set[str]) -> str:
    return "a" if row["qid"] in failed else "pass"


def row_doc(project: Path, qid: str) -> str:
    return next(r for r in golden_rows(project) if r["qid"] == qid)["doc_id"]


def marks_of(page) -> list[str]:
    return page.locator("#side-a .passage").evaluate_all(
        "(passages) => passages.map((p) => p.querySelector('mark').textContent)"
    )


def test_the_misses_view_shows_two_retrievers_answers(browser, project):
    results = pd.read_parquet(project / "data/results.parquet")
    golden = results[results["query_set"] == "synthetic"]
    chunks = pd.read_parquet(project / "data/chunks.parquet").set_index("chunk_id")
    expected = missed(golden, "dense")
    assert expected, "the small corpus has questions dense did not rank first"
    with served(project) as url:
        page = open_page(browser, url)
        page.click("#tab-misses")
        page.wait_for_selector("#sides:not([hidden]) .passage")
        assert [a.get_attribute("data-qid") for a in page.locator(".row").all()] == expected[
            : page.locator(".row").count()
        ]
        qid = current_qid(page)
        assert qid == expected[0]
        row = golden[(golden["retriever"] == "dense") & (golden["qid"] == qid)].iloc[0]
        shown = page.locator("#side-a .passage b").all_inner_texts()
        assert [text.split(" ", 1)[1].strip() for text in shown] == list(row["top_ids"][:5])
        evidence = next(r for r in golden_rows(project) if r["qid"] == qid)["evidence"]
        for mark in page.locator("#side-a mark, #side-b mark").all_inner_texts():
            assert mark in evidence  # only the evidence is marked
        holding = [
            str(chunks.loc[c, "doc_id"]) == str(row_doc(project, qid)) for c in row["top_ids"][:5]
        ]
        assert page.locator("#side-a .passage").evaluate_all(
            "(passages) => passages.map((p) => p.classList.contains('holds'))"
        ) == [held and bool(mark) for held, mark in zip(holding, marks_of(page), strict=True)]
        page.select_option("#retriever-b", "bm25")
        page.wait_for_selector("#side-b h3:text-matches('^bm25')")
        assert page.errors == []


def test_ten_fixes_and_ten_fails_embed_the_fixed_texts_alone_and_are_scored(project):
    rows = golden_rows(project)
    assert len(rows) >= 22
    texts = pd.read_parquet(project / "data/documents.parquet").set_index("doc_id")["text"]
    fixes, fails, passes = rows[:10], rows[10:20], rows[20:22]
    lines = [
        verdict_row(
            row,
            "a",
            "",
            "fixer",
            "random",
            fix=fixed_version(
                f"{row['question']} Fixed {i}.",
                texts[row["doc_id"]],
                row["evidence_start"],
                row["evidence_end"],
            ),
            seconds=20,
        )
        for i, row in enumerate(fixes)
    ]
    lines += [verdict_row(row, "b", "", "fixer", "random", seconds=10) for row in fails]
    lines += [verdict_row(row, "pass", "", "fixer", "random", seconds=5) for row in passes]
    (project / "review/verdicts.jsonl").unlink(missing_ok=True)
    VerdictFile(project / "review/verdicts.jsonl").record(*lines)
    output = run(["dvc", "repro"], project)
    assert stages_run(output) == REVIEWED  # the writer's answers stand
    assert "(10 golden questions fixed by a person); 10 vectors encoded" in output
    applied = [json.loads(line) for line in (project / "data/applied.jsonl").open()]
    fixed = {row["fixed_from"]: row for row in applied if row.get("fixed_from")}
    assert list(fixed) == [row["qid"] for row in fixes]
    assert [row["question"] for row in fixed.values()] == [
        f"{row['question']} Fixed {i}." for i, row in enumerate(fixes)
    ]
    kept = [
        fixed[row["qid"]]["qid"] if row["qid"] in fixed else row["qid"]
        for row in rows[:10] + rows[20:]
    ]
    assert [row["qid"] for row in applied] == kept
    vectors = json.loads((project / "data/embeddings/synthetic.ids.json").read_text())
    assert vectors == kept
    results = pd.read_parquet(project / "data/results.parquet")
    golden = results[results["query_set"] == "synthetic"]
    assert set(golden["qid"]) == set(kept)
    named = golden.dropna(subset=["fixed_from"]).drop_duplicates("qid")
    assert dict(zip(named["qid"], named["fixed_from"], strict=True)) == {
        row["qid"]: original for original, row in fixed.items()
    }
    detail = json.loads((project / "metrics/detail.json").read_text())
    assert detail["review"] == {
        "questions": len(rows),
        "checked": 22,
        "fixed": 10,
        "left_out": 10,
        "scored": len(rows) - 10,
        "scored_checked": 12,
    }
    scores = json.loads((project / "metrics/scores.json").read_text())["synthetic"]
    assert scores["dense"]["n_queries"] == len(rows) - 10
    audit = json.loads((project / "metrics/audit.json").read_text())
    assert audit["questions"] == len(rows) - 10  # the checks read the set as scored
    golden_share = audit["review"]["person"]["golden"]
    assert (golden_share["as_written"], golden_share["fixed"], golden_share["failed"]) == (
        2,
        10,
        10,
    )
    assert golden_share["minutes_per_golden"] == round((200 + 100 + 10) / 60 / 12, 2)
    assert (audit["review"]["person"]["checked"], audit["review"]["person"]["passed"]) == (22, 2)
    report = (project / "reports/audit.md").read_text()
    opening = report.split("## Figures")[0]
    assert "kept 12 of 22" in opening
    assert f"{len(rows) - 10} questions scored of the {len(rows)} written" in opening
    assert stages_run(run(["dvc", "repro"], project)) == set()
    # a server killed mid-write leaves its files beside the verdicts: git and DVC see neither
    commit(project, "fixed")
    (project / "review/.verdicts.jsonl.k1ll3d.tmp").write_text('{"qid": "half a line')
    assert (project / "review/.verdicts.jsonl.lock").exists()
    assert run(["git", "status", "--porcelain"], project) == ""
    assert "up to date" in run(["dvc", "status", "apply", "audit"], project)  # review/ deps
