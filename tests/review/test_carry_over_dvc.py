"""A writer change keeps people's verdicts, under the real dvc CLI: a change of the writer's
identity that leaves its output alone (generate.max_tokens) gives every question a new qid, and
every verdict whose question reads the same still applies (score leaves the failed ones out, the
audit counts them); a verdict whose question is no longer written is stale, and said so."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from goldenset.corpus.verdicts import question_key
from goldenset.llm_stand_in import LoopbackLLM
from goldenset.review.command import carried_lines, project_at
from goldenset.review.verdicts import VerdictFile, verdict_row
from tests.review.conftest import golden_rows
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


def test_a_writer_change_keeps_the_verdicts_of_questions_that_read_the_same(tmp_path):
    with LoopbackLLM(api_key=None) as server:
        project = copy_project(tmp_path / "project", PROJECT_FILES)
        write_small_corpus(project)
        writer = {"provider": "openai", "model": "loopback-model", "max_questions": 30}
        edit_params(
            project,
            generate={**writer, "openai": {"base_url": server.openai_url}},
            audit={"judge_sample": 0},  # the judge has its own tests: no model loaded here
        )
        run(["dvc", "repro"], project)
        rows = golden_rows(project)
        checked = rows[:20]
        failed = {row["qid"] for row in checked[::2]}
        gone = {**rows[0], "qid": "gs-gone", "question": "What no writer writes now?"}
        VerdictFile(project / "review/verdicts.jsonl").record(
            *(
                verdict_row(row, "a" if row["qid"] in failed else "pass", "", "me", "random")
                for row in [*checked, gone]
            )
        )
        run(["dvc", "repro"], project)
        commit(project, "reviewed")
        edit_params(project, generate={"max_tokens": 64})  # in the writer's identity
        assert "generate" in stages_run(run(["dvc", "repro"], project))

    now = {question_key(row): row["qid"] for row in golden_rows(project)}
    assert not {row["qid"] for row in rows} & set(now.values())  # every qid is new
    carried = [row for row in checked if question_key(row) in now]
    assert len(carried) >= len(checked) // 2  # most read the same
    failed_now = {now[question_key(row)] for row in carried if row["qid"] in failed}
    assert failed_now
    results = pd.read_parquet(project / "data/results.parquet")
    scored = set(results.loc[results["query_set"] == "synthetic", "qid"])
    assert scored == set(now.values()) - failed_now
    stale = 1 + len(checked) - len(carried)
    review = json.loads((project / "metrics/audit.json").read_text())["review"]
    assert (review["carried_over"], review["stale"]) == (len(carried), stale)
    passed = len(carried) - len(failed_now)
    assert (review["person"]["checked"], review["person"]["passed"]) == (len(carried), passed)
    report = (project / "reports/audit.md").read_text()
    assert f"- {len(carried)} verdicts carried over" in report
    lines = carried_lines(project_at(project, "me"))
    assert lines[0] == (
        f"review: {len(carried)} verdicts carried over to questions that read the same under a "
        f"new qid; {stale} stale (their question is no longer written)"
    )
    assert "review: stale: gs-gone 'What no writer writes now?' (me)" in lines
