"""`goldenset calibrate`: configurations run through the real stages, Kendall tau and its
interval, decision agreement, the JSON and Markdown reports."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import kendalltau

from goldenset.calibrate.agreement import decision_agreement, tau_interval
from goldenset.calibrate.runs import anchored, enabled_retrievers, grid, with_headline
from goldenset.chunking.strategies import chunk_documents
from goldenset.core.errors import GoldensetError
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.params import ChunkParams, RetrieversParams, ScoreParams, parse_params
from goldenset.corpus.queries import evidence_frame
from tests.conftest import ROOT
from tests.stages import run_stage
from tests.test_exports import golden_questions, sample_documents

GRID = {
    "chunkings": [{"strategy": "sentences", "max_size": 250}, {"strategy": "none"}],
    "models": [
        {"model": "sentence-transformers/all-MiniLM-L6-v2"},
        {"model": "sentence-transformers/all-MiniLM-L6-v2", "max_seq_length": 16},
    ],
    "retrievers": ["dense", "bm25"],
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


def write_inputs(project: Path) -> None:
    """What ingest and generate leave for chunk, embed and score: 16 sample abstracts, a golden
    set and 8 real queries judged on them."""
    docs = sample_documents(16)
    (project / "data").mkdir(parents=True)
    docs.to_parquet(project / "data/documents.parquet", index=False)
    golden = golden_questions(
        chunk_documents(docs, ChunkParams(strategy="sentences", max_size=250))
    )
    (project / "data/goldenset.jsonl").write_text("".join(json.dumps(q) + "\n" for q in golden))
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


def write_params(project: Path, **changes: dict) -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for section, values in changes.items():
        params[section] = {**(params.get(section) or {}), **values}
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory) -> tuple[Path, dict, str]:
    project = tmp_path_factory.mktemp("calibrate")
    write_inputs(project)
    write_params(project, calibrate=GRID)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    process = subprocess.run(
        [sys.executable, "-m", "goldenset", "calibrate", "--json", "figures.json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, process.stderr
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
    )
    for stage in ["chunk", "embed", "score"]:
        process = run_stage(stage, tmp_path)
        assert process.returncode == 0, process.stderr
    scores = json.loads((tmp_path / "metrics/scores.json").read_text())
    for name, retriever in [(TRUNCATED_DENSE, "dense"), (BM25, "bm25")]:
        for query_set in ["synthetic", "real"]:
            expected = scores[query_set][retriever]["ndcg@10"]
            assert values[name][f"{query_set}.ndcg@10"] == pytest.approx(expected, abs=1e-12)
    # the truncated model is another model: its dense run differs from the full one's
    full = values["dense | sentences 250 | all-MiniLM-L6-v2"]
    assert full != values[TRUNCATED_DENSE]
    # through the project's embedding cache: the hand run above embedded nothing new there
    assert list((project / "cache/embeddings").glob("*"))


@pytest.mark.slow
def test_every_configuration_once_and_tau_from_the_table(calibrated):
    _, figures, markdown = calibrated
    names = [c["name"] for c in figures["configurations"]]
    # 2 chunkings x (2 models x dense + bm25 once: it reads no embedding)
    assert len(names) == len(set(names)) == 6
    assert sum(name.startswith("bm25 ") for name in names) == 2
    view = figures["views"]["chunk"]
    assert set(view) >= {
        "tau",
        "tau_low",
        "tau_high",
        "agreement",
        "pairs_significant",
        "configurations",
    }
    assert view["configurations"] == 6 and view["pairs"] == 15
    golden = [c["values"]["synthetic.ndcg@10"] for c in figures["configurations"]]
    real = [c["values"]["real.ndcg@10"] for c in figures["configurations"]]
    assert view["tau"] == pytest.approx(kendalltau(golden, real).statistic, abs=1e-12)
    assert view["tau_low"] <= view["tau"] <= view["tau_high"]
    assert 0 <= view["pairs_significant"] <= 15
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


def test_decision_agreement_on_a_hand_made_case():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.5, 30)
    # reference: B and C clearly above A on every question, B and C identical (p = 1)
    reference = np.stack([base, base + 0.3, base + 0.3])
    # golden means: A < B agrees with the reference, C < A disagrees, B vs C is not counted
    golden = np.array([[0.5, 0.5], [0.9, 0.9], [0.1, 0.1]])
    agreement, significant, pairs = decision_agreement(golden, reference, 0.05, 2000, 0)
    assert (significant, pairs) == (2, 3)
    assert agreement == 0.5
    # a golden tie is no agreement; no significant pair gives NaN, not a share
    tie = np.array([[0.5], [0.5], [0.5]])
    assert decision_agreement(tie, reference, 0.05, 2000, 0)[0] == 0.0
    flat = np.stack([base, base, base])
    assert math.isnan(decision_agreement(golden, flat, 0.05, 2000, 0)[0])


def test_decision_agreement_pairs_the_questions_both_configurations_have():
    reference = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, np.nan]])
    golden = np.array([[0.0], [1.0]])
    # 5 paired questions: the smallest two-sided p of an exact sign-flip test is 2/32 > 0.05
    assert decision_agreement(golden, reference, 0.05, 1000, 0)[1] == 0
    assert decision_agreement(golden, reference, 0.1, 1000, 0)[1:] == (1, 1)


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
    score, refused = with_headline(ScoreParams(), ["ndcg@10", "hit@3", "nosuch@10", "ndcg@7"])
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
    assert [m.max_seq_length for m in models] == [None, 16]
    assert models[1].batch_size == raw["embed"]["batch_size"]
    raw["calibrate"]["models"].append({"max_seq_length": 16})  # the project's model: a twin
    with pytest.raises(
        GoldensetError, match="calibrate.models: all-MiniLM-L6-v2 max_seq_length 16"
    ):
        grid(parse_params(raw))


def test_a_retriever_folder_outside_the_project_is_found_from_the_scratch_folder(tmp_path):
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    project = tmp_path / "repo" / "goldenset"
    assert anchored(parse_params(raw), project).retrievers.external.folder == "external"
    raw["retrievers"]["external"]["folder"] = "../search"  # as `goldenset init --retriever` sets
    folder = anchored(parse_params(raw), project).retrievers.external.folder
    assert folder == str((tmp_path / "repo" / "search").resolve())
