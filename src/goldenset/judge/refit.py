"""Refit the judge with a team's verdicts beside the shipped labels, and say whether it helped.

    goldenset review --refit      # in the pipeline's folder, after reviewing
    python -m goldenset.judge.validate --verdicts FILE --documents data/documents.parquet

Held out on the team's verdicts, each criterion's ROC AUC:
- the shipped judge's (it never saw them);
- the refitted judge's: stratified 5-fold over the verdicts, each fold scored by a model fitted
  on the shipped labels and the other four folds, 20 shuffles.
A person's fix is two labels, the original as a fail and their version as a pass, kept in one
fold; the refitted judge is then reported with the fixes' labels and without them, both scored
on the verdicts' originals (the questions a writer wrote, which the judge is for).
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


FIX_SUFFIX = "/fix"  # the qid of a person's version of a question, as a label


def labels_of(verdicts: list[dict]) -> pd.DataFrame:
    """The verdicts as labels, one row each, and a fix as two (the original failed as written,
    the person's version passing, `fixed` True), each row's `group` the original's qid: an
    original and its fix are held out together, so neither teaches the judge about the other."""
    rows = []
    for row in verdicts:
        rows.append({**row, "group": row["qid"], "fixed": False})
        fix = row.get("fix")
        if fix:
            version = {"question": fix["question"], "evidence": fix["evidence"]}
            passed = {"verdict": "pass", "failed": None, "fix": None}
            rows.append(
                {
                    **row,
                    **version,
                    **passed,
                    "qid": row["qid"] + FIX_SUFFIX,
                    "group": row["qid"],
                    "fixed": True,
                }
            )
    return pd.DataFrame(rows)


def held_out_on_verdicts(shipped: pd.DataFrame, team: pd.DataFrame, criterion: str) -> dict:
    """AUC on the team's verdicts (their originals: a fix's version is a label, not a question
    the writer wrote): the shipped judge's; the refitted one's held out, fitted with the fixes'
    labels (after) and without them (without_fixes), on the same folds of whole groups."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedGroupKFold

    fixed = team["fixed"].to_numpy(bool) if "fixed" in team else np.zeros(len(team), bool)
    groups = team["group"] if "group" in team else pd.Series(range(len(team)))
    original = team[~fixed]
    y_team, y_original = accepted(team, criterion), accepted(original, criterion)
    y_shipped = accepted(shipped, criterion)
    counted = {"verdicts": len(original), "fixes": int(fixed.sum())}
    if len(set(y_original)) < 2 or min(np.bincount(y_original)) < FOLDS:
        return {**counted, "before": None, "after": None, "without_fixes": None}
    before = load_judge().models[criterion].probability(original)
    aucs: dict[str, list[float]] = {"after": [], "without_fixes": []}
    for repeat in range(REPEATS):
        held_out = {name: np.zeros(len(team)) for name in aucs}
        split = StratifiedGroupKFold(FOLDS, shuffle=True, random_state=SEED + repeat)
        for train, test in split.split(team, y_team, groups):
            for name, taught in [("after", train), ("without_fixes", train[~fixed[train]])]:
                x = pd.concat([shipped[FEATURES], team.iloc[taught][FEATURES]], ignore_index=True)
                y = np.concatenate([y_shipped, y_team[taught]])
                model = fit_criterion(x, y, float("nan"))
                held_out[name][test] = model.probability(team.iloc[test])
        for name, scores in held_out.items():
            aucs[name].append(roc_auc_score(y_original, scores[~fixed]))
    return {
        **counted,
        "before": round(float(roc_auc_score(y_original, before)), 4),
        **{name: round(float(np.mean(values)), 4) for name, values in aucs.items()},
    }


def refit(shipped: pd.DataFrame, team: pd.DataFrame) -> tuple[Judge, str]:
    """The judge fitted on the shipped labels and the team's verdicts (a fix: two labels), and
    the report."""
    rows = pd.concat([shipped, team], ignore_index=True)
    fixes = int(team["fixed"].sum()) if "fixed" in team else 0
    verdicts = len(team) - fixes
    lines = [
        "# The judge refitted with your verdicts",
        "",
        f"{len(shipped)} shipped labels and {verdicts} of your verdicts. Held out on your "
        f"verdicts: the shipped judge never saw them; the refitted one is scored on each of "
        f"{FOLDS} folds by a model fitted without it ({REPEATS} shuffles).",
        "",
    ]
    if fixes:
        lines += [
            f"{fixes} of them fixed: each fix is two labels, the original as a fail and your "
            "version as a pass, held out together (an original and its fix share a fold). The "
            "AUC is on your verdicts' originals, with the fixes' labels and without them.",
            "",
        ]
    without = " refitted AUC without the fixes' labels |" if fixes else ""
    lines += [
        "| criterion | your verdicts accept | shipped judge AUC | refitted AUC (held out) |"
        + without,
        "|---|---|---|---|" + ("---|" if fixes else ""),
    ]
    models = {}
    for criterion in CRITERIA:
        compared = held_out_on_verdicts(shipped, team, criterion)
        y = accepted(rows, criterion)
        auc = cross_validated_auc(rows[FEATURES], y, FOLDS, REPEATS, SEED).mean()
        models[criterion] = fit_criterion(rows[FEATURES], y, float(auc))
        accept = accepted(team[~team["fixed"]] if fixes else team, criterion).mean()
        lines.append(
            f"| {criterion} | {accept:.0%} | {_auc(compared['before'])} | "
            f"{_auc(compared['after'])} |"
            + (f" {_auc(compared['without_fixes'])} |" if fixes else "")
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
    frame = labels_of(list(latest.values()))
    team = verdict_features(frame, indexes, load_referee(), Reader().read)
    check_enough(team[~team["fixed"]].to_dict("records"))  # of documents the corpus lacks: out
    judge, report = refit(shipped_rows(), team)
    write_atomically(out, judge_json(judge))
    return report + f"\nWritten: {out}\n"
