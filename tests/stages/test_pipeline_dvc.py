"""The pipeline with the real dvc CLI in a temporary git repository, as a user drives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("pipeline") / "project", PROJECT_FILES)
    write_small_corpus(project)
    # generation has its own tests; here the golden set stays empty so no model is loaded
    edit_params(
        project, generate={"max_questions": 0}, chunk={"strategy": "sentences", "max_size": 400}
    )
    first = run(["dvc", "repro"], project)
    assert stages_run(first) == {"ingest", "chunk", "generate", "apply", "embed", "score", "audit"}
    commit(project, "first run")
    return project


def test_the_audit_is_in_dvc_metrics_show(project):
    shown = json.loads(run(["dvc", "metrics", "show", "--json"], project))
    audit = next(iter(shown.values()))["data"]["metrics/audit.json"]["data"]
    assert audit["questions"] == 0 and audit["documents"] == 40
    real = audit["real_queries"]
    assert real["pairs"] > 0 and 0 < real["echo"]["median"] < 1
    assert (project / "reports/audit.md").read_text().startswith("# Golden set audit")


def test_nothing_changed_runs_nothing_but_the_plugins_check(project):
    output = run(["dvc", "repro"], project)
    assert stages_run(output) == set()
    assert "Running stage 'plugins'" in output  # and it changed no file another stage reads
    assert "Stage 'score' didn't change, skipping" in output


def test_score_params_rerun_only_score(project):
    edit_params(project, score={"depth": 50})
    assert stages_run(run(["dvc", "repro"], project)) == {"score"}
    commit(project, "depth 50")


def test_chunk_params_rerun_chunk_embed_score_and_metrics_diff_shows_it(project):
    edit_params(project, chunk={"max_size": 200})
    assert stages_run(run(["dvc", "repro"], project)) == {"chunk", "embed", "score"}
    commit(project, "smaller chunks")
    diff = json.loads(run(["dvc", "metrics", "diff", "HEAD~1", "HEAD", "--json"], project))
    changed = diff["metrics/scores.json"]
    assert any(name.startswith("real.") and changed[name]["diff"] != 0 for name in changed)


def test_push_then_pull_in_a_fresh_clone_restores_everything(project, tmp_path):
    remote = tmp_path / "remote"
    run(["dvc", "remote", "add", "-d", "shared", str(remote)], project)
    commit(project, "remote")
    run(["dvc", "push"], project)
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(project), str(clone)], tmp_path)
    run(["dvc", "pull"], clone)
    assert (clone / "data/embeddings/chunks.npy").exists()
    assert list((clone / "cache/embeddings").glob("*.npz"))
    output = run(["dvc", "repro"], clone)
    assert stages_run(output) == set()
    scores = json.loads((clone / "metrics/scores.json").read_text())
    assert scores == json.loads((project / "metrics/scores.json").read_text())
