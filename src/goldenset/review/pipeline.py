"""What the stages do with a person's verdicts: score leaves out the questions a person failed
and counts what it scored that a person checked; the audit sets the person's pass share beside
the judge's estimate, and ranks the judge against the person (ROC AUC on this corpus)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from goldenset.review.params import ReviewParams
from goldenset.review.verdicts import Verdicts, pass_share, read_verdicts


def read_review(params: ReviewParams) -> Verdicts:
    """The verdict file of review.folder, checked: a malformed line stops the stage."""
    verdicts = read_verdicts(params.verdicts_path)
    verdicts.check()
    return verdicts


def left_out(verdicts: Verdicts, params: ReviewParams) -> set[str]:
    return verdicts.failed() if params.leave_out_failed else set()


def scored_counts(golden_qids: list[str], verdicts: Verdicts, failed: set[str]) -> dict:
    """How the person's verdicts met the golden set: questions, checked, left out, and of the
    questions scored, how many a person checked (and passed)."""
    checked = [qid for qid in golden_qids if qid in verdicts.by_qid]
    scored = [qid for qid in golden_qids if qid not in failed]
    return {
        "questions": len(golden_qids),
        "checked": len(checked),
        "left_out": len(golden_qids) - len(scored),
        "scored": len(scored),
        "scored_checked": sum(qid in verdicts.by_qid for qid in scored),
    }


def scored_line(counts: dict) -> str:
    return (
        "review: {checked} of the golden set's {questions} questions checked by a person, "
        "{left_out} failed and left out; {scored} scored, {scored_checked} of them checked"
    ).format(**counts)


def person_estimate(verdicts: Verdicts, golden_qids: set[str], params: ReviewParams) -> dict:
    """The person's pass share over the random-sample verdicts of this golden set, with its
    interval, and whether there are enough of them (review.min_verdicts) to set the flag."""
    share = pass_share([row for row in verdicts.drawn_at_random() if row["qid"] in golden_qids])
    enough = {"min_verdicts": params.min_verdicts}
    if share is None:
        return {"checked": 0, "enough": False, **enough}
    return {**share.as_dict(), "enough": share.checked >= params.min_verdicts, **enough}


def judge_against_person(probabilities: pd.Series, verdicts: Verdicts) -> dict:
    """ROC AUC of the judge's P(pass) against the person's verdicts on the questions both read
    (None when those verdicts are all one way)."""
    from sklearn.metrics import roc_auc_score

    both = [qid for qid in probabilities.index if qid in verdicts.by_qid]
    passed = np.array([verdicts.by_qid[qid]["verdict"] == "pass" for qid in both])
    auc = (
        float(roc_auc_score(passed, probabilities[both].to_numpy()))
        if len(set(passed)) == 2
        else None
    )
    return {"questions": len(both), "auc": None if auc is None else round(auc, 4)}


def review_metrics(
    verdicts: Verdicts, golden_qids: set[str], judged: pd.Series, params: ReviewParams
) -> dict | None:
    """metrics/audit.json's `review`: the person's pass share and the judge against the person
    (judged: P(pass) by qid of the questions the judge read); None without a verdict."""
    if not verdicts.by_qid:
        return None
    return {
        "person": person_estimate(verdicts, golden_qids, params),
        "judge_against_person": judge_against_person(judged, verdicts),
    }
