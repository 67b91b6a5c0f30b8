"""Refit the judge with a team's verdicts beside the shipped labels, and say whether it helped.

    goldenset review --refit      # in the pipeline's folder, after reviewing
    python -m goldenset.judge.validate --verdicts FILE --documents data/documents.parquet

Held out on the team's verdicts, each criterion's ROC AUC:
- the shipped judge's (it never saw them);
- the refitted judge's: stratified 5-fold over the verdicts, each fold scored by a model fitted
  on the shipped labels and the other four folds, 20 shuffles.
Writes the judge fitted on all of them (`goldenset review --refit`: review.folder/judge.json,
which the audit then reads in place of the shipped one) and prints the table.

The shipped labels come as their features (LABELLED_FEATURES, written by
`python -m goldenset.judge.validate` beside the weights), so a team needs neither goldenset's
labels/ nor its corpora; the verdicts' features are read on the team's documents.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically
from goldenset.judge.features import FEATURES, Embed, Read, question_features
from goldenset.judge.model import (
    CRITERIA,
    FOLDS,
    LABELLED_FEATURES,
    REPEATS,
    SEED,
    Judge,
    accepted,
    cross_validated_auc,
    fit_criterion,
    judge_json,
    load_judge,
)
from goldenset.judge.reader import Reader
from goldenset.judge.referee import load_referee

log = logging.getLogger("goldenset")


def verdict_features(
    verdicts: pd.DataFrame, documents: dict[str, WindowIndex], referee: Embed, read: Read
) -> pd.DataFrame:
    """The verdicts of questions whose document is in `documents`, with the judge's features."""
    known = verdicts[verdicts["doc_id"].astype(str).isin(documents.keys())]
    if len(known) < len(verdicts):
        log.warning(
            "refit: %d verdicts name a document the corpus does not hold: left out",
            len(verdicts) - len(known),
        )
    known = known.assign(doc_id=known["doc_id"].astype(str)).reset_index(drop=True)
    rarity = WindowFrequency(documents.values())
    features = question_features(known, documents, rarity, referee, read)
    return pd.concat([known, features], axis=1)


def held_out_on_verdicts(shipped: pd.DataFrame, team: pd.DataFrame, criterion: str) -> dict:
    """AUC on the team's verdicts: the shipped judge's, and the refitted one's held out."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    y_team, y_shipped = accepted(team, criterion), accepted(shipped, criterion)
    if len(set(y_team)) < 2 or min(np.bincount(y_team)) < FOLDS:
        return {"verdicts": len(team), "before": None, "after": None}
    before = load_judge().models[criterion].probability(team)
    aucs = []
    for repeat in range(REPEATS):
        held_out = np.zeros(len(team))
        split = StratifiedKFold(FOLDS, shuffle=True, random_state=SEED + repeat)
        for train, test in split.split(team, y_team):
            x = pd.concat([shipped[FEATURES], team.iloc[train][FEATURES]], ignore_index=True)
            y = np.concatenate([y_shipped, y_team[train]])
            held_out[test] = fit_criterion(x, y, float("nan")).probability(team.iloc[test])
        aucs.append(roc_auc_score(y_team, held_out))
    return {
        "verdicts": len(team),
        "before": round(float(roc_auc_score(y_team, before)), 4),
        "after": round(float(np.mean(aucs)), 4),
    }


def refit(shipped: pd.DataFrame, team: pd.DataFrame) -> tuple[Judge, str]:
    """The judge fitted on the shipped labels and the team's verdicts, and the report."""
    rows = pd.concat([shipped, team], ignore_index=True)
    lines = [
        "# The judge refitted with your verdicts",
        "",
        f"{len(shipped)} shipped labels and {len(team)} of your verdicts. Held out on your "
        f"verdicts: the shipped judge never saw them; the refitted one is scored on each of "
        f"{FOLDS} folds by a model fitted without it ({REPEATS} shuffles).",
        "",
        "| criterion | your verdicts accept | shipped judge AUC | refitted AUC (held out) |",
        "|---|---|---|---|",
    ]
    models = {}
    for criterion in CRITERIA:
        compared = held_out_on_verdicts(shipped, team, criterion)
        y = accepted(rows, criterion)
        auc = cross_validated_auc(rows[FEATURES], y, FOLDS, REPEATS, SEED).mean()
        models[criterion] = fit_criterion(rows[FEATURES], y, float(auc))
        lines.append(
            f"| {criterion} | {accepted(team, criterion).mean():.0%} | "
            f"{_auc(compared['before'])} | {_auc(compared['after'])} |"
        )
    return Judge(load_judge().referee, len(rows), models), "\n".join(lines) + "\n"


def _auc(value: float | None) -> str:
    return "n/a (too few of one kind)" if value is None else f"{value:.3f}"


def shipped_rows() -> pd.DataFrame:
    try:
        return pd.read_parquet(LABELLED_FEATURES)
    except FileNotFoundError:
        raise GoldensetError(
            f"{LABELLED_FEATURES} missing: reinstall goldenset, or run "
            "`python -m goldenset.judge.validate` in its repository"
        ) from None


def check_enough(verdicts: list[dict]) -> None:
    """GoldensetError unless the verdicts hold FOLDS passes and FOLDS fails at least: fewer
    cannot be held out, so nothing would say whether the refitted judge is any better."""
    passes = sum(row["verdict"] == "pass" for row in verdicts)
    fails = len(verdicts) - passes
    if min(passes, fails) < FOLDS:
        raise GoldensetError(
            f"refit: {passes} passes and {fails} fails; the refitted judge can be checked held "
            f"out only with {FOLDS} of each at least: review more (`goldenset review`). No "
            "judge written: the audit keeps the judge it had"
        )


def refit_with(verdicts: list[dict], documents: pd.DataFrame, out: Path) -> str:
    """Refit with verdicts (rows of labels/*.jsonl's schema) on documents (doc_id, text), write
    the judge to `out`; the report."""
    if not verdicts:
        raise GoldensetError("no verdict to refit with: review first (`goldenset review`)")
    check_enough(list({row["qid"]: row for row in verdicts}.values()))
    indexes = {
        str(doc): WindowIndex.of(str(text))
        for doc, text in zip(documents["doc_id"], documents["text"], strict=True)
    }
    latest = {row["qid"]: row for row in verdicts}  # a query's later verdict wins
    frame = pd.DataFrame(list(latest.values()))
    team = verdict_features(frame, indexes, load_referee(), Reader().read)
    check_enough(team.to_dict("records"))  # verdicts of documents the corpus lacks left out
    judge, report = refit(shipped_rows(), team)
    write_atomically(out, judge_json(judge))
    return report + f"\nWritten: {out}\n"
