"""The SQuAD Super Bowl 50 article as a labelled set: 810 crowd-written questions, one document.

Runs `dvc exp run -S ...` in a temporary git copy of the project, as a user would.
"""

from __future__ import annotations

import json

import pytest

from tests.support.dvc_project import PROJECT_FILES, commit, copy_project, run

pytestmark = pytest.mark.slow


def test_every_super_bowl_question_is_scored_per_chunk(squad_file, tmp_path):
    project = copy_project(tmp_path / "project", PROJECT_FILES)
    commit(project, "project")
    settings = {
        "ingest.path": squad_file.parent,
        "ingest.exclude": "[SOURCE.md]",
        "chunk.strategy": "sentences",
        "chunk.max_size": 600,
        "generate.max_questions": 0,
    }
    output = run(
        [
            "dvc",
            "exp",
            "run",
            *(f for name, value in settings.items() for f in ("-S", f"{name}={value}")),
        ],
        project,
    )
    assert "labelled: 810 questions, 1,370 evidence spans from SQuAD files" in output
    scores = json.loads((project / "metrics/scores.json").read_text())
    print(f"SQuAD Super Bowl 50, sentences 600: {scores['labelled']}")
    assert set(scores) == {"labelled"}  # no golden set, no real queries
    for values in scores["labelled"].values():
        assert values["n_queries"] == 810
    # crowdworkers reuse the paragraph's words: lexical retrieval is strong here (SOURCE.md)
    assert scores["labelled"]["bm25"]["recall@10"] > 0.5
    assert scores["labelled"]["dense"]["recall@10"] > 0.5
