"""The pipeline with the real dvc CLI in a temporary git repository, as a user drives it."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow
PROJECT_FILES = ["dvc.yaml", "params.yaml", "stages", "src", "external"]


def run(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def stages_run(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def edit_params(project: Path, **changes: dict) -> None:
    path = project / "params.yaml"
    params = yaml.safe_load(path.read_text())
    for section, values in changes.items():
        params[section].update(values)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def commit(project: Path, message: str) -> None:
    run(["git", "add", "-A"], project)
    run(["git", "commit", "-q", "-m", message], project)


def write_small_corpus(project: Path, n_docs: int = 40) -> None:
    """The first documents of the shipped sample and the real queries judged on them."""
    with gzip.open(ROOT / "data/docs/scifact-sample.jsonl.gz", "rt") as sample:
        docs = [json.loads(line) for _, line in zip(range(n_docs), sample, strict=False)]
    doc_ids = {doc["_id"] for doc in docs}
    qrels = [
        line.split("\t")
        for line in (ROOT / "data/queries/qrels.tsv").read_text().splitlines()[1:]
        if line.split("\t")[1] in doc_ids
    ]
    qids = {qid for qid, _, _ in qrels}
    queries = [
        line
        for line in (ROOT / "data/queries/queries.jsonl").read_text().splitlines()
        if json.loads(line)["_id"] in qids
    ]
    (project / "data/docs").mkdir(parents=True)
    (project / "data/queries").mkdir(parents=True)
    (project / "data/docs/corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (project / "data/queries/queries.jsonl").write_text("\n".join(queries) + "\n")
    rows = ["query-id\tcorpus-id\tscore", *("\t".join(row) for row in qrels)]
    (project / "data/queries/qrels.tsv").write_text("\n".join(rows) + "\n")


def copy_project(project: Path, names: list[str]) -> Path:
    """A git + dvc repository holding a copy of the named project files."""
    project.mkdir(parents=True)
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, project / name)
    run(["git", "init", "-q"], project)
    run(["git", "config", "user.email", "test@example.invalid"], project)
    run(["git", "config", "user.name", "test"], project)
    run(["dvc", "init", "-q"], project)
    run(["dvc", "config", "core.analytics", "false"], project)
    run(["dvc", "config", "core.autostage", "true"], project)
    return project


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    project = copy_project(tmp_path_factory.mktemp("pipeline") / "project", PROJECT_FILES)
    write_small_corpus(project)
    # generation has its own tests; here the golden set stays empty so no model is loaded
    edit_params(
        project, generate={"max_questions": 0}, chunk={"strategy": "sentences", "max_size": 400}
    )
    first = run(["dvc", "repro"], project)
    assert stages_run(first) == {"ingest", "chunk", "generate", "embed", "score"}
    commit(project, "first run")
    return project


def test_nothing_changed_runs_nothing(project):
    output = run(["dvc", "repro"], project)
    assert stages_run(output) == set()
    assert "up to date" in output


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
