"""What the audit does with people's verdicts: it sets their pass share (as the set was first
drawn, and as it is now) beside the judge's estimate, reports each labeller's share and their
agreement, and ranks the judge against them (ROC AUC on this corpus). What score does with them
is goldenset.scoring.reviewed's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import (
    CarriedOver,
    Verdicts,
    golden_line,
    labeller_of,
    pass_share,
    share_line,
)
from goldenset.review.verdicts import Agreement, agreements


def drawn_at_random(rows: dict[str, dict], qids: set[str]) -> list[dict]:
    """The verdicts of `qids` given to the seeded random sample."""
    return [row for qid, row in rows.items() if qid in qids and row.get("drawn") != "least_sure"]


def person_estimate(
    verdicts: Verdicts, golden_qids: set[str], reasked: set[str], params: ReviewParams
) -> dict:
    """The people's pass share over the random sample as it was first drawn: the verdicts of
    this golden set's questions and of those a person failed that generate asked again
    (reasked; their new questions start unjudged), one verdict a question
    (review.disagreement). With its interval, whether there are enough verdicts to set the flag
    (review.min_verdicts), and, when questions were replaced, the share of the set as it is now
    (random verdicts of questions still in it: higher, as only the failed ones left)."""
    decided = verdicts.decided(params.disagreement)
    drawn = drawn_at_random(decided, golden_qids | reasked)
    share = pass_share(drawn)
    enough = {"min_verdicts": params.min_verdicts}
    if share is None:
        return {"checked": 0, "enough": False, **enough}
    estimate = {**share.as_dict(), "enough": share.checked >= params.min_verdicts, **enough}
    if any(row.get("fix") for row in drawn):
        estimate["golden"] = golden_share(drawn, verdicts, golden_qids | reasked)
    replaced = len(drawn_at_random(decided, reasked - golden_qids))
    if replaced:
        now = pass_share(drawn_at_random(decided, golden_qids))
        estimate["replaced"] = replaced
        estimate["now"] = now.as_dict() if now else {"checked": 0}
    return estimate


def golden_share(drawn: list[dict], verdicts: Verdicts, qids: set[str]) -> dict:
    """What the review made of the random sample (`drawn`, one verdict a question): the share
    the team keeps, passed or fixed, with its interval (a pass share's keys: `passed` counts
    those kept); how many passed as written, were fixed and failed; and the minutes people spent
    a question kept, from every labeller's recorded seconds on the sample (None: none recorded)."""
    kept = pass_share([{"verdict": "pass" if row.get("fix") else row["verdict"]} for row in drawn])
    sample = [row for row in verdicts.latest.values() if row.get("drawn") != "least_sure"]
    timed = [row.get("seconds") for row in sample if row["qid"] in qids]
    timed = [seconds for seconds in timed if seconds is not None]
    minutes = round(sum(timed) / 60 / kept.passed, 2) if timed and kept.passed else None
    return {
        **kept.as_dict(),
        "as_written": sum(row["verdict"] == "pass" for row in drawn),
        "fixed": sum(bool(row.get("fix")) for row in drawn),
        "failed": sum(row["verdict"] == "fail" and not row.get("fix") for row in drawn),
        "minutes_per_golden": minutes,
    }


def labeller_estimates(verdicts: Verdicts, qids: set[str]) -> dict[str, dict]:
    """Each labeller's own pass share on the random sample (as first drawn)."""
    estimates = {}
    for labeller in verdicts.labellers():
        share = pass_share(drawn_at_random(verdicts.of(labeller), qids))
        if share is not None:
            estimates[labeller] = share.as_dict()
    return estimates


def judge_against_person(
    probabilities: pd.Series, verdicts: Verdicts, params: ReviewParams
) -> dict:
    """ROC AUC of the judge's P(pass) against the people's verdicts (one a question,
    review.disagreement) on the questions both read (None when those are all one way)."""
    from sklearn.metrics import roc_auc_score

    decided = verdicts.decided(params.disagreement)
    both = [qid for qid in probabilities.index if qid in decided]
    passed = np.array([decided[qid]["verdict"] == "pass" for qid in both])
    auc = (
        float(roc_auc_score(passed, probabilities[both].to_numpy()))
        if len(set(passed)) == 2
        else None
    )
    return {"questions": len(both), "auc": None if auc is None else round(auc, 4)}


@dataclass(frozen=True)
class Review:
    """What the audit reports of people's verdicts: metrics/audit.json's `review`, and the
    questions two people split on (the report lists them)."""

    metrics: dict
    agreements: list[Agreement]


def review_metrics(
    verdicts: Verdicts,
    golden_qids: set[str],
    reasked: set[str],
    p_pass: pd.Series,
    params: ReviewParams,
    carried: CarriedOver | None = None,
) -> Review | None:
    """The people's pass share, each labeller's, their agreement, and the judge against them
    (p_pass: P(pass) by qid of the questions the judge read), and how many verdicts were
    carried over to a new writer's questions or went stale (when any did); None without a
    verdict."""
    if not verdicts.latest:
        return None
    drawn = golden_qids | reasked
    agreed = agreements(verdicts.among(drawn))
    metrics = {
        "person": person_estimate(verdicts, golden_qids, reasked, params),
        "disagreement": params.disagreement,
        "labellers": labeller_estimates(verdicts, drawn),
        "agreement": [agreement.as_dict() for agreement in agreed],
        "judge_against_person": judge_against_person(p_pass, verdicts, params),
    }
    if carried and (carried.carried or carried.stale):
        metrics["carried_over"] = carried.carried
        metrics["stale"] = len(carried.stale)
    return Review(metrics, agreed)


def review_section(review: Review, metrics: dict) -> list[str]:
    """The audit report's section on people's verdicts: the share as first drawn (and as the set
    is now), each labeller's, their agreement and the questions they split on, and the judge
    beside them (metrics: the audit's)."""
    m = review.metrics
    person = m["person"]
    lines = [
        f"- the people, on questions drawn at random: {share_line(person)} "
        f"(a question one failed and another passed counts as a {m['disagreement']}: "
        "review.disagreement)"
        if person["checked"]
        else "- the people: no verdict on a question drawn at random yet"
    ]
    if "golden" in person:
        lines.append(f"- {golden_line(person['golden'])}: a fix counts as failed as written")
    if "now" in person:
        lines.append(
            f"- of the set as it is now: {share_line(person['now'])}; {person['replaced']} "
            "questions a person failed were asked again (generate.failed_queries), and the "
            "share above counts their verdicts as the set was first drawn"
        )
    if "stale" in m:
        lines.append(
            f"- {m['carried_over']} verdicts carried over to questions that read the same under "
            f"a new qid (another writer); {m['stale']} stale: their question is no longer "
            "written (`goldenset review` lists them)"
        )
    lines += [f"- {name}: {share_line(share)}" for name, share in m["labellers"].items()]
    lines += [f"- {agreement.line()}" for agreement in review.agreements]
    passing = metrics.get("judge", {}).get("pass")
    if passing:
        lines.append(
            f"- the judge: an estimated {passing['estimate']:.0%} [{passing['low']:.0%}, "
            f"{passing['high']:.0%}] on its sample of {metrics['judge']['judged']}"
        )
    against = m["judge_against_person"]
    if against["auc"] is not None:
        lines.append(
            f"- the judge's P(pass) against the people's verdicts on the {against['questions']} "
            f"questions both read: ROC AUC {against['auc']:.2f} on this corpus"
        )
    for agreement in review.agreements:
        if agreement.split:
            lines += ["", f"### Where {' and '.join(agreement.labellers)} disagree", ""]
            lines += [_split_line(first, second) for first, second in agreement.split]
    return lines


def _split_line(first: dict, second: dict) -> str:
    def said(row: dict) -> str:
        verdict = row["failed"] and f"fail ({row['failed']})" or "pass"
        reason = " ".join(str(row.get("reason") or "").split())
        return f"{labeller_of(row)}: {verdict}" + (f", {reason!r}" if reason else "")

    question = " ".join(first["question"].split())
    return f"- **{question}** ({first['qid']}): {said(first)}; {said(second)}"
