"""The golden set as people left it, in memory: a pass stays, a fix replaces its question under
a qid of its own, a fail without a fix is left out, and the counts say so."""

from __future__ import annotations

from goldenset.corpus.verdicts import carry_over, parse_verdicts, render_lines
from goldenset.review.verdicts import verdict_row
from goldenset.scoring.reviewed import Reviewed, apply_verdicts, fixed_row

DOCUMENT = "Bariatric surgery lowers weight. Most patients lost half their excess weight."


def written(n: int) -> list[dict]:
    return [
        {
            "qid": f"q{i}",
            "question": f"What is asked {i}?",
            "doc_id": "d1",
            "evidence_start": 0,
            "evidence_end": 32,
            "evidence": DOCUMENT[:32],
            "form": "question",
        }
        for i in range(n)
    ]


def fix_of(question: str, start: int = 33, end: int = len(DOCUMENT)) -> dict:
    return {
        "question": question,
        "evidence": DOCUMENT[start:end],
        "evidence_start": start,
        "evidence_end": end,
    }


def reviewed(rows: list[dict], leave_out_failed: bool = True) -> Reviewed:
    verdicts = parse_verdicts(render_lines(rows), "verdicts.jsonl")  # as the file is read
    failed = verdicts.failed("fail") if leave_out_failed else set()
    return Reviewed(verdicts, frozenset(failed))


def test_a_pass_stays_a_fix_replaces_a_fail_leaves():
    rows = written(4)
    fixed = fix_of("How much weight did patients lose after bariatric surgery?")
    verdicts = reviewed(
        [
            verdict_row(rows[0], "pass", "", "me", "random"),
            verdict_row(rows[1], "a", "", "me", "random", fix=fixed),
            verdict_row(rows[2], "b", "", "me", "random"),
        ]
    )
    applied = apply_verdicts(rows, verdicts, "fail")
    assert [row.get("fixed_from") for row in applied.rows] == [None, "q1", None]
    assert applied.rows[0] is rows[0] and applied.rows[2] is rows[3]  # as written
    mended = applied.rows[1]
    assert mended["qid"].startswith("fx-") and mended["qid"] not in {"q1", "d1"}
    assert mended["question"] == fixed["question"]
    assert (mended["evidence_start"], mended["evidence_end"]) == (33, len(DOCUMENT))
    assert mended["evidence"] == DOCUMENT[33:] and mended["fixed_by"] == "me"
    assert applied.counts == {
        "questions": 4,
        "checked": 3,
        "fixed": 1,
        "left_out": 1,
        "scored": 3,
        "scored_checked": 2,
    }
    # failed questions scored as written (review.leave_out_failed: false), the fix still applied
    kept = apply_verdicts(rows, reviewed(verdicts.verdicts.lines, False), "fail")
    assert [row["qid"] for row in kept.rows] == ["q0", mended["qid"], "q2", "q3"]
    assert kept.counts["left_out"] == 0 and kept.counts["scored_checked"] == 3


def test_no_verdict_leaves_the_set_as_written_and_counts_nothing():
    rows = written(3)
    applied = apply_verdicts(rows, Reviewed(), "fail")
    assert applied.rows == rows and applied.counts == {}


def test_a_fixed_questions_qid_is_its_contents():
    rows = written(2)
    fixed = fix_of("How much weight did patients lose?")
    verdict = verdict_row(rows[0], "a", "", "me", "random", fix=fixed)
    first = fixed_row(rows[0], verdict)
    assert fixed_row(rows[0], verdict)["qid"] == first["qid"]  # stable
    other = verdict_row(rows[0], "a", "", "me", "random", fix=fix_of("How much weight?"))
    assert fixed_row(rows[0], other)["qid"] != first["qid"]
    # the same version of two questions: two qids, never one
    twin = verdict_row(rows[1], "a", "", "me", "random", fix=fixed)
    assert fixed_row(rows[1], twin, {first["qid"]})["qid"] != first["qid"]
    both = apply_verdicts(rows, reviewed([verdict, twin]), "fail")
    assert len({row["qid"] for row in both.rows}) == 2


def test_the_decided_verdict_chooses_between_a_pass_and_a_fix():
    rows = written(1)
    fixed = fix_of("How much weight did patients lose?")
    passed_by_you = verdict_row(rows[0], "pass", "", "you", "random")
    split = reviewed([passed_by_you, verdict_row(rows[0], "a", "", "me", "random", fix=fixed)])
    assert apply_verdicts(rows, split, "fail").rows[0]["question"] == fixed["question"]
    passed = Reviewed(split.verdicts, frozenset(split.verdicts.failed("pass")))
    assert apply_verdicts(rows, passed, "pass").rows == rows  # the pass wins: as written
    # the latest fix of two people wins
    later = fix_of("How much excess weight did patients lose?")
    two = reviewed(
        [*split.verdicts.lines, verdict_row(rows[0], "b", "", "you", "random", fix=later)]
    )
    assert apply_verdicts(rows, two, "fail").rows[0]["question"] == later["question"]


def test_a_fix_carried_over_to_a_new_writers_question_still_applies():
    rows = written(2)
    fixed = fix_of("How much weight did patients lose?")
    verdicts = reviewed([verdict_row(rows[0], "a", "", "me", "random", fix=fixed)]).verdicts
    rewritten = [{**row, "qid": f"new-{row['qid']}"} for row in rows]
    carried = carry_over(verdicts, rewritten).verdicts
    applied = apply_verdicts(
        rewritten, Reviewed(carried, frozenset(carried.failed("fail"))), "fail"
    )
    assert applied.rows[0]["fixed_from"] == "new-q0"
    assert applied.rows[0]["question"] == fixed["question"]
