"""What people's verdicts do to scoring: the golden set's questions they failed are not scored
(review.leave_out_failed; review.disagreement decides a question two people split on), and the
score stage counts what it scored that a person checked.

Read once, at the edge (goldenset.scoring.configuration.read_project_upstream), for the score stage,
`goldenset calibrate` and the benchmarks alike: every caller leaves out the same questions.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldenset.core import paths
from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import CarriedOver, Verdicts, carry_over, read_verdicts


@dataclass(frozen=True)
class Reviewed:
    """A project's verdicts as they apply to the golden set written now, and its questions left
    out of its scores."""

    verdicts: Verdicts = field(default_factory=Verdicts)
    failed: frozenset[str] = frozenset()
    carried: CarriedOver | None = None  # how verdicts met a set another writer wrote


def read_reviewed(
    review: ReviewParams, root: Path = Path("."), written: Iterable[Mapping] | None = None
) -> Reviewed:
    """The verdict file of review.folder, checked (a malformed line stops the caller: a verdict
    left unread changes what is scored), carried over to the golden set's rows `written` when
    given (goldenset.corpus.verdicts.carry_over), and what it leaves out."""
    verdicts = read_verdicts(root / review.verdicts_path)
    verdicts.check()
    carried = None
    if written is not None:
        carried = carry_over(verdicts, written, read_reasked(root))
        verdicts = carried.verdicts
    failed = verdicts.failed(review.disagreement) if review.leave_out_failed else set()
    return Reviewed(verdicts, frozenset(failed), carried)


def read_reasked(root: Path = Path(".")) -> set[str]:
    """The questions a person failed that generate asked again (data/generate_stats.json): they
    left the set on purpose, and their verdicts still count for the share as first drawn."""
    try:
        stats = json.loads((root / paths.GENERATE_STATS).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return set()
    return set(stats.get("reasked", []))


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
