"""The verdict file: labels/*.jsonl's schema, malformed lines named and kept, atomic writes."""

from __future__ import annotations

import json
import math
import multiprocessing
from pathlib import Path

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.review.verdicts import (
    VerdictFile,
    parse_verdicts,
    pass_share,
    read_verdicts,
    verdict_row,
)
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


def test_record_replaces_a_verdict_and_remove_takes_it_back(tmp_path):
    file = VerdictFile(tmp_path / "review" / "verdicts.jsonl")
    file.record(verdict_row(QUERY, "pass", "", "me", "random"))
    again = file.record(verdict_row(QUERY, "both", "no", "me", "random"))
    assert len(again.lines) == 1 and again.by_qid["gs-1"]["failed"] == "both"
    assert file.remove("gs-1").by_qid == {}
    assert file.remove("gs-1").by_qid == {}  # nothing to undo


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
    assert verdicts.by_qid["gs-1"]["failed"] == "a" and not verdicts.problems


def test_the_lock_beside_the_verdicts_is_ignored_by_git_here_and_in_an_initialised_repository(
    tmp_path,
):
    """`git add -A` after a review commits the verdicts, not the lock the server takes."""
    import subprocess

    from goldenset.init import Options, generated_files

    file = VerdictFile(tmp_path / "review/verdicts.jsonl")
    file.record(json.loads((ROOT / "labels/steered_set.jsonl").read_text().splitlines()[0]))
    [lock] = [p for p in (tmp_path / "review").iterdir() if p.name != "verdicts.jsonl"]
    for top, ignore in [
        (ROOT, (ROOT / ".gitignore").read_text()),
        (tmp_path, generated_files(Options(tmp_path), tmp_path, tmp_path, "", [])[".gitignore"]),
    ]:
        (tmp_path / ".gitignore").write_text(ignore)
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        checked = subprocess.run(
            ["git", "check-ignore", "-q", str(lock.relative_to(tmp_path))], cwd=tmp_path
        )
        assert checked.returncode == 0, top
