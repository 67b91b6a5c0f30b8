"""`goldenset compare` on runs committed in a temporary git + dvc repository, read through DVC."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.dvc_project import (
    PROJECT_FILES,
    call,
    commit,
    copy_project,
    edit_params,
    run,
    write_small_corpus,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """Three commits: a baseline, a far worse embedding (4 tokens), other real queries."""
    project = copy_project(tmp_path_factory.mktemp("compare") / "project", PROJECT_FILES)
    write_small_corpus(project)
    # a remote from the start, as in CI: every revision's config names it
    run(["dvc", "remote", "add", "-d", "shared", str(project.parent / "remote")], project)
    edit_params(project, generate={"max_questions": 0})  # real queries only: no LLM
    # no golden set here: the gate names real-query metrics only
    edit_params(project, compare={"gate": ["real.dense.ndcg@10", "real.bm25.ndcg@10"]})
    run(["dvc", "repro"], project)
    commit(project, "baseline")
    run(["git", "tag", "baseline"], project)
    edit_params(project, embed={"max_seq_length": 4})  # [CLS], 2 tokens, [SEP]
    run(["dvc", "repro"], project)
    commit(project, "embed only 4 tokens")
    run(["git", "tag", "short"], project)
    edit_params(project, embed={"max_seq_length": None})
    qrels = project / "data/docs/qrels.tsv"
    lines = qrels.read_text().splitlines()
    dropped = {line.split("\t")[0] for line in lines[1:3]}
    qrels.write_text("\n".join(line for line in lines if line.split("\t")[0] not in dropped) + "\n")
    run(["dvc", "repro"], project)
    commit(project, "fewer real queries")
    run(["git", "tag", "fewer"], project)
    return project


def compare(project: Path, *args: str):
    return call([sys.executable, "-m", "goldenset", "compare", *args], project)


def test_metrics_files_keep_the_diff_readable(project):
    scores = json.loads((project / "metrics/scores.json").read_text())
    detail = json.loads((project / "metrics/detail.json").read_text())
    intervals = json.loads((project / "metrics/intervals.json").read_text())
    # real queries are judged per document: no doc_ view, and the context hit alone
    headline = ("context_hit@512", "ndcg@10", "recall@10", "mrr")
    assert set(scores["real"]["dense"]) >= {*headline, "n_queries"}
    assert "precision@5" in detail["real"]["dense"] and "mrr" not in detail["real"]["dense"]
    for set_name, retrievers in scores.items():
        for retriever, values in retrievers.items():
            for metric in headline:
                bounds = intervals[set_name][retriever][metric]
                assert bounds["low"] <= values[metric] <= bounds["high"]
    diff = json.loads(run(["dvc", "metrics", "diff", "baseline", "short", "--json"], project))
    changed = diff["metrics/scores.json"]
    # only the headline file's keys, and the embedding's change shows in each dense headline
    assert set(changed) <= {f"{s}.{r}.{m}" for s in scores for r in scores[s] for m in scores[s][r]}
    for metric in headline:
        assert changed[f"real.dense.{metric}"]["diff"] != 0


def test_identical_runs_show_no_significant_change(project):
    process = compare(project, "baseline", "baseline")
    assert process.returncode == 0, process.stderr
    assert "No significant regression" in process.stdout
    assert "REGRESSION" not in process.stdout


def test_defaults_compare_the_last_commit_with_the_workspace(project):
    same = compare(project, "--format", "markdown")
    assert same.returncode == 0, same.stderr
    assert "A = `HEAD`, B = `workspace`" in same.stdout
    # the workspace run with the 4-token embedding, not committed: the defaults must see it
    edit_params(project, embed={"max_seq_length": 4})
    try:
        run(["dvc", "repro"], project)
        process = compare(project, "--format", "markdown")
        assert process.returncode == 1, process.stderr
        assert "A = `HEAD`, B = `workspace`" in process.stdout
        assert regression_table(process.stdout)["| real", "dense", "ndcg@10"].endswith(
            "| REGRESSION |"
        )
    finally:  # back to HEAD for the other tests
        run(["git", "checkout", "HEAD", "--", "."], project)  # repro staged dvc.lock
        run(["dvc", "checkout", "--force"], project)
    restored = compare(project)
    assert restored.returncode == 0, restored.stdout + restored.stderr


def regression_table(out: str) -> dict[tuple[str, ...], str]:
    return {tuple(line.split(" | ")[:3]): line for line in out.splitlines() if "|" in line}


def test_a_much_worse_embedding_is_a_significant_regression(project):
    process = compare(project, "baseline", "short", "--format", "markdown")
    assert process.returncode == 1, process.stderr
    out = process.stdout
    print(out)
    table = regression_table(out)
    # chunks cut to 4 tokens lose nearly all their words: the ranking falls apart
    assert table["| real", "dense", "ndcg@10"].endswith("| REGRESSION |")
    bm25 = table["| real", "bm25", "ndcg@10"]
    assert "| +0.0000 |" in bm25 and "REGRESSION" not in bm25  # bm25 does not embed
    # every other metric dropped too, shown with its uncorrected p, but is not gated
    assert "| not gated |" in table["| real", "dense", "mrr"]
    assert "REGRESSION" not in table["| real", "dense", "mrr"]
    assert "Holm-corrected over 2 gated metric(s)" in out
    # the first headline metric real queries have (doc_ndcg@10 is a span-judged set's)
    assert "Most regressed questions (context_hit@512)" in out
    assert "| real | dense | doc_ndcg@10 |" not in out  # no row for a metric without values
    assert "significant regression(s) beyond budget" in out
    # what a user recognises: the query text and the text of what outranked the evidence
    queries = [json.loads(line) for line in (project / "data/docs/queries.jsonl").open()]
    assert any(f'"{query["text"][:40]}' in out for query in queries)
    assert "outranked by" in out
    # a budget larger than the drop lets the change through
    assert compare(project, "baseline", "short", "--budget", "1").returncode == 0
    # only declared metrics fail the build: gating bm25 alone lets the dense drop through
    assert compare(project, "baseline", "short", "--gate", "real.bm25.ndcg@10").returncode == 0


def test_different_question_sets_are_refused(project):
    process = compare(project, "baseline", "fewer")
    assert process.returncode == 2
    assert process.stderr.startswith("error: refused: the two runs were scored on different")
    assert "only in baseline" in process.stderr and "shared" in process.stderr
    assert compare(project, "baseline", "fewer", "--intersect").returncode == 0


def test_a_fresh_clone_reads_both_revisions_from_the_remote(project, tmp_path):
    run(["dvc", "push", "--all-commits"], project)
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", str(project), str(clone)], tmp_path)
    # nothing pulled, nothing re-run: both results come from the remote
    process = compare(clone, "baseline", "short")
    assert process.returncode == 1, process.stderr
    assert not (clone / "data/results.parquet").exists()
    assert compare(project, "nosuchrev", "short").returncode == 2


def test_a_revision_without_the_output_says_to_commit_dvc_lock(tmp_path):
    from goldenset.compare.revisions import read_bytes
    from goldenset.core.errors import GoldensetError

    repo = tmp_path / "repo"
    repo.mkdir()
    run(["git", "init", "-q"], repo)
    run(["git", "config", "user.email", "test@example.invalid"], repo)
    run(["git", "config", "user.name", "test"], repo)
    run(["dvc", "init", "-q"], repo)
    commit(repo, "dvc, no run")
    with pytest.raises(GoldensetError) as raised:
        read_bytes("data/results.parquet", "HEAD", str(repo))
    assert str(raised.value) == (
        "cannot read data/results.parquet at HEAD: that revision has no such DVC output or git "
        "file: commit dvc.lock after `dvc repro` (outputs are recorded there), or compare another "
        "revision"
    )
    with pytest.raises(GoldensetError, match="no such file in the workspace: run `dvc repro`"):
        read_bytes("data/results.parquet", None, str(repo))
