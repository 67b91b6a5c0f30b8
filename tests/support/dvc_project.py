"""A project copy driven by the real git and dvc CLIs, as a user drives it: shared by the tests
that run the pipeline, push to a remote and pull in a fresh clone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

# this repository's root (tests/support/ is two folders down): its pipeline is copied
ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = ["dvc.yaml", "params.yaml", "src", "external", "examples", "review"]


def call(
    args: list[str], cwd: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run a command with this Python's scripts (dvc, goldenset) first on the PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.update(extra_env or {})
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)


def run(args: list[str], cwd: Path, extra_env: dict[str, str] | None = None) -> str:
    result = call(args, cwd, extra_env)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


# runs at every `dvc repro` (always_changed): DVC cannot see which plugins are installed
ALWAYS_RUN = "plugins"


def stages_run(output: str) -> set[str]:
    """The stages a `dvc repro` ran, but the plugins check, which runs every time."""
    found = re.findall(r"Running stage '([^']+)'", output)
    return {name for name in found if name.rpartition(":")[2] != ALWAYS_RUN}


def edit_params(project: Path, **changes: dict) -> None:
    path = project / "params.yaml"
    params = yaml.safe_load(path.read_text())
    for section, values in changes.items():
        params[section].update(values)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def commit(project: Path, message: str) -> None:
    run(["git", "add", "-A"], project)
    run(["git", "commit", "-q", "-m", message], project)


def small_corpus(n_docs: int = 40) -> tuple[list[dict], list[str], list[list[str]]]:
    """The first documents of the shipped sample, the real queries judged on them (lines of
    queries.jsonl) and their judgments (query-id, corpus-id, score): what `goldenset demo`
    writes, read from the same package data."""
    from goldenset.demo import read_demo  # not at import: conftest imports this module

    return read_demo(n_docs)


def write_queries(folder: Path, queries: list[str], qrels: list[list[str]]) -> None:
    """Real queries beside the documents, in the BEIR layout."""
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n")
    rows = ["query-id\tcorpus-id\tscore", *("\t".join(row) for row in qrels)]
    (folder / "qrels.tsv").write_text("\n".join(rows) + "\n")


def write_small_corpus(project: Path, n_docs: int = 40) -> None:
    """The first documents of the shipped sample and the real queries judged on them."""
    docs, queries, qrels = small_corpus(n_docs)
    (project / "data/docs").mkdir(parents=True)
    (project / "data/docs/corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    write_queries(project / "data/docs", queries, qrels)


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
    shutil.copy(ROOT / ".dvcignore", project / ".dvcignore")  # this repository's, not dvc init's
    run(["dvc", "config", "core.analytics", "false"], project)
    run(["dvc", "config", "core.autostage", "true"], project)
    return project
