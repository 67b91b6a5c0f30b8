"""What people's verdicts do to scoring: the golden set's questions they failed are not scored
(review.leave_out_failed; review.disagreement decides a question two people split on), and the
score stage counts what it scored that a person checked.

Read once, at the edge (goldenset.scoring.configuration.read_project_upstream), for the score stage,
`goldenset calibrate` and the benchmarks alike: every caller leaves out the same questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import Verdicts, read_verdicts


@dataclass(frozen=True)
class Reviewed:
    """A project's verdicts, and the golden set's questions left out of its scores."""

    verdicts: Verdicts = field(default_factory=Verdicts)
    failed: frozenset[str] = frozenset()


def read_reviewed(review: ReviewParams, root: Path = Path(".")) -> Reviewed:
    """The verdict file of review.folder, checked (a malformed line stops the caller: a verdict
    left unread changes what is scored), and what it leaves out."""
    verdicts = read_verdicts(root / review.verdicts_path)
    verdicts.check()
    failed = verdicts.failed(review.disagreement) if review.leave_out_failed else set()
    return Reviewed(verdicts, frozenset(failed))


def scored_counts(golden_qids: list[str], reviewed: Reviewed) -> dict:
    """How the verdicts met the golden set: questions, checked, left out, and of the questions
    scored, how many a person checked."""
    checked = reviewed.verdicts.by_qid
    scored = [qid for qid in golden_qids if qid not in reviewed.failed]
    return {
        "questions": len(golden_qids),
        "checked": sum(qid in checked for qid in golden_qids),
        "left_out": len(golden_qids) - len(scored),
        "scored": len(scored),
        "scored_checked": sum(qid in checked for qid in scored),
    }


def scored_line(counts: dict) -> str:
    return (
        "review: {checked} of the golden set's {questions} questions checked by a person, "
        "{left_out} failed and left out; {scored} scored, {scored_checked} of them checked"
    ).format(**counts)
