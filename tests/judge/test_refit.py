"""The judge refitted with a team's verdicts: the shipped labels' packaged features are the
shipped judge's own fit, and the AUC held out on the verdicts is what scikit-learn computes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from goldenset.corpus.ingest import ingest
from goldenset.judge.features import FEATURES
from goldenset.judge.model import (
    CRITERIA,
    LABELLED_FEATURES,
    accepted,
    fit_criterion,
    load_judge,
)
from goldenset.judge.refit import held_out_on_verdicts, labels_of, refit, shipped_rows
from tests.conftest import ROOT


def test_the_packaged_features_refit_the_shipped_weights_exactly():
    rows = shipped_rows()
    assert len(rows) == load_judge().labels and set(FEATURES) <= set(rows.columns)
    for criterion in CRITERIA:
        model = fit_criterion(rows[FEATURES], accepted(rows, criterion), 0.0)
        shipped = load_judge().models[criterion]
        assert model.coefficients == pytest.approx(shipped.coefficients, abs=1e-9)
        assert model.intercept == pytest.approx(shipped.intercept, abs=1e-9)


def team_verdicts(n: int, seed: int) -> pd.DataFrame:
    """Verdicts whose pass follows the packaged rows' features, drawn anew: a corpus like them."""
    rng = np.random.default_rng(seed)
    rows = shipped_rows().sample(n, random_state=seed, replace=True).reset_index(drop=True)
    noise = rng.normal(0, 0.05, (n, len(FEATURES))) * rows[FEATURES].std().to_numpy()
    noisy = rows[FEATURES] + noise
    return noisy.assign(failed=rows["failed"].to_numpy())


@pytest.mark.slow  # 20 shuffles of 5 folds, 3 criteria: about 30 s
def test_before_is_the_shipped_judge_and_after_is_held_out():
    team = team_verdicts(120, 1)
    found = held_out_on_verdicts(shipped_rows(), team, "pass")
    probability = load_judge().models["pass"].probability(team)
    assert found["before"] == round(roc_auc_score(accepted(team, "pass"), probability), 4)
    assert found["verdicts"] == 120 and 0.5 < found["after"] <= 1
    judge, report = refit(shipped_rows(), team)
    assert judge.labels == len(shipped_rows()) + 120
    assert report.count("\n| ") == 4  # the header and a row per criterion
    one_kind = team.assign(failed=None)
    assert held_out_on_verdicts(shipped_rows(), one_kind, "pass")["after"] is None


@pytest.mark.slow
def test_validate_refits_with_verdicts_on_their_corpus(tmp_path):
    documents = ingest(ROOT / "data/docs", max_file_mb=100).documents
    frame = pd.DataFrame([{"doc_id": d.doc_id, "text": d.text} for d in documents])
    frame.to_parquet(tmp_path / "documents.parquet")
    verdicts = (ROOT / "labels/steered_set.jsonl").read_text().splitlines()[:20]
    (tmp_path / "verdicts.jsonl").write_text("\n".join(verdicts) + "\n")
    out = tmp_path / "review" / "judge.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "goldenset.judge.validate",
            "--verdicts",
            "verdicts.jsonl",
            "--documents",
            "documents.parquet",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "shipped labels and 20 of your verdicts" in done.stdout
    assert json.loads(out.read_text())["labels"] == load_judge().labels + 20
    assert LABELLED_FEATURES.exists()


def test_a_fix_is_two_labels_held_out_together():
    fix = {"question": "Which side effects does olanzapine cause?", "evidence": "It causes X."}
    verdicts = [
        {
            "qid": "q1",
            "question": "Why?",
            "evidence": "It causes X.",
            "verdict": "fail",
            "failed": "a",
            "fix": {**fix, "evidence_start": 0, "evidence_end": 12},
        },
        {"qid": "q2", "question": "What?", "evidence": "Y.", "verdict": "pass", "failed": None},
    ]
    labels = labels_of(verdicts)
    assert labels["qid"].tolist() == ["q1", "q1/fix", "q2"]
    assert labels["group"].tolist() == ["q1", "q1", "q2"]
    assert labels["fixed"].tolist() == [False, True, False]
    mended = labels.iloc[1]
    assert (mended["question"], mended["verdict"]) == (fix["question"], "pass")
    assert pd.isna(mended["failed"])
    assert labels.iloc[0]["failed"] == "a"  # the original stays failed as written


@pytest.mark.slow  # 20 shuffles of 5 folds, twice
def test_the_refit_reports_the_fixes_labels_with_and_without():
    team = team_verdicts(100, 2).assign(group=[f"q{i}" for i in range(100)], fixed=False)
    failed = team.index[team["failed"].notna()][:20]
    passing = shipped_rows()[shipped_rows()["failed"].isna()].sample(20, random_state=3)
    fixes = passing[FEATURES].assign(
        failed=None, group=team.loc[failed, "group"].to_numpy(), fixed=True
    )
    both = pd.concat([team, fixes], ignore_index=True)
    found = held_out_on_verdicts(shipped_rows(), both, "pass")
    assert (found["verdicts"], found["fixes"]) == (100, 20)
    probability = load_judge().models["pass"].probability(team)
    assert found["before"] == round(roc_auc_score(accepted(team, "pass"), probability), 4)
    assert 0.5 < found["after"] <= 1 and 0.5 < found["without_fixes"] <= 1
    assert found["after"] != found["without_fixes"]  # the fixes' labels were fitted
    _, report = refit(shipped_rows(), both)
    assert "100 of your verdicts" in report and "20 of them fixed" in report
    assert "refitted AUC without the fixes' labels" in report
