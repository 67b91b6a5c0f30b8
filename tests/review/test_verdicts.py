"""The verdict file: labels/*.jsonl's schema, malformed lines named and kept, atomic writes, one
verdict per question and labeller, undo through the file, and two labellers' agreement."""

from __future__ import annotations

import json
import math
import multiprocessing
from pathlib import Path

import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import (
    carried_line,
    carry_over,
    parse_verdicts,
    pass_share,
    read_verdicts,
    render_lines,
)
from goldenset.review.verdicts import VerdictFile, agreements, verdict_row
from tests.conftest import ROOT

QUERY = {"qid": "gs-1", "doc_id": "7", "question": "Q?", "form": "question", "evidence": "E."}


def test_every_label_file_reads_as_verdicts():
    for path in sorted((ROOT / "labels").glob("*.jsonl")):
        verdicts = read_verdicts(path)
        assert not verdicts.problems, path
        assert len(verdicts.by_qid) == len(
            {json.loads(line)["qid"] for line in path.read_text().splitlines() if line.strip()}
        )


def test_a_verdict_row_is_a_label_row():
    label = json.loads((ROOT / "labels/steered_set.jsonl").read_text().splitlines()[2])
    row = verdict_row(QUERY, "b", "too vague", "me", "random")
    assert set(label) <= set(row)
    assert (row["verdict"], row["failed"], row["drawn"]) == ("fail", "b", "random")
    assert verdict_row(QUERY, "pass", "", "me", "least_sure")["failed"] is None
    with pytest.raises(ValueError, match="pass or one of a, b, both, nonsense"):
        verdict_row(QUERY, "maybe", "", "me", "random")


def test_malformed_lines_are_named_by_file_and_line_and_kept(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    good = json.dumps(verdict_row(QUERY, "pass", "", "me", "random"))
    path.write_text(f'{good}\n{{"qid": "gs-2", "verdict": "ok"}}\nnot json\n\n')
    verdicts = read_verdicts(path)
    assert list(verdicts.by_qid) == ["gs-1"]
    assert verdicts.problems == [
        f"{path}:2: verdict 'ok' is not pass or fail",
        f"{path}:3: not JSON (Expecting value)",
    ]
    with pytest.raises(GoldensetError, match=rf"^{path}:2: verdict 'ok'.*2 bad in all"):
        verdicts.check()
    other = verdict_row({**QUERY, "qid": "gs-3"}, "a", "", "me", "random")
    after = VerdictFile(path).record(other)
    lines = path.read_text().splitlines()
    assert lines[1:3] == ['{"qid": "gs-2", "verdict": "ok"}', "not json"]  # kept as they were
    assert set(after.by_qid) == {"gs-1", "gs-3"} and len(after.problems) == 2


def test_a_change_is_a_new_line_and_undo_takes_back_the_last_one(tmp_path):
    file = VerdictFile(tmp_path / "review" / "verdicts.jsonl")
    file.record(verdict_row(QUERY, "pass", "", "me", "random"))
    file.record(verdict_row({**QUERY, "qid": "gs-2"}, "a", "", "me", "random"))
    again = file.record(verdict_row(QUERY, "both", "no", "me", "random"))
    assert len(again.lines) == 3 and again.of("me")["gs-1"]["failed"] == "both"
    assert len(file.record(verdict_row(QUERY, "both", "no", "me", "random")).lines) == 3  # same
    # a new reader, as after a reload: the file alone knows what came before
    undone, qid = VerdictFile(file.path).undo("me")
    assert qid == "gs-1" and undone.of("me")["gs-1"]["verdict"] == "pass"  # the one before
    assert VerdictFile(file.path).undo("me")[1] == "gs-2"
    undone, qid = VerdictFile(file.path).undo("me")
    assert qid == "gs-1" and undone.latest == {}  # none before it: removed
    assert VerdictFile(file.path).undo("me") == (undone, None)  # nothing to undo


def test_two_labellers_verdicts_on_one_question_both_stand_and_undo_is_each_ones_own(tmp_path):
    file = VerdictFile(tmp_path / "verdicts.jsonl")
    file.record(verdict_row(QUERY, "pass", "", "ann", "random"))
    both = file.record(verdict_row(QUERY, "b", "vague", "bob", "random"))
    assert both.labellers() == ["ann", "bob"] and len(both.by_qid["gs-1"]) == 2
    assert both.failed("fail") == {"gs-1"} and both.failed("pass") == set()
    assert both.decided("pass")["gs-1"]["labeller"] == "ann"
    after, qid = file.undo("ann")
    assert qid == "gs-1" and after.labellers() == ["bob"]


def _verdicts(pairs: list[tuple[str, str]]):
    """Two labellers' verdicts, question by question: ("pass" or a failure kind) pairs."""
    rows = [
        verdict_row({**QUERY, "qid": f"gs-{i}"}, kind, "", who, "random")
        for i, pair in enumerate(pairs)
        for who, kind in zip(("ann", "bob"), pair, strict=True)
    ]
    return parse_verdicts("\n".join(json.dumps(row) for row in rows), "f")


def test_agreement_and_kappa_are_the_hand_computation():
    # 10 questions: both pass 3, both fail 4 (kinds may differ: a fail is a fail), ann pass and
    # bob fail 2, ann fail and bob pass 1
    pairs = [("pass", "pass")] * 3 + [("a", "b"), ("a", "a"), ("both", "a"), ("nonsense", "b")]
    pairs += [("pass", "a"), ("pass", "b"), ("b", "pass")]
    [found] = agreements(_verdicts(pairs))
    assert (found.labellers, found.n_questions, found.agreed) == (("ann", "bob"), 10, 7)
    # by hand: observed 7/10; ann passes 5/10, bob passes 4/10; chance .5*.4 + .5*.6 = .5
    assert found.kappa == pytest.approx((0.7 - 0.5) / (1 - 0.5), abs=1e-12)
    assert [first["qid"] for first, _ in found.split] == ["gs-7", "gs-8", "gs-9"]
    assert found.line() == (
        "ann and bob agree on 7 of the 10 questions both judged (70%), Cohen's kappa 0.40"
    )
    [unanimous] = agreements(_verdicts([("pass", "pass")] * 4))
    assert unanimous.kappa is None and unanimous.agreed == 4  # chance agreement is total


def _record_many(path: str, start: int) -> None:
    file = VerdictFile(Path(path))
    for i in range(start, start + 40):
        file.record(verdict_row({**QUERY, "qid": f"gs-{i}"}, "pass", "", "me", "random"))


def test_two_processes_writing_lose_nothing(tmp_path):
    path = tmp_path / "verdicts.jsonl"
    workers = [
        multiprocessing.get_context("spawn").Process(target=_record_many, args=(str(path), s))
        for s in (0, 1000)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    verdicts = read_verdicts(path)
    assert not verdicts.problems and len(verdicts.by_qid) == 80


def test_the_pass_share_interval_is_wilsons():
    rows = [{"verdict": "pass"}] * 11 + [{"verdict": "fail"}] * 19
    share = pass_share(rows)
    assert share.line() == "30 checked: 11 pass, 37% [22%, 54%]"  # the issue's own example
    z, n, p = 1.959963984540054, 30, 11 / 30  # Wilson's score interval, by its formula
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert share.low == pytest.approx(centre - half, abs=1e-9)
    assert share.high == pytest.approx(centre + half, abs=1e-9)
    assert pass_share([]) is None


def test_parse_verdicts_reads_a_byte_order_mark_and_a_later_line_wins():
    first = json.dumps(verdict_row(QUERY, "pass", "", "me", "random"))
    second = json.dumps(verdict_row(QUERY, "a", "", "me", "random"))
    verdicts = parse_verdicts(f"\ufeff{first}\n{second}\n", "f")
    assert verdicts.of("me")["gs-1"]["failed"] == "a" and not verdicts.problems


def test_the_servers_own_files_are_ignored_by_git_and_dvc_here_and_in_an_initialised_repository(
    tmp_path,
):
    """`git add -A` after a review commits the verdicts, not the lock the server takes nor a
    write left in flight; DVC hashes the folder without them."""
    import subprocess

    from goldenset.init import REVIEW_IGNORE, Options, generated_files, ignore_in_dvc

    written = generated_files(Options(tmp_path), tmp_path, tmp_path, "", [])
    assert written["review/.gitignore"] == REVIEW_IGNORE
    assert (ROOT / "review/.gitignore").read_text() == REVIEW_IGNORE  # this repository's
    # DVC's: the repository's .dvcignore (not one inside review/, a folder stages depend on)
    assert (ROOT / ".dvcignore").read_text().endswith(REVIEW_IGNORE)
    (tmp_path / ".dvcignore").write_text("# dvc init's\n")
    ignore_in_dvc(tmp_path)
    ignore_in_dvc(tmp_path)  # once: --upgrade runs it again
    assert (tmp_path / ".dvcignore").read_text() == "# dvc init's\n" + REVIEW_IGNORE
    file = VerdictFile(tmp_path / "review/verdicts.jsonl")
    file.record(json.loads((ROOT / "labels/steered_set.jsonl").read_text().splitlines()[0]))
    (tmp_path / "review/.gitignore").write_text(REVIEW_IGNORE)
    (tmp_path / "review/.verdicts.jsonl.x1y2.tmp").write_text("a write in flight")
    own = {".gitignore", "verdicts.jsonl"}
    left = [p for p in (tmp_path / "review").iterdir() if p.name not in own]
    assert {p.name for p in left} == {".verdicts.jsonl.lock", ".verdicts.jsonl.x1y2.tmp"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for path in left:
        checked = subprocess.run(
            ["git", "check-ignore", "-q", str(path.relative_to(tmp_path))], cwd=tmp_path
        )
        assert checked.returncode == 0, path.name


@pytest.mark.parametrize(
    ("round_folder", "counted"), [("blind_round52", (58, 0.9207)), ("blind_round62", (55, 0.7984))]
)
def test_two_blind_labellers_on_the_shipped_set_agree_as_counted_by_hand(round_folder, counted):
    """labels/blind_round*/shipped_verdicts.jsonl: two blind labellers on the same 60 questions
    of the shipped golden set, in the verdict format; the audit's figures against a count."""
    from goldenset.review.pass_shares import review_metrics

    path = ROOT / "labels" / round_folder / "shipped_verdicts.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    a, b = sorted({row["labeller"] for row in rows})
    passed = {(row["qid"], row["labeller"]): row["verdict"] == "pass" for row in rows}
    qids = sorted({row["qid"] for row in rows})
    cells = {
        (x, y): sum(passed[qid, a] == x and passed[qid, b] == y for qid in qids)
        for x in (True, False)
        for y in (True, False)
    }
    n = len(qids)
    observed = (cells[True, True] + cells[False, False]) / n
    a_pass = (cells[True, True] + cells[True, False]) / n
    b_pass = (cells[True, True] + cells[False, True]) / n
    chance = a_pass * b_pass + (1 - a_pass) * (1 - b_pass)
    kappa = (observed - chance) / (1 - chance)
    verdicts = read_verdicts(path)
    metrics = review_metrics(verdicts, set(qids), set(), pd.Series(dtype=float), ReviewParams())
    [agreement] = metrics.metrics["agreement"]
    assert agreement == {
        "labellers": [a, b],
        "questions": 60,
        "agreed": cells[True, True] + cells[False, False],
        "share": round(observed, 4),
        "kappa": round(kappa, 4),
    }
    assert metrics.agreements[0].kappa == pytest.approx(kappa, abs=1e-12)
    assert (agreement["agreed"], agreement["kappa"]) == counted  # as labels/README.md says


def written(qid: str, question: str, doc_id: str = "7", evidence: str = "E.") -> dict:
    return {
        "qid": qid,
        "doc_id": doc_id,
        "question": question,
        "form": "question",
        "evidence": evidence,
    }


def test_a_verdict_follows_its_question_to_a_new_qid_and_one_matching_nothing_is_stale():
    """A writer change gives questions that read the same new qids: their verdicts apply there
    (whitespace aside); a verdict whose question is no longer written is stale, unless generate
    asked its sentence again on purpose (kept); a qid still written keeps its own verdicts."""
    lines = [
        verdict_row(written("old-1", "What does  X do?"), "a", "", "ann", "random"),
        verdict_row(written("old-2", "Which gene?"), "pass", "", "ann", "random"),
        verdict_row(written("old-3", "Gone question?"), "b", "", "ann", "random"),
        verdict_row(written("reasked", "Failed and asked again?"), "a", "", "ann", "random"),
        verdict_row(written("same", "Kept?"), "pass", "", "bob", "random"),
    ]
    verdicts = parse_verdicts(render_lines(lines), "verdicts.jsonl")
    now = [
        written("new-1", "What does X do?"),
        written("new-2", "Which gene?"),
        written("same", "Kept?"),
        written("new-3", "Which gene?", doc_id="8"),
    ]
    carried = carry_over(verdicts, now, kept={"reasked"})

    assert carried.carried == 2
    assert [row["qid"] for row in carried.stale] == ["old-3"]
    assert carried.verdicts.decided("fail") == {
        "new-1": {**lines[0], "qid": "new-1", "was_qid": "old-1"},
        "new-2": {**lines[1], "qid": "new-2", "was_qid": "old-2"},
        "old-3": lines[2],
        "reasked": lines[3],
        "same": lines[4],
    }
    assert carried.verdicts.failed("fail") == {"new-1", "old-3", "reasked"}
    assert "2 verdicts carried over" in carried_line(carried)
    assert "1 stale" in carried_line(carried)
    assert carried_line(
        carry_over(verdicts, [*now, written("old-3", "Gone question?")], kept={"reasked"})
    ) == (
        "review: 2 verdicts carried over to questions that read the same under a new qid; "
        "0 stale (their question is no longer written)"
    )


def test_a_later_verdict_on_the_new_qid_wins_over_the_carried_one():
    old = verdict_row(written("old-1", "Q?"), "a", "", "ann", "random")
    new = verdict_row(written("new-1", "Q?"), "pass", "fixed my mind", "ann", "random")
    for order, expected in [([old, new], "pass"), ([new, old], "fail")]:
        verdicts = parse_verdicts(render_lines(order), "verdicts.jsonl")
        carried = carry_over(verdicts, [written("new-1", "Q?")])
        assert carried.verdicts.of("ann")["new-1"]["verdict"] == expected
        assert len(carried.verdicts.latest) == 1
        assert carried.carried == (expected == "fail")
