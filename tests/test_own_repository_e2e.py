"""goldenset in your own repository: a real `pip install` of this project from its git URL into a
fresh virtual environment (on top of the test one, offline: git serves the URL from a local
repository), `goldenset init` in a git repository holding
Markdown documents and its own `search/` retriever, `dvc repro` with the local model, the
pull-request gate script against a local DVC remote, and `goldenset init --upgrade` after an
upgrade that adds a param, installed editable (from a local path: CI cannot install that, so
init asks for --package). Nothing here imports this checkout: commands run the installed
package (no PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.support.dvc_project import small_corpus, stages_run, write_queries

pytestmark = pytest.mark.slow

PACKAGE_FILES = ["pyproject.toml", "README.md", "dvc.yaml", "params.yaml", ".dvc/plots", "src"]
SEARCH = """\
import re


def words(text):
    return set(re.findall(r"\\w+", text.lower()))


def search(query_texts, chunk_ids, chunk_texts, k):
    chunks = [words(text) for text in chunk_texts]
    ranked = []
    for query in query_texts:
        shared = [len(words(query) & chunk) for chunk in chunks]
        order = sorted(range(len(chunk_ids)), key=lambda i: SIGN * shared[i])
        ranked.append([chunk_ids[i] for i in order[:k]])
    return ranked
"""
ORIGIN = "https://github.com/example/goldenset"  # served by a local repository: see git_source
GOOD, WORSE = SEARCH + "\n\nSIGN = -1  # most shared words first\n", SEARCH + "\n\nSIGN = 1\n"


def sh(args: list[str], cwd: Path, env: dict[str, str], status: int | None = 0):
    process = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if status is not None:
        assert process.returncode == status, f"{args}:\n{process.stdout}\n{process.stderr}"
    return process


def install(
    source: Path | str, where: Path, editable: bool = False, git: dict[str, str] | None = None
) -> dict[str, str]:
    """`pip install` the project at `source` (a folder, or a requirement) into a new virtual
    environment that also sees the test environment's packages (its dependencies: no network);
    the environment of commands that use it. `git`: environment variables for pip's git."""
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    # after the new environment's own packages: the installed goldenset comes first
    (venv / "lib" / version / "site-packages" / "test-env.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), str(Path(sys.executable).parent), env["PATH"]]),
        VIRTUAL_ENV=str(venv),
        HF_HUB_OFFLINE="1",
    )
    pip = ["python", "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
    sh([*pip, *(["-e"] if editable else []), str(source)], where, {**env, **(git or {})})
    return env


def package_copy(where: Path, change: Callable[[Path], None] | None = None) -> Path:
    """This project's package files (the templates' links kept), changed by `change`."""
    where.mkdir(parents=True)
    for name in PACKAGE_FILES:
        source, target = ROOT / name, where / name
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(source, target, symlinks=True, ignore=ignore)
        else:
            shutil.copy(source, target)
    if change is not None:
        change(where)
    return where


def git_source(source: Path) -> tuple[str, dict[str, str]]:
    """Commit the package files at `source`: the commit, and the environment in which git
    fetches ORIGIN from there."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    git = ["git", "-c", "user.email=test@example.invalid", "-c", "user.name=test"]
    sh(["git", "init", "-q", "-b", "main"], source, env)
    sh(["git", "add", "-A"], source, env)
    sh([*git, "commit", "-q", "-m", "goldenset"], source, env)
    commit = sh(["git", "rev-parse", "HEAD"], source, env).stdout.strip()
    rewrite = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{source.as_uri()}.insteadOf",
        "GIT_CONFIG_VALUE_0": ORIGIN,
    }
    return commit, rewrite


@pytest.fixture(scope="module")
def source_commit(tmp_path_factory) -> tuple[Path, str, dict[str, str]]:
    """This project committed: (its folder, the commit, the environment serving ORIGIN)."""
    source = package_copy(tmp_path_factory.mktemp("origin") / "source")
    return (source, *git_source(source))


@pytest.fixture(scope="module")
def installed(tmp_path_factory, source_commit) -> dict[str, str]:
    """`pip install goldenset-rag @ git+ORIGIN@COMMIT`, as a user installs it from GitHub."""
    where = tmp_path_factory.mktemp("installed")
    _, commit, rewrite = source_commit
    env = install(f"goldenset-rag @ git+{ORIGIN}@{commit}", where, git=rewrite)
    located = sh(["python", "-c", "import goldenset; print(goldenset.__file__)"], where, env)
    assert located.stdout.startswith(str(where / "venv")), located.stdout
    return env


def edit(path: Path, change: Callable[[dict], None]) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def commit(repo: Path, env: dict[str, str], message: str) -> None:
    sh(["git", "add", "-A"], repo, env)
    sh(["git", "commit", "-q", "-m", message], repo, env)


@pytest.fixture(scope="module")
def repository(tmp_path_factory, installed) -> tuple[Path, str, str]:
    """A repository with docs/ (Markdown, and real queries) and search/, its goldenset pipeline
    made by `goldenset init` and run once: (repo, init's output, the run's output)."""
    repo = tmp_path_factory.mktemp("user") / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "search").mkdir()
    sh(["git", "init", "-q", "-b", "main"], repo, installed)
    sh(["git", "config", "user.email", "test@example.invalid"], repo, installed)
    sh(["git", "config", "user.name", "test"], repo, installed)
    docs, queries, qrels = small_corpus()
    for doc in docs:
        (repo / "docs" / f"{doc['_id']}.md").write_text(f"# {doc['title']}\n\n{doc['text']}\n")
    write_queries(repo / "docs", queries, [[q, f"{d}.md", s] for q, d, s in qrels])
    (repo / "search" / "retrieve.py").write_text(GOOD)
    made = sh(
        ["goldenset", "init", "--docs", "docs", "--ci", "github"]
        + ["--retriever", "search.retrieve:search"],
        repo,
        installed,
    ).stdout
    edit(
        repo / "goldenset" / "params.yaml",
        lambda params: params["generate"].update(max_questions=3),
    )
    commit(repo, installed, "goldenset pipeline")
    output = sh(["dvc", "repro", "goldenset/dvc.yaml"], repo, installed)
    commit(repo, installed, "goldenset run")
    return repo, made, output.stdout + output.stderr


def test_init_then_dvc_repro_scores_the_golden_set_and_your_retriever(
    repository, installed, source_commit
):
    repo, made, output = repository
    assert "`dvc init`" in made and "dvc repro goldenset/dvc.yaml" in made
    pipeline = repo / "goldenset"
    assert (repo / ".dvc").is_dir() and (repo / ".github/workflows/goldenset.yml").exists()
    params = yaml.safe_load((pipeline / "params.yaml").read_text())
    assert params["ingest"]["path"] == "../docs"
    assert params["retrievers"]["external"]["folder"] == "../search"
    stages = {"ingest", "chunk", "generate", "apply", "embed", "score", "audit"}
    assert stages_run(output) == {f"goldenset/dvc.yaml:{name}" for name in stages}
    scores = json.loads((pipeline / "metrics/scores.json").read_text())
    golden = (pipeline / "data/goldenset.jsonl").read_text().splitlines()
    assert 0 < len(golden) <= 3
    assert scores["synthetic"]["external"]["n_queries"] == len(golden)
    assert scores["real"]["external"]["ndcg@10"] > 0.5  # word overlap finds SciFact's claims
    manifest = yaml.safe_load((pipeline / "goldenset.yaml").read_text())
    assert manifest["goldenset"] and set(manifest["code"]) == stages | {"plugins"}
    # CI installs the very commit pip installed, under the distribution's name
    pinned = f"goldenset-rag[local] @ git+{ORIGIN}@{source_commit[1]}"
    assert manifest["package"] == pinned
    workflow = (repo / ".github/workflows/goldenset.yml").read_text()
    assert f'pip install "{pinned}"' in workflow

    # your retriever is a dep of score, and of score alone
    (repo / "search" / "retrieve.py").write_text(GOOD + "# tuned\n")
    dry = sh(["dvc", "repro", "--dry", "goldenset/dvc.yaml"], repo, installed).stdout
    assert stages_run(dry) == {"goldenset/dvc.yaml:score"}
    # ... and so it is from the top of the repository, beside the repository's own stages
    sh(
        ["dvc", "stage", "add", "-q", "-n", "mine", "-o", "mine.txt", "echo hi > mine.txt"],
        repo,
        installed,
    )
    dry = sh(["dvc", "repro", "--dry", "-P"], repo, installed).stdout
    assert stages_run(dry) == {"mine", "goldenset/dvc.yaml:score"}
    sh(["git", "checkout", "-q", "."], repo, installed)
    for name in ("dvc.yaml", ".gitignore"):
        (repo / name).unlink(missing_ok=True)

    # a second init refuses in one line; --force writes the files again, a foreign one never
    again = sh(["goldenset", "init", "--docs", "docs"], repo, installed, status=2)
    assert again.stderr.count("\n") == 1 and "already holds a goldenset pipeline" in again.stderr
    (repo / "notes").mkdir()
    (repo / "notes" / "params.yaml").write_text("mine: true\n")
    foreign = sh(["goldenset", "init", "notes", "--docs", "docs", "--force"], repo, installed, 2)
    assert "holds params.yaml, not written by goldenset init" in foreign.stderr
    assert (repo / "notes" / "params.yaml").read_text() == "mine: true\n"
    shutil.rmtree(repo / "notes")


def test_the_pull_request_gate_fails_a_worse_retriever_and_passes_the_same(
    repository, installed, tmp_path
):
    repo = repository[0]
    workflow = yaml.safe_load((repo / ".github/workflows/goldenset.yml").read_text())
    gate = next(
        step for step in workflow["jobs"]["gate"]["steps"] if "gate.sh" in step.get("run", "")
    )
    assert 'goldenset/gate.sh "origin/${{ github.base_ref }}"' in gate["run"]
    # no remote yet: the script says so (here the local cache holds both runs' outputs)
    sh(["git", "checkout", "-q", "-b", "notes"], repo, installed)
    (repo / "NOTES.md").write_text("Notes.\n")
    commit(repo, installed, "notes")
    alone = sh(["bash", "goldenset/gate.sh", "main", "report.md"], repo, installed, 0)
    assert "no DVC remote: every stage runs from scratch" in alone.stdout
    assert stages_run(alone.stdout) == set()
    sh(["git", "checkout", "-q", "main"], repo, installed)
    (repo / "report.md").unlink()
    # the base branch's run shared on a remote, as a merge to main would leave it
    sh(["dvc", "remote", "add", "-d", "shared", str(tmp_path / "remote")], repo, installed)
    commit(repo, installed, "a DVC remote")
    sh(["dvc", "push"], repo, installed)

    def pull_request(branch: str, name: str, text: str) -> Path:
        """A branch changing one file, checked out as CI checks it out: a fresh clone."""
        sh(["git", "checkout", "-q", "-b", branch, "main"], repo, installed)
        (repo / name).write_text(text)
        commit(repo, installed, branch)
        sh(["git", "checkout", "-q", "main"], repo, installed)
        clone = tmp_path / branch
        sh(["git", "clone", "-q", "-b", branch, str(repo), str(clone)], tmp_path, installed)
        return clone

    worse = pull_request("worse", "search/retrieve.py", WORSE)
    run = sh(["bash", "goldenset/gate.sh", "origin/main", "report.md"], worse, installed, 1)
    assert "outputs come from the DVC remote" in run.stdout
    # the base's outputs all pulled, the candidate's retriever re-scored
    assert stages_run(run.stdout) == {"goldenset/dvc.yaml:score"}
    report = (worse / "report.md").read_text()
    assert report.startswith("<!-- goldenset gate -->")
    row = next(line for line in report.splitlines() if "| real | external | ndcg@10 |" in line)
    assert row.endswith("| REGRESSION |"), report

    same = pull_request("same", "NOTES.md", "A change that leaves retrieval alone.\n")
    run = sh(["bash", "goldenset/gate.sh", "origin/main", "report.md"], same, installed, 0)
    assert stages_run(run.stdout) == set()
    assert "No significant regression" in (same / "report.md").read_text()


def add_a_param(source: Path) -> None:
    """The package's next version: a new score param, in the model and in params.yaml."""
    for name, old, new in [
        (
            "src/goldenset/scoring/params.py",
            "    worst_misses_chars: int = Field(",
            "    probe: int = 7\n    worst_misses_chars: int = Field(",
        ),
        ("params.yaml", "\naudit:", "  probe: 7                # new in 0.2.0\n\naudit:"),
        ("src/goldenset/__init__.py", '__version__ = "0.1.0"', '__version__ = "0.2.0"'),
        ("pyproject.toml", 'version = "0.1.0"', 'version = "0.2.0"'),
    ]:
        path = source / name
        text = path.read_text()
        assert text.count(old) == 1, (name, old)
        path.write_text(text.replace(old, new))


def test_upgrade_adds_the_new_param_and_keeps_your_values(repository, installed, tmp_path):
    repo = repository[0]
    pipeline = repo / "goldenset"
    edit(pipeline / "params.yaml", lambda params: params["score"].update(worst_misses=4))
    commit(repo, installed, "fewer worst misses")
    before = yaml.safe_load((pipeline / "goldenset.yaml").read_text())
    upgraded = install(package_copy(tmp_path / "source", add_a_param), tmp_path, editable=True)
    # installed from a local path: CI cannot install that, and init guesses nothing
    workflow = repo / ".github/workflows/goldenset.yml"
    written = {path: path.read_text() for path in [workflow, pipeline / "goldenset.yaml"]}
    refused = sh(["goldenset", "init", "--upgrade"], repo, upgraded, status=2)
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert "installed from a local path (" in refused.stderr and "/source)" in refused.stderr
    assert '--package "goldenset-rag[local] @ git+' in refused.stderr
    assert {path: path.read_text() for path in written} == written
    package = f"goldenset-rag[local] @ git+{ORIGIN}@v0.2.0"
    out = sh(["goldenset", "init", "--upgrade", "--package", package], repo, upgraded).stdout
    assert "params added: score.probe" in out
    assert f'pip install "{package}"' in workflow.read_text()

    params = yaml.safe_load((pipeline / "params.yaml").read_text())
    assert params["score"]["probe"] == 7  # the new default
    assert params["score"]["worst_misses"] == 4 and params["generate"]["max_questions"] == 3
    assert params["ingest"]["path"] == "../docs"
    assert params["retrievers"]["external"]["callable"] == "search.retrieve:search"
    after = yaml.safe_load((pipeline / "goldenset.yaml").read_text())
    assert after["goldenset"] == "0.2.0" and after["package"] == package
    # the score section's module runs in the stages that read it, score and audit, only
    changed = {name for name, code in before["code"].items() if after["code"][name] != code}
    assert changed == {"score", "audit"}
    dry = sh(["dvc", "repro", "--dry", "goldenset/dvc.yaml"], repo, upgraded).stdout
    assert "goldenset/dvc.yaml:score" in stages_run(dry)
