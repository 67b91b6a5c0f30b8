"""Plugins through the real door: two toy distributions (tests/toy_plugins: a question writer, a
chunking strategy, a metric and a query set in one, a retriever in the other), installed with pip
into a virtual environment of their own, found through their entry points by the real `dvc repro`
and `goldenset compare`; upgrading the retriever's distribution re-runs score alone. The suite's
own environment never sees them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest
from goldenset.metrics.measures import MEASURES
from goldenset.scoring.retrievers import RETRIEVERS

from goldenset.chunking.base import STRATEGIES
from goldenset.corpus.querysets import QUERY_SETS
from goldenset.generation.providers.registry import PROVIDERS
from tests.support.dvc_project import (
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
TOYS = ROOT / "tests" / "toy_plugins"


def plugin_environment(folder: Path) -> Path:
    """A virtual environment that sees this one's packages (goldenset included) and holds what
    is installed into it alone; returns its bin folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    parent = sysconfig.get_paths()["purelib"]
    Path(site, "goldenset_parent.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
    return folder / "bin"


def install(bin_folder: Path, source: Path, version: str, work: Path) -> None:
    """pip-install a toy distribution at a version, offline, from a copy of its folder."""
    copy = work / f"{source.name}-{version}"
    shutil.copytree(source, copy)
    pyproject = copy / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('version = "0.1.0"', f'version = "{version}"')
    )
    pip = [sys.executable, "-m", "pip", "--python", str(bin_folder / "python"), "install", "-q"]
    options = ["--no-deps", "--no-build-isolation", "--no-index", "--force-reinstall"]
    subprocess.run([*pip, *options, str(copy)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, dict[str, str], set[str]]:
    """Two commits scored with the toys: the toy writer's questions on the toy chunker's chunks,
    the toy retriever's k1 at 1.2, then at 0.1; then the retriever's distribution upgraded."""
    base = tmp_path_factory.mktemp("plugins")
    bin_folder = plugin_environment(base / "env")
    install(bin_folder, TOYS / "goldenset-toy", "0.1.0", base)
    install(bin_folder, TOYS / "goldenset-toy-search", "0.1.0", base)
    env = {
        "PATH": os.pathsep.join(
            [str(bin_folder), str(Path(sys.executable).parent), os.environ["PATH"]]
        )
    }
    project = copy_project(base / "project", PROJECT_FILES)
    write_small_corpus(project, n_docs=20)
    edit_params(
        project,
        chunk={"strategy": "toy", "toy": {"parts": 3}},  # the toy chunker's own section
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
    install(bin_folder, TOYS / "goldenset-toy-search", "0.2.0", base)
    upgraded = stages_run(run(["dvc", "repro", "score"], project, env))
    return project, env, upgraded


def test_the_suites_own_environment_sees_no_toy():
    for registry in [RETRIEVERS, PROVIDERS, MEASURES, STRATEGIES, QUERY_SETS]:
        assert "toy" not in registry and "found" not in registry


def test_the_toy_chunker_cuts_with_its_own_params(project):
    folder, _, _ = project
    documents = pd.read_parquet(folder / "data/documents.parquet")
    chunks = pd.read_parquet(folder / "data/chunks.parquet")
    assert chunks.groupby("doc_id").size().max() == 3
    first = documents["text"].iloc[0]
    starts = chunks.loc[chunks["doc_id"] == documents["doc_id"].iloc[0], "start"].tolist()
    assert starts[0] == 0 and abs(starts[1] - len(first) // 3) < 3


def test_the_toy_writer_writes_the_golden_set(project):
    folder, _, _ = project
    rows = [json.loads(line) for line in (folder / "data/goldenset.jsonl").read_text().splitlines()]
    assert rows and {(row["provider"], row["model"]) for row in rows} == {("toy", "toy-writer")}
    assert all(row["question"].startswith("What do we know of ") for row in rows)


def test_the_toy_retriever_and_metric_are_scored(project):
    folder, _, _ = project
    scores = json.loads((folder / "metrics/scores.json").read_text())
    detail = json.loads((folder / "metrics/detail.json").read_text())
    assert set(scores["real"]) == {"dense", "bm25", "ann", "hybrid", "toy"}
    for values in scores["real"].values():
        assert 0 <= values["found@10"] <= 10
    assert 0 <= detail["real"]["toy"]["found@1"] <= 1
    assert scores["real"]["toy"]["ndcg@10"] > 0
    # the toy metric declares no chance level: it gets one estimated over random rankings
    assert 0 <= detail["chance"]["real"]["found@10"] <= 10


def test_the_toy_query_set_is_made_by_ingest_embedded_and_scored(project):
    folder, _, _ = project
    made = json.loads((folder / "data/query_sets/sets.json").read_text())
    assert made == {"toy": 20}  # one question per document
    scores = json.loads((folder / "metrics/scores.json").read_text())
    assert list(scores) == ["synthetic", "real", "toy"]  # registration order, the plugin last
    # each question is its document's opening words: every retriever finds it near the top
    assert scores["toy"]["bm25"]["ndcg@10"] > 0.8
    assert (folder / "data/embeddings/toy.npy").is_file()
    assert (folder / "data/export/runs/toy.toy.trec").is_file()


def test_each_extension_points_plugins_and_versions_are_written(project):
    folder, _, _ = project
    written = {
        point: json.loads((folder / f"data/plugins/{point}.json").read_text())
        for point in ["retrievers", "providers", "metrics", "chunking", "query_sets"]
    }
    assert written["retrievers"] == {"goldenset-toy-search": "0.2.0"}
    assert written["providers"] == written["chunking"] == {"goldenset-toy": "0.1.0"}
    assert written["metrics"] == written["query_sets"] == {"goldenset-toy": "0.1.0"}


def test_upgrading_the_retriever_plugin_re_runs_score_alone(project):
    _, _, upgraded = project
    assert upgraded == {"score"}  # and the plugins check, which runs every time


def test_goldenset_compare_compares_the_toy_metric_of_the_toy_retriever(project):
    folder, env, _ = project
    process = call(
        ["python", "-m", "goldenset", "compare", "a", "b", "--format", "markdown"]
        + ["--gate", "real.toy.ndcg@10"],
        folder,
        env,
    )
    assert process.returncode in (0, 1), process.stderr
    rows = {tuple(line.split(" | ")[:3]) for line in process.stdout.splitlines() if "|" in line}
    assert "Holm-corrected over 1 gated metric(s)" in process.stdout
    assert {("| real", "toy", "found@10"), ("| real", "toy", "ndcg@10")} <= rows
    assert {("| real", "dense", "found@10"), ("| toy", "toy", "found@10")} <= rows
