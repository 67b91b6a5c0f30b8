"""The verdict file's format: people's strict-rule verdicts, one JSON line each.

The schema is that of labels/*.jsonl (labels/RULE.md), so goldenset's own labels load into the
review page and the page's verdicts fit the judge: qid, doc_id, question, form, evidence, verdict
(pass | fail), failed (a | b | both | nonsense, null on a pass), reason (the person's note),
labeller, and drawn: how the query came to be reviewed (random: a seeded random sample, whose
pass share estimates the set's; least_sure: picked by the judge, which biases that share).
Two fields are optional, so older files load as they are:
- fix: the person's own version of a query they failed for a or b: its question, and its
  evidence text with its place in the document (evidence_start, evidence_end). The line keeps
  the original question, failed as written;
- seconds: the time from the query being shown to the verdict, idle spells cut.

A verdict is keyed by its question and its labeller: two people's verdicts on one question both
stand. The file is a log: a changed verdict is a new line, and the later line of a key wins, so
an undo can take the last line back and find the verdict before it. A malformed line is kept as
it was and named by file and line.

A qid names how a question was written (prompt, writer, seed, decoder), so a writer change gives
a question that reads word for word the same a new qid. A verdict follows the question, not the
qid (carry_over): one whose qid is gone applies to the written question with the same document,
evidence and text (whitespace normalised); one that matches nothing is stale, and said so.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldenset.core.errors import GoldensetError
from goldenset.core.params import Disagreement

FAILURES = ("a", "b", "both", "nonsense")  # labels/RULE.md's failure kinds
DRAWN = ("random", "least_sure")
FIELDS = ("qid", "doc_id", "question", "form", "evidence", "verdict", "failed", "reason")
FIX_FIELDS = ("question", "evidence", "evidence_start", "evidence_end")  # a fix's own version
FIXABLE = ("a", "b", "both")  # what a fix mends: nonsense is not a query to mend
SAME_QUESTION = ("doc_id", "evidence", "question")  # what makes two written questions one
UNNAMED = "unnamed"  # the labeller of a line that names none


def labeller_of(row: dict) -> str:
    return str(row.get("labeller") or UNNAMED)


def key_of(row: dict) -> tuple[str, str]:
    return row["qid"], labeller_of(row)


@dataclass(frozen=True)
class Verdicts:
    """A verdict file as read: each (question, labeller)'s latest verdict, every line in order
    (a malformed one kept as text), and what is wrong with each malformed line."""

    latest: dict[tuple[str, str], dict] = field(default_factory=dict)
    lines: list[str | dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "file:line: why"

    @property
    def by_qid(self) -> dict[str, list[dict]]:
        """Every labeller's verdict on each question, in the order of their latest lines."""
        grouped: dict[str, list[dict]] = {}
        for (qid, _), row in self.latest.items():
            grouped.setdefault(qid, []).append(row)
        return grouped

    def labellers(self) -> list[str]:
        return sorted({labeller for _, labeller in self.latest})

    def of(self, labeller: str) -> dict[str, dict]:
        """One labeller's verdicts by question."""
        return {qid: row for (qid, who), row in self.only(labeller).latest.items()}

    def only(self, labeller: str) -> Verdicts:
        """One labeller's verdicts alone (lines and problems left out)."""
        return Verdicts({key: row for key, row in self.latest.items() if key[1] == labeller})

    def among(self, qids: Collection[str]) -> Verdicts:
        """The verdicts of these questions alone (lines and problems left out)."""
        return Verdicts({key: row for key, row in self.latest.items() if key[0] in qids})

    def decided(self, disagreement: Disagreement) -> dict[str, dict]:
        """One verdict a question: its labellers' when they agree, else the first of theirs
        whose verdict is `disagreement` (review.disagreement)."""
        return {
            qid: next((row for row in rows if row["verdict"] == disagreement), rows[0])
            for qid, rows in self.by_qid.items()
        }

    def failed(self, disagreement: Disagreement) -> set[str]:
        decided = self.decided(disagreement)
        return {qid for qid, row in decided.items() if row["verdict"] == "fail"}

    def check(self) -> None:
        """Raise the first problem, for a stage: a verdict left unread changes what is scored."""
        if self.problems:
            raise GoldensetError(
                f"{self.problems[0]} (mend or delete the line; {len(self.problems)} bad in all)"
            )


def question_key(row: Mapping) -> tuple[str, ...]:
    """What a verdict was given on, whatever wrote it: document, evidence and question text,
    whitespace normalised."""
    return tuple(" ".join(str(row.get(name) or "").split()) for name in SAME_QUESTION)


@dataclass(frozen=True)
class CarriedOver:
    """Verdicts as they apply to the questions written now (carry_over)."""

    verdicts: Verdicts  # a verdict of a gone qid on a question that reads the same: re-keyed
    carried: int  # verdicts now on a question of another qid ("was_qid" names the old one)
    stale: list[dict]  # verdicts matching no question written now, as given


def carry_over(
    verdicts: Verdicts, written: Iterable[Mapping], kept: Collection[str] = ()
) -> CarriedOver:
    """The verdicts on the questions written now (`written`: golden-set rows): by qid, or else
    on the question with the same document, evidence and text (question_key), under its qid; the
    later line of a labeller wins as in the file. A verdict matching neither is stale, unless
    its qid is in `kept` (questions that left the set on purpose, such as those generate asked
    again); stale verdicts stay in the result under their own qid, which no question has."""
    written = list(written)
    current = {question["qid"] for question in written}
    if all(qid in current for qid, _ in verdicts.latest):  # as a page's own verdicts are
        return CarriedOver(verdicts, 0, [])
    by_text: dict[tuple[str, ...], str] = {}
    for question in written:
        by_text.setdefault(question_key(question), question["qid"])
    latest: dict[tuple[str, str], dict] = {}
    for (qid, _), row in verdicts.latest.items():
        moved = by_text.get(question_key(row)) if qid not in current else None
        if moved is not None:
            row = {**row, "qid": moved, "was_qid": qid}
        latest.pop(key_of(row), None)  # the later line wins, wherever it was keyed
        latest[key_of(row)] = row
    moved_rows = [row for row in latest.values() if "was_qid" in row]
    stale = [row for (qid, _), row in latest.items() if qid not in current and qid not in kept]
    return CarriedOver(Verdicts(latest, verdicts.lines, verdicts.problems), len(moved_rows), stale)


def carried_line(carried: CarriedOver) -> str:
    """What carry_over did, in one line; empty when every verdict kept its qid."""
    if not carried.carried and not carried.stale:
        return ""
    return (
        f"review: {carried.carried} verdicts carried over to questions that read the same under "
        f"a new qid; {len(carried.stale)} stale (their question is no longer written)"
    )


def verdict_problem(row: object) -> str | None:
    """Why a parsed line is not a verdict, or None."""
    if not isinstance(row, dict):
        return "not a JSON object"
    if not isinstance(row.get("qid"), str) or not row["qid"]:
        return "no qid"
    if row.get("verdict") not in ("pass", "fail"):
        return f"verdict {row.get('verdict')!r} is not pass or fail"
    failed = row.get("failed")
    if row["verdict"] == "pass" and failed is not None:
        return f"a pass with failed {failed!r}"
    if row["verdict"] == "fail" and failed not in FAILURES:
        return f"failed {failed!r} is not one of {', '.join(FAILURES)}"
    if row.get("drawn", "random") not in DRAWN:
        return f"drawn {row.get('drawn')!r} is not one of {', '.join(DRAWN)}"
    if problem := seconds_problem(row.get("seconds")):
        return problem
    if row.get("fix") is not None:
        return fix_problem(row)
    return None


def seconds_problem(seconds: object) -> str | None:
    """Why a verdict's `seconds` is not a time, or None (None: not measured)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return f"seconds {seconds!r} is not a number"
    if seconds < 0:
        return f"seconds {seconds!r} is negative"
    return None


def fix_problem(row: dict) -> str | None:
    """Why a verdict's fix is not one, or None."""
    fix = row["fix"]
    if row["verdict"] != "fail" or row.get("failed") not in FIXABLE:
        return f"a fix on a verdict that is not a fail for {', '.join(FIXABLE)}"
    if not isinstance(fix, dict) or set(fix) != set(FIX_FIELDS):
        return f"a fix is an object of {', '.join(FIX_FIELDS)}"
    if not all(isinstance(fix[name], str) and fix[name].strip() for name in FIX_FIELDS[:2]):
        return "a fix's question and evidence are text"
    start, end = fix["evidence_start"], fix["evidence_end"]
    if not all(isinstance(at, int) and not isinstance(at, bool) for at in (start, end)):
        return "a fix's evidence_start and evidence_end are whole numbers"
    if not 0 <= start < end:
        return f"a fix's evidence from {start} to {end} is no span"
    return None


def fixed_qids(verdicts: Verdicts) -> set[str]:
    """The questions someone fixed (their latest verdict holds a fix)."""
    return {qid for (qid, _), row in verdicts.latest.items() if row.get("fix")}


def parse_verdicts(text: str, name: str) -> Verdicts:
    """A verdict file's text; `name` is the file as errors should name it."""
    verdicts = Verdicts()
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            problem = verdict_problem(row)
        except ValueError as error:
            problem = f"not JSON ({error.args[0].split(':')[0]})"
        if problem:
            verdicts.lines.append(line)
            verdicts.problems.append(f"{name}:{number}: {problem}")
        else:
            verdicts.lines.append(row)
            verdicts.latest.pop(key_of(row), None)  # a changed verdict counts where it now is
            verdicts.latest[key_of(row)] = row
    return verdicts


def read_verdicts(path: Path) -> Verdicts:
    """The verdict file at path; none yet: no verdicts."""
    try:
        return parse_verdicts(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        return Verdicts()


def render_lines(lines: list[str | dict]) -> str:
    return "".join(
        (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
        for line in lines
    )


@dataclass(frozen=True)
class PassShare:
    """Pass share of checked queries with its Wilson interval (exact enough at 10 verdicts, and
    never outside [0, 1] as the normal interval is at a share near 0 or 1)."""

    checked: int
    passed: int
    estimate: float
    low: float
    high: float

    def line(self) -> str:
        return checked_line(self.as_dict())

    def as_dict(self) -> dict:
        return {
            "checked": self.checked,
            "passed": self.passed,
            "estimate": round(self.estimate, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
        }


def pass_share(rows: list[dict], confidence: float = 0.95) -> PassShare | None:
    """The share of verdicts that pass, with its interval; None without verdicts."""
    from scipy.stats import binomtest  # not at import: params.yaml's reference page reads this

    if not rows:
        return None
    passed = sum(row["verdict"] == "pass" for row in rows)
    interval = binomtest(passed, len(rows)).proportion_ci(confidence, method="wilson")
    return PassShare(len(rows), passed, passed / len(rows), interval.low, interval.high)


def checked_line(share: dict) -> str:
    """ "30 checked: 11 pass, 37% [22%, 54%]", the review page's header, of a pass share's dict."""
    return (
        f"{share['checked']} checked: {share['passed']} pass, {share['estimate']:.0%} "
        f"[{share['low']:.0%}, {share['high']:.0%}]"
    )


def share_line(share: dict) -> str:
    """ "17 of 60 pass, 28% [18%, 41%]" of a pass share's dict (PassShare.as_dict)."""
    if not share.get("checked"):
        return "none checked"
    return (
        f"{share['passed']} of {share['checked']} pass, {share['estimate']:.0%} "
        f"[{share['low']:.0%}, {share['high']:.0%}]"
    )


def golden_line(golden: dict) -> str:
    """ "kept 22 of 30, 73% [55%, 86%]: 12 as written, 10 fixed, 8 failed; 0.8 min a question
    kept" of goldenset.review.pass_shares.golden_share's dict (the audit's opening: 100
    characters)."""
    minutes = golden["minutes_per_golden"]
    return (
        f"kept {golden['passed']} of {golden['checked']}, {golden['estimate']:.0%} "
        f"[{golden['low']:.0%}, {golden['high']:.0%}]: {golden['as_written']} as written, "
        f"{golden['fixed']} fixed, {golden['failed']} failed"
        + (f"; {minutes:.1f} min a question kept" if minutes is not None else "")
    )
