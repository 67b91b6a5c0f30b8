"""The `goldenset` command as a user runs it, in subprocesses: its version and help, `goldenset
demo` and `goldenset init` on what it wrote, and both from an installed wheel."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
import yaml

import goldenset
from tests.conftest import ROOT
from tests.support.dvc_project import call, run, small_corpus, write_queries
from tests.test_own_repository_e2e import install, package_copy

REPOSITORY = re.search(
    r'^Repository = "(.+)"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M
)


def files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.iterdir())}


def repository(where: Path) -> Path:
    where.mkdir()
    run(["git", "init", "-q"], where)
    return where


def test_version_is_the_installed_distributions(tmp_path):
    shown = run(["goldenset", "--version"], tmp_path)
    assert shown == f"goldenset {goldenset.__version__}\n"
    assert goldenset.__version__ == metadata.version("goldenset-rag")


def test_help_describes_the_command_and_lists_each_subcommand(tmp_path):
    shown = run(["goldenset", "--help"], tmp_path)
    assert "Subcommands:" not in shown
    assert "Golden sets of (question -> evidence) pairs from your own documents" in shown
    for name in ("demo", "init", "compare", "calibrate"):
        assert re.search(rf"^    {name}\b", shown, re.M), name
    assert shown.rstrip().endswith("`goldenset COMMAND --help` shows a command's options.")


def test_demo_writes_the_documents_and_real_queries_init_then_scores(tmp_path):
    repo = repository(tmp_path / "repo")
    shown = run(["goldenset", "demo"], repo).splitlines()
    assert shown == [
        "goldenset demo: wrote 40 SciFact abstracts as Markdown and the 21 real queries judged "
        "on them (queries.jsonl, qrels.tsv) in docs",
        "next: goldenset init --docs docs   # in a git repository (`git init` first in a new "
        "folder)",
    ]
    # the files the tests' small corpus makes of the same documents
    expected = tmp_path / "expected"
    expected.mkdir()
    docs, queries, qrels = small_corpus(40)
    for doc in docs:
        (expected / f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n")
    write_queries(expected, queries, [[q, f"{d}.md", s] for q, d, s in qrels])
    assert files(repo / "docs") == files(expected)

    again = call(["goldenset", "demo"], repo)
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "docs exists and is not empty" in again.stderr
    assert files(repo / "docs") == files(expected)
    too_many = call(["goldenset", "demo", "more", "--documents", "101"], repo)
    assert too_many.returncode == 2 and "give 1 to 100" in too_many.stderr
    assert not (repo / "more").exists()

    package = "goldenset-rag[local] @ git+https://example.invalid/goldenset@0123abc"
    run(["goldenset", "init", "--docs", "docs", "--ci", "github", "--package", package], repo)
    params = yaml.safe_load((repo / "goldenset/params.yaml").read_text())
    assert "real.dense.ndcg@10" in params["compare"]["gate"]
    workflow = (repo / ".github/workflows/goldenset.yml").read_text()
    assert f'pip install "{package}"' in workflow
    assert "#   as `goldenset init --package` named them" in workflow
    # the plot templates dvc.yaml names, where DVC looks for them
    for name in ("recall_at_k.json", "calibration.json"):
        written = (repo / ".dvc/plots" / name).read_text()
        assert written == (ROOT / ".dvc/plots" / name).read_text()
    ingest = run([sys.executable, "-m", "goldenset.stages.ingest"], repo / "goldenset")
    assert "real queries: 21 queries, 21 judgments from ../docs" in ingest

    # before anything is asked: what the writer would take, retries counted, no key needed
    estimated = call(["goldenset", "estimate", "goldenset"], repo)
    assert estimated.returncode == 0, estimated.stderr
    assert re.search(
        r"^generate: 180 questions to ask: expect ~347 requests \(1\.9 a question, .*\), "
        r"~\d+ min one at a time",
        estimated.stderr,
        re.M,
    ), estimated.stderr
    # the bundled model runs in process: its own measured rates, one request at a time
    assert "(~2.5 s each, as the bundled model on 2 cores)" in estimated.stderr
    assert not (repo / "goldenset/data/goldenset.jsonl").exists()
    elsewhere = call(["goldenset", "estimate"], repo)
    assert elsewhere.returncode == 2 and elsewhere.stderr.count("\n") == 1
    assert "holds no params.yaml: name the pipeline's folder" in elsewhere.stderr


def test_a_few_documents_into_a_named_folder(tmp_path):
    shown = run(["goldenset", "demo", "my docs", "--documents", "5"], tmp_path)
    assert "wrote 5 SciFact abstracts" in shown and "3 real queries" in shown
    assert "next: goldenset init --docs 'my docs'" in shown
    written = files(tmp_path / "my docs")
    assert len([name for name in written if name.endswith(".md")]) == 5
    assert len(written["queries.jsonl"].splitlines()) == 3


def test_init_refusing_a_local_install_names_the_extras_the_params_and_remote_need(tmp_path):
    repo = repository(tmp_path / "repo")
    run(["goldenset", "demo", "--documents", "3"], repo)
    run(["dvc", "init", "-q"], repo)
    run(["dvc", "remote", "add", "-d", "store", "s3://bucket/dvc"], repo)
    refused = call(["goldenset", "init", "--docs", "docs", "--ci", "github"], repo)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "installed from a local path" in refused.stderr
    assert '--package "goldenset-rag[local,s3] @ git+' in refused.stderr
    assert not (repo / "goldenset").exists()


@pytest.mark.slow
def test_from_a_wheel_ci_installs_the_versions_tag_with_the_extras_it_needs(tmp_path):
    """pip install of a wheel built from this project: the demo documents are package data,
    test support stays out of it, and CI installs the version's tag from the repository named in
    pyproject.toml."""
    assert REPOSITORY is not None
    source = package_copy(tmp_path / "source")
    wheels = tmp_path / "wheels"
    build = ["-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels)]
    subprocess.run([sys.executable, *build, str(source)], check=True, capture_output=True)
    wheel = next(wheels.glob("*.whl"))
    with zipfile.ZipFile(wheel) as shipped:
        names = shipped.namelist()
    assert "goldenset/llm_stand_in.py" in names  # the docs' pages start it
    assert not [name for name in names if name.startswith(("goldenset/testing/", "tests/"))]
    env = install(wheel, tmp_path)
    repo = repository(tmp_path / "repo")

    def sh(*args: str) -> str:
        done = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    located = sh("python", "-c", "import goldenset; print(goldenset.__file__)")
    assert located.startswith(str(tmp_path / "venv")), located
    assert sh("goldenset", "--version") == f"goldenset {goldenset.__version__}\n"
    assert "wrote 40 SciFact abstracts" in sh("goldenset", "demo")
    sh("dvc", "init", "-q")
    sh("dvc", "remote", "add", "-d", "store", "s3://bucket/dvc")
    made = sh("goldenset", "init", "--docs", "docs", "--ci", "github")
    package = f"goldenset-rag[local,s3] @ git+{REPOSITORY[1]}@v{goldenset.__version__}"
    assert f"goldenset init: CI installs {package}" in made
    workflow = (repo / ".github/workflows/goldenset.yml").read_text()
    assert f'pip install "{package}"' in workflow
    assert (
        "#   local: the bundled model" in workflow and "#   s3: the DVC remote is on S3" in workflow
    )
    manifest = yaml.safe_load((repo / "goldenset/goldenset.yaml").read_text())
    assert manifest["package"] == package
    assert json.loads(sh("python", "-c", URLS)) == {
        "Repository": REPOSITORY[1],
        "Changelog": f"{REPOSITORY[1]}/blob/main/CHANGELOG.md",
    }


URLS = (
    "import json; from goldenset.init import project_url; "
    "print(json.dumps({label: project_url(label) for label in ('Repository', 'Changelog')}))"
)
