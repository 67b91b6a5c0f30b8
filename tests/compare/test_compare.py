"""Paired comparison of two runs' per-question results (no disk, no git)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import norm

from goldenset.compare.gate import Row, apply_gate
from goldenset.compare.paired import (
    DifferentQuestions,
    between_retrievers,
    compare,
    gate_between_retrievers,
    metric_columns,
    pair,
)
from goldenset.compare.params import CompareParams
from goldenset.compare.regressed import Texts, most_regressed
from goldenset.compare.render import render_markdown, render_text, verdict
from goldenset.core.errors import GoldensetError
from goldenset.core.stats import holm_adjusted, randomization_test
from tests.conftest import ROOT

LABELS = ("main", "workspace")
# nothing gated: every row is information (params.yaml's compare.gate names at least one)
SETTINGS = CompareParams.model_construct(gate=[], resamples=1000, permutations=5000)


def replace(settings: CompareParams, **changes) -> CompareParams:
    return settings.model_copy(update=changes)


def results(ranks: dict[str, list[int | None]], qids: list[str] | None = None) -> pd.DataFrame:
    """Rows as the score stage writes them, for the real set: one retriever per key of ranks."""
    frames = []
    for retriever, first in ranks.items():
        ids = qids or [f"q{i}" for i in range(len(first))]
        rr = np.array([1.0 / r if r else 0.0 for r in first])
        frames.append(
            pd.DataFrame(
                {
                    "query_set": "real",
                    "retriever": retriever,
                    "qid": ids,
                    "first_relevant_rank": pd.array(first, dtype="Int64"),
                    "top_ids": [[f"other{i}", f"doc{i}"] for i in range(len(first))],
                    "top_scores": [[0.9, 0.8] for _ in first],
                    "mrr": rr,
                    "recall@10": (rr > 0).astype(float),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def rows_by_key(rows):
    return {(row.retriever, row.metric): row for row in rows}


def test_identical_runs_show_no_change():
    run = results({"dense": [1, 2, None, 1, 3] * 6, "bm25": [2, 1, 1, None, 1] * 6})
    rows = compare(pair(run, run, LABELS), ["mrr", "recall@10"], SETTINGS)
    assert len(rows) == 4
    for row in rows:
        assert (row.delta, row.low, row.high, row.p_value) == (0.0, 0.0, 0.0, 1.0)
        assert (row.worse, row.better, row.n) == (0, 0, 30)
        assert not row.regression and not row.improvement
    assert verdict(rows, SETTINGS).startswith("No significant regression")
    # no row separates A from B: each is undecided, which both reports say under the verdict
    for render in (render_markdown, render_text):
        assert "Undecided: 4 of 4 rows (p >= 0.05)" in render(rows, [], Texts(), LABELS, SETTINGS)


def test_a_consistent_drop_is_a_regression_and_a_budget_can_allow_it():
    a = results({"dense": [1] * 30, "bm25": [1] * 30})
    b = results({"dense": [2] * 24 + [1] * 6, "bm25": [1] * 30})
    paired = pair(a, b, LABELS)
    gated = replace(SETTINGS, gate=("real.dense.mrr", "real.dense.recall@10", "real.bm25.mrr"))
    rows = rows_by_key(compare(paired, ["mrr", "recall@10"], gated))
    dense = rows["dense", "mrr"]
    assert dense.delta == pytest.approx(-0.4)
    assert dense.p_value < 0.001 and not dense.exact
    assert dense.low <= -0.4 <= dense.high < 0
    assert (dense.worse, dense.better) == (24, 0)
    assert dense.regression and dense.gated and dense.p_gate == pytest.approx(3 * dense.p_value)
    assert not rows["dense", "recall@10"].regression  # every question still found in the top 10
    assert not rows["bm25", "mrr"].regression
    lenient = replace(gated, gate=("real.dense.mrr",), budgets={"mrr": 0.5})
    allowed = compare(paired, ["mrr"], lenient)
    assert not any(row.regression for row in allowed)
    assert "| worse, within budget |" in render_markdown(allowed, [], Texts(), LABELS, lenient)
    assert "1 significant regression(s)" in verdict(list(rows.values()), gated)
    # the same drop outside the gate is shown, with its uncorrected p, and fails nothing
    ungated = compare(paired, ["mrr"], replace(gated, gate=("real.bm25.mrr",)))
    assert not any(row.regression for row in ungated)
    assert "| -0.4000 |" in (table := render_markdown(ungated, [], Texts(), LABELS, gated))
    assert "| not gated | 24/0/30 | worse, not gated |" in table
    assert "No significant regression" in table
    # the drop is decided, the unchanged bm25 row is not
    assert "Undecided: 1 of 2 rows" in render_text(ungated, [], Texts(), LABELS, gated)


def test_a_small_drop_on_few_questions_is_not_significant():
    # the example: -0.25 on 8 questions (2 of 8 lost their evidence) is within chance
    a = results({"dense": [1] * 8})
    b = results({"dense": [None, None] + [1] * 6})
    (row,) = compare(pair(a, b, LABELS), ["recall@10"], SETTINGS)
    assert row.delta == -0.25 and row.exact
    assert row.p_value == pytest.approx(0.5)  # 2 of the 2**8 sign flips are as extreme, x2 sides
    assert not row.regression


def test_different_question_sets_are_refused_with_counts():
    a = results({"dense": [1, 1, 1, 1]}, qids=["q1", "q2", "q3", "q4"])
    b = results({"dense": [1, 1, 1, 1]}, qids=["q2", "q3", "q4", "q5"])
    with pytest.raises(DifferentQuestions, match="real: 1 only in main, 1 only in workspace, 3"):
        pair(a, b, LABELS)
    assert sorted(pair(a, b, LABELS, intersect=True)["qid"]) == ["q2", "q3", "q4"]


def test_a_query_set_missing_from_one_run_is_refused():
    a = results({"dense": [1, 1]})
    b = pd.concat([a, a.assign(query_set="synthetic")], ignore_index=True)
    with pytest.raises(DifferentQuestions, match="synthetic: 0 only in main, 2 only in workspace"):
        pair(a, b, LABELS)


def test_most_regressed_questions_name_what_outranked_the_evidence():
    a = results({"dense": [1, 1, 1, 2]})
    b = results({"dense": [3, 1, None, 2]})
    found = most_regressed(pair(a, b, LABELS), "mrr", count=3)
    assert [item.qid for item in found] == ["q2", "q0"]  # lost 1.0, then 0.667
    assert found[0].rank_b is None and found[0].above == ["other2", "doc2"]
    assert found[1].rank_b == 3 and found[1].above == ["other0", "doc0"]
    texts = Texts(
        question_texts={"real": {"q2": "Does aspirin lower fever?"}},
        documents={"other2": "Ibuprofen trial results"},
    )
    rows = compare(pair(a, b, LABELS), ["mrr"], SETTINGS)
    markdown = render_markdown(rows, found, texts, LABELS, SETTINGS)
    assert '`q2` "Does aspirin lower fever?": mrr 1.000 → 0.000' in markdown
    assert 'outranked by `other2` "Ibuprofen trial results"' in markdown
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    assert len({line.count("|") for line in table}) == 1  # every row has the header's columns
    assert "| real | dense | mrr | 0.8750 | 0.4583 | -0.4167 |" in markdown
    text = render_text(rows, found, texts, LABELS, SETTINGS)
    assert "A = main, B = workspace" in text and "q2" in text and "|" not in text


def test_three_query_sets_each_compared_with_their_own_questions_and_evidence():
    sets = ("synthetic", "labelled", "real")
    a = pd.concat([results({"dense": [1, 1, 2]}).assign(query_set=s) for s in sets])
    b = pd.concat([results({"dense": [1, None, 2]}).assign(query_set=s) for s in sets])
    paired = pair(a, b, LABELS)
    rows = compare(paired, ["mrr"], SETTINGS)
    assert [(row.query_set, row.n, row.worse) for row in rows] == [(s, 3, 1) for s in sets]
    found = most_regressed(paired, "mrr", count=1)
    assert [(item.query_set, item.qid) for item in found] == [(s, "q1") for s in sets]
    texts = Texts(
        question_texts={s: {"q1": f"{s} question?"} for s in sets},
        evidence={"synthetic": {"q1": "generated evidence"}, "labelled": {"q1": "marked excerpt"}},
        chunks={"other1": "a chunk above"},
        documents={"other1": "a document above"},
    )
    lines = render_text(rows, found, texts, LABELS, SETTINGS).splitlines()
    shown = {line.split("/")[0][2:]: line for line in lines if line.startswith("- ")}
    assert '"labelled question?"' in shown["labelled"]
    assert 'evidence "marked excerpt"' in shown["labelled"]
    assert 'outranked by other1 "a chunk above"' in shown["labelled"]  # labelled ranks chunks
    assert 'evidence "generated evidence"' in shown["synthetic"]
    assert "evidence" not in shown["real"] and '"a document above"' in shown["real"]


def test_every_view_of_the_metrics_is_a_metric_column():
    names = [
        "recall@10", "hit@1", "precision@5", "ndcg@10", "mrr",
        "doc_recall@10", "doc_hit@1", "doc_precision@3", "doc_ndcg@10", "doc_mrr",
        "context_recall@512", "context_precision@256", "context_iou@1024", "context_hit@512",
    ]  # fmt: skip
    others = ["qid", "query_set", "retriever", "first_relevant_rank", "top_ids", "context@512"]
    results = pd.DataFrame(columns=[*others, *names])
    assert metric_columns(results) == names


def gate_rows(p_values: list[float], delta: float = -0.1) -> list[Row]:
    return [
        Row("real", "dense", f"m{i}", 300, 0.5, 0.5 + delta, delta, -1, 1, p, False, 1, 0)
        for i, p in enumerate(p_values)
    ]


def test_the_gate_fails_on_what_survives_holm_only():
    settings = CompareParams(gate=["real.dense.m0", "real.dense.m1", "real.dense.m2"])
    # uncorrected, p 0.02 would fail the build; 3 gated metrics make it 0.06
    judged = apply_gate(gate_rows([0.02, 0.5, 0.6, 0.001]), settings)
    assert [row.p_gate for row in judged[:3]] == pytest.approx([0.06, 1.0, 1.0])
    assert not any(row.regression for row in judged)
    assert judged[3].p_value == 0.001 and not judged[3].gated and np.isnan(judged[3].p_gate)
    caught = apply_gate(gate_rows([0.01, 0.5, 0.6]), settings)
    assert [row.regression for row in caught] == [True, False, False]  # 0.03 < 0.05
    lenient = replace(settings, budgets={"default": 0.2})
    assert not any(row.regression for row in apply_gate(gate_rows([0.01, 0.5, 0.6]), lenient))


def test_a_gated_metric_the_runs_lack_is_an_error_naming_the_param():
    with pytest.raises(GoldensetError, match=r"compare.gate: synthetic.dense.doc_ndcg@10 not"):
        apply_gate(gate_rows([0.5]), CompareParams(gate=["synthetic.dense.doc_ndcg@10"]))


def test_a_gated_metric_no_run_has_is_the_same_error_not_a_traceback():
    run = results({"dense": [1, 2, None]})
    with pytest.raises(GoldensetError, match=r"compare.gate: real.dense.doc_ndcg@10 not"):
        compare(
            pair(run, run, LABELS),
            ["mrr", "doc_ndcg@10"],
            CompareParams(gate=["real.dense.doc_ndcg@10"]),
        )


def step_down(p_values: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's procedure as written: reject in order of p while p_(j) < alpha / (m - j)."""
    rejected = np.zeros(p_values.size, dtype=bool)
    for j, i in enumerate(np.argsort(p_values, kind="stable")):
        if p_values[i] >= alpha / (p_values.size - j):
            break
        rejected[i] = True
    return rejected


def test_holm_adjusted_p_values_reject_as_the_step_down_procedure():
    # a textbook case: sorted p 0.01, 0.02, 0.03, 0.04 -> 0.04, 0.06, 0.06, 0.06
    assert holm_adjusted(np.array([0.03, 0.01, 0.04, 0.02])) == pytest.approx(
        [0.06, 0.04, 0.06, 0.06]
    )
    rng = np.random.default_rng(1)
    for _ in range(200):
        p_values = rng.uniform(0, 0.1, rng.integers(1, 8))
        for alpha in (0.01, 0.05):
            assert np.array_equal(holm_adjusted(p_values) < alpha, step_down(p_values, alpha))


def sign_flip_p(differences: np.ndarray) -> np.ndarray:
    """p of the paired sign-flip test on the last axis, from its normal limit: given |d|, the
    null mean is a sum of independent +-|d_i| / n, so z = sum d / sqrt(sum d^2) (n >= 100)."""
    z = differences.sum(axis=-1) / np.sqrt((differences**2).sum(axis=-1))
    return 2 * norm.sf(np.abs(z))


def simulated_differences(rng, runs, metrics, n, correlation, drop=0.0, sd=0.35):
    """Per-question differences of correlated metrics: 60% unchanged, the rest normal."""
    shared = rng.standard_normal((runs, 1, n))
    own = rng.standard_normal((runs, metrics, n))
    noise = np.sqrt(correlation) * shared + np.sqrt(1 - correlation) * own
    moved = rng.random((runs, 1, n)) < 0.4
    return (sd / np.sqrt(0.4)) * noise * moved - drop * moved / 0.4


def alarm_rates(differences: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """Share of runs that fail the build: Holm over the metrics, and each metric uncorrected."""
    p_values = sign_flip_p(differences)
    dropped = differences.mean(axis=-1) < 0
    holm = np.apply_along_axis(holm_adjusted, 1, p_values)
    return (
        float(((holm < alpha) & dropped).any(axis=1).mean()),
        float(((p_values < alpha) & dropped).any(axis=1).mean()),
    )


def test_the_normal_limit_is_the_randomization_test_compare_runs():
    rng = np.random.default_rng(2)
    differences = simulated_differences(rng, 12, 1, 300, 0.0, drop=0.03)[:, 0]
    exact = [randomization_test(np.zeros(300), d, 20000, 0).p_value for d in differences]
    assert sign_flip_p(differences) == pytest.approx(exact, abs=0.01)


@pytest.mark.parametrize("metrics,correlation", [(3, 0.0), (6, 0.0), (4, 0.8)])
def test_a_change_that_does_nothing_fails_the_build_at_most_alpha_of_the_time(metrics, correlation):
    rng = np.random.default_rng(metrics)
    runs = 4000  # Monte Carlo standard error of a rate near 0.05: 0.0034
    holm, uncorrected = alarm_rates(simulated_differences(rng, runs, metrics, 300, correlation))
    assert holm <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs)
    if correlation == 0:  # what the gate cried without the correction
        assert uncorrected > 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs)


def test_a_drop_the_intervals_can_see_is_still_caught():
    rng = np.random.default_rng(7)
    # every gated metric moves (a change that hurts retrieval hurts its views together)
    together = simulated_differences(rng, 2000, 3, 300, 0.8, drop=0.05)
    assert alarm_rates(together)[0] > 0.6
    # one metric of three alone, 0.08 down (2 interval half-widths on 300 questions)
    alone = simulated_differences(rng, 2000, 3, 300, 0.0)
    alone[:, 0] = simulated_differences(rng, 2000, 1, 300, 0.0, drop=0.08)[:, 0]
    assert alarm_rates(alone)[0] > 0.9


def test_the_gate_and_its_budgets_come_from_params_yaml_and_the_options_override_them(tmp_path):
    from goldenset.cli import _settings, parser

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["compare"]["budgets"] = {"default": 0.01, "mrr": 0.02}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    shown = _settings(parser().parse_args(["compare", "--repo", str(tmp_path)]))
    assert shown.gate == params["compare"]["gate"] and shown.alpha == 0.05
    assert (shown.budget("mrr"), shown.budget("ndcg@10")) == (0.02, 0.01)
    options = ["--gate", "real.bm25.mrr", "--alpha", "0.1", "--budget", "mrr=0.3", "--seed", "4"]
    chosen = _settings(parser().parse_args(["compare", "--repo", str(tmp_path), *options]))
    assert (chosen.gate, chosen.alpha, chosen.seed) == (["real.bm25.mrr"], 0.1, 4)
    assert (chosen.budget("mrr"), chosen.budget("ndcg@10")) == (0.3, 0.01)
    params["compare"]["gate"] = ["dense.ndcg@10"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    with pytest.raises(GoldensetError, match="compare.gate: Value error, 'dense.ndcg@10' is not"):
        _settings(parser().parse_args(["compare", "--repo", str(tmp_path)]))


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--alpha", "1.5"], "error: --alpha: Input should be less than 1"),
        (["--confidence", "0"], "error: --confidence: Input should be greater than 0"),
        (["--resamples", "0"], "error: --resamples: Input should be greater than or equal to 1"),
        (["--permutations", "-3"], "error: --permutations: Input should be greater than or"),
        (["--budget", "mrr=-0.1"], "error: --budget: mrr: an allowed drop is >= 0, not -0.1"),
        (["--gate", "dense.mrr"], "error: --gate: 'dense.mrr' is not <query set>.<retriever>."),
    ],
)
def test_an_option_out_of_range_is_one_line_naming_it(tmp_path, capsys, options, line):
    from goldenset.cli import REFUSED, main

    (tmp_path / "params.yaml").write_bytes((ROOT / "params.yaml").read_bytes())
    assert main(["compare", "--repo", str(tmp_path), *options]) == REFUSED
    error = capsys.readouterr().err
    assert error.startswith(line) and error.count("\n") == 1, error


def test_two_retrievers_of_one_run_pair_question_by_question_and_the_gate_follows():
    run = results({"dense": [1, 1, 2, 1, 1, 1, 2, 1] * 4, "bm25": [3, 4, None, 5, 2, 6, 4, 3] * 4})
    a, b = between_retrievers(run, "dense", "bm25")
    assert set(a["retriever"]) == set(b["retriever"]) == {"bm25"}
    assert a["qid"].tolist() == b["qid"].tolist()
    gate = gate_between_retrievers(["real.dense.mrr", "real.hybrid.mrr"], "dense", "bm25")
    assert gate == ["real.bm25.mrr"]  # the baseline's gated metric gates the candidate
    rows = compare(pair(a, b, ("dense", "bm25")), ["mrr"], replace(SETTINGS, gate=gate))
    (row,) = rows
    assert row.retriever == "bm25" and row.mean_a > row.mean_b
    assert row.gated and row.regression and row.worse == 32


def test_two_retrievers_errors_name_what_the_run_has():
    run = results({"dense": [1, 2], "bm25": [2, 1]})
    with pytest.raises(GoldensetError, match=r"'sparse' has no results; the run has \['bm25'"):
        between_retrievers(run, "dense", "sparse")
    with pytest.raises(GoldensetError, match="'dense' twice"):
        between_retrievers(run, "dense", "dense")


def test_goldenset_compare_retrievers_gates_the_candidate_on_the_baselines_metrics(
    tmp_path, capsys
):
    from goldenset.cli import NO_REGRESSION, REFUSED, REGRESSION, main

    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["compare"]["gate"] = ["real.dense.mrr"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    (tmp_path / "data").mkdir()
    ranks = {"dense": [1, 1, 2, 1, 1, 1, 2, 1] * 4, "bm25": [3, 4, None, 5, 2, 6, 4, 3] * 4}
    results(ranks).to_parquet(tmp_path / "data/results.parquet")
    options = ["compare", "--repo", str(tmp_path), "--format", "markdown", "--show", "0"]
    assert main([*options, "--retrievers", "dense", "bm25"]) == REGRESSION
    shown = capsys.readouterr().out
    assert "A = `dense @ workspace`, B = `bm25 @ workspace`" in shown
    assert "real.bm25.mrr" in shown and "1 significant regression(s)" in shown
    # the other way round the gate follows the candidate, which gains
    assert main([*options, "--retrievers", "bm25", "dense"]) == NO_REGRESSION
    assert main([*options, "HEAD", "workspace", "--retrievers", "dense", "bm25"]) == REFUSED
    assert "name one" in capsys.readouterr().err
