"""What people's verdicts do to the golden set that is scored: a question they passed stays,
one they fixed is replaced by their version, one they failed is left out (review.leave_out_failed;
review.disagreement decides a question two people split on).

The apply stage applies them once, to the written set (data/goldenset.jsonl), and writes the set
as people left it (data/applied.jsonl), which embed, score, the exports, compare and calibrate
read; the audit reads both. `goldenset calibrate` applies them the same way to the sets it writes
for other seeds.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldenset.core import paths
from goldenset.core.ids import content_id
from goldenset.core.params import Disagreement, ReviewParams
from goldenset.corpus.queries import FIXED_FROM
from goldenset.corpus.verdicts import CarriedOver, Verdicts, carry_over, labeller_of, read_verdicts


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


FIXED_PREFIX = "fx-"  # a person's version of a question: its qid is its content's


@dataclass(frozen=True)
class Applied:
    """The golden set as people left it (apply_verdicts): its rows, and how the verdicts met
    the written set (counts: none without a verdict)."""

    rows: list[dict]
    counts: dict


def apply_verdicts(written: list[dict], reviewed: Reviewed, disagreement: Disagreement) -> Applied:
    """The written golden set's rows with people's verdicts applied: a question whose decided
    verdict (review.disagreement) is a pass stays as written; one someone fixed is replaced by
    the latest fix (fixed_row); one failed without a fix is left out when reviewed.failed holds
    it (review.leave_out_failed), else stays. The order is the written set's."""
    decided = reviewed.verdicts.decided(disagreement)
    fixes = {row["qid"]: row for row in reviewed.verdicts.latest.values() if row.get("fix")}
    taken = {row["qid"] for row in written} | {str(row["doc_id"]) for row in written}
    rows, fixed, left_out = [], 0, 0
    for row in written:
        verdict = decided.get(row["qid"])
        if verdict is not None and verdict["verdict"] == "fail" and row["qid"] in fixes:
            row = fixed_row(row, fixes[row["qid"]], taken)
            taken.add(row["qid"])
            fixed += 1
        elif row["qid"] in reviewed.failed:
            left_out += 1
            continue
        rows.append(row)
    counts = {}
    if reviewed.verdicts.latest:
        checked = [row["qid"] for row in written if row["qid"] in decided]
        counts = {
            "questions": len(written),
            "checked": len(checked),
            "fixed": fixed,
            "left_out": left_out,
            "scored": len(rows),
            "scored_checked": len(checked) - left_out,
        }
        if reviewed.carried and (reviewed.carried.carried or reviewed.carried.stale):
            counts["carried"] = reviewed.carried.carried
            counts["stale"] = len(reviewed.carried.stale)
    return Applied(rows, counts)


def fixed_row(row: dict, verdict: dict, taken: Collection[str] = ()) -> dict:
    """A written question's row as a person fixed it (the verdict's fix): their text and
    evidence, under a qid of its own derived from that content (never one of `taken`), with
    the original's qid as fixed_from and the fixer as fixed_by."""
    fix = verdict["fix"]
    content = {
        "doc_id": str(row["doc_id"]),
        "span": [fix["evidence_start"], fix["evidence_end"]],
        "question": fix["question"],
    }
    return {
        **row,
        "qid": content_id(FIXED_PREFIX, content, taken),
        "question": fix["question"],
        "evidence_start": fix["evidence_start"],
        "evidence_end": fix["evidence_end"],
        "evidence": fix["evidence"],
        FIXED_FROM: row["qid"],
        "fixed_by": labeller_of(verdict),
    }


def read_applied_counts(root: Path = Path(".")) -> dict:
    """How the verdicts met the golden set, as the apply stage counted them ({}: no verdict)."""
    try:
        return json.loads((root / paths.APPLIED_STATS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def scored_line(counts: dict) -> str:
    return (
        "review: {checked} of the golden set's {questions} questions checked by a person, "
        "{fixed} fixed, {left_out} failed and left out; {scored} scored, {scored_checked} of "
        "them checked"
    ).format(**counts)
