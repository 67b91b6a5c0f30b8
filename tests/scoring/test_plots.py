"""The recall plot as a person sees it: `dvc plots show` and `dvc plots diff` drawn by headless
Chromium from the project's dvc.yaml and plot template, in a temporary git repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from goldenset.scoring.outputs import recall_plot_rows
from tests.browser import Node, Plot, chromium, draw, page_template
from tests.conftest import ROOT
from tests.support.dvc_project import commit, copy_project, run

KS = [1, 3, 5, 10]


def scored(sets: list[str], retrievers: list[str], shift: float) -> dict:
    """Metrics as the score stage nests them, with other metrics beside recall@k."""
    return {
        name: {
            retriever: {
                **{f"recall@{k}": 0.3 + 0.05 * k + 0.01 * i + shift for k in KS},
                **{f"hit@{k}": 0.9 for k in KS},
                "mrr": 0.5,
                "n_queries": 20.0,
            }
            for i, retriever in enumerate(retrievers)
        }
        for name in sets
    }


def test_plot_rows_hold_recall_of_what_was_scored_only():
    metrics = {
        "real": {"bm25": {"recall@1": 0.25, "recall@5": 0.5, "hit@1": 0.9, "mrr": 0.4}},
        "labelled": {
            "dense": {"recall@1": 0.125, "recall@5": 0.75, "ndcg@5": 0.3},
            "hybrid": {"recall@1": 0.0, "recall@5": 1.0},
        },
    }
    assert recall_plot_rows(metrics, [1, 5]) == [
        {"query_set": "real", "retriever": "bm25", "k": 1, "recall": 0.25},
        {"query_set": "real", "retriever": "bm25", "k": 5, "recall": 0.5},
        {"query_set": "labelled", "retriever": "dense", "k": 1, "recall": 0.125},
        {"query_set": "labelled", "retriever": "dense", "k": 5, "recall": 0.75},
        {"query_set": "labelled", "retriever": "hybrid", "k": 1, "recall": 0.0},
        {"query_set": "labelled", "retriever": "hybrid", "k": 5, "recall": 1.0},
    ]


def write_plot(project: Path, metrics: dict) -> None:
    path = project / "plots/recall_at_k.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(recall_plot_rows(metrics, KS), indent=2) + "\n")


@pytest.fixture(scope="module")
def browser() -> str:
    return chromium()


@pytest.fixture(scope="module")
def project(tmp_path_factory, browser) -> Path:  # no browser: fail before any work
    """A baseline commit scoring two query sets with three retrievers (external disabled), then a
    workspace that adds the labelled set and the ann retriever; the page that loads local vega."""
    project = copy_project(
        tmp_path_factory.mktemp("plots") / "project", ["dvc.yaml", "params.yaml"]
    )
    shutil.copytree(ROOT / ".dvc/plots", project / ".dvc/plots")
    write_plot(project, scored(["synthetic", "real"], ["dense", "bm25", "hybrid"], 0.0))
    commit(project, "baseline")
    run(["git", "tag", "baseline"], project)
    sets, retrievers = ["synthetic", "labelled", "real"], ["dense", "bm25", "hybrid", "ann"]
    write_plot(project, scored(sets, retrievers, 0.02))
    page_template(project)
    return project


def drawn(project: Path, browser: str, *command: str) -> Plot:
    out = project / f"drawn-{command[0]}"
    # the recall plot alone: dvc.yaml also declares calibrate's, which this project never wrote
    target = ["--targets"] * (command[0] == "diff") + ["plots/recall_at_k.json"]
    run(
        ["dvc", "plots", *command, *target, "--html-template", "page.html", "-o", str(out)], project
    )
    plots = draw(out / "index.html", browser)
    assert len(plots) == 1, f"{len(plots)} plots drawn, one expected"
    return plots[0]


def lines(panel: Node) -> int:
    return len(panel.find("mark-line"))


def assert_readable(plot: Plot) -> None:
    """A panel per query set, labelled axes, and no trace of the disabled retriever."""
    assert plot.panel_labels == ["labelled", "real", "synthetic"]
    assert len(plot.panels) == 3
    assert plot.axis_titles == {"k", "recall@k"}
    assert "Recall at k" in plot.words
    assert plot.legend("retriever") == ["ann", "bm25", "dense", "hybrid"]
    assert "external" not in plot.words


@pytest.mark.slow
def test_show_draws_one_panel_per_query_set_with_the_scored_retrievers(project, browser):
    plot = drawn(project, browser, "show")
    assert_readable(plot)
    assert plot.legend("revision") == ["workspace"]
    assert [lines(panel) for panel in plot.panels] == [4, 4, 4]


@pytest.mark.slow
def test_diff_tells_revisions_apart_by_dash(project, browser):
    plot = drawn(project, browser, "diff", "baseline")
    assert_readable(plot)
    assert sorted(plot.legend("revision")) == ["baseline", "workspace"]
    # labelled is new: the workspace's 4 retrievers; the others add the baseline's 3
    assert [lines(panel) for panel in plot.panels] == [4, 7, 7]
