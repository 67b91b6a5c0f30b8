"""The verdict file: a person's strict-rule verdicts, one JSON line a query, keyed by its id.

The schema is that of labels/*.jsonl (labels/RULE.md), so goldenset's own labels load into the
page and the page's verdicts fit the judge: qid, doc_id, question, form, evidence, verdict
(pass | fail), failed (a | b | both | nonsense, null on a pass), reason (the person's note),
labeller, and drawn: how the query came to be reviewed (random: a seeded random sample, whose
pass share estimates the set's; least_sure: picked by the judge, which biases that share).

The query id hashes the question's text, so a rewritten question starts unjudged. The file is
git-tracked beside params.yaml (review.folder); every write replaces it whole (write_atomically)
under a lock, and keeps a malformed line as it was, so a second tab or a killed server loses
nothing.
"""

from __future__ import annotations

import fcntl
import json
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically

FAILURES = ("a", "b", "both", "nonsense")  # labels/RULE.md's failure kinds
DRAWN = ("random", "least_sure")
FIELDS = ("qid", "doc_id", "question", "form", "evidence", "verdict", "failed", "reason")


@dataclass(frozen=True)
class Verdicts:
    """A verdict file as read: the valid verdicts by query id (a later line wins), every line in
    order (a malformed one kept as text), and what is wrong with each malformed line."""

    by_qid: dict[str, dict] = field(default_factory=dict)
    lines: list[str | dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "file:line: why"

    def failed(self) -> set[str]:
        return {qid for qid, row in self.by_qid.items() if row["verdict"] == "fail"}

    def drawn_at_random(self) -> list[dict]:
        return [row for row in self.by_qid.values() if row.get("drawn", "random") == "random"]

    def check(self) -> None:
        """Raise the first problem, for a stage: a verdict left unread changes what is scored."""
        if self.problems:
            raise GoldensetError(
                f"{self.problems[0]} (mend or delete the line; {len(self.problems)} bad in all)"
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
    return None


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
            verdicts.by_qid[row["qid"]] = row
    return verdicts


def read_verdicts(path: Path) -> Verdicts:
    """The verdict file at path; none yet: no verdicts."""
    try:
        return parse_verdicts(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        return Verdicts()


def verdict_row(query: dict, kind: str, note: str, labeller: str, drawn: str) -> dict:
    """A verdict line for a golden-set row: `kind` is pass or one of FAILURES."""
    if kind != "pass" and kind not in FAILURES:
        raise ValueError(f"verdict {kind!r}: pass or one of {', '.join(FAILURES)}")
    return {
        **{name: query.get(name) for name in FIELDS[:5]},
        "verdict": "pass" if kind == "pass" else "fail",
        "failed": None if kind == "pass" else kind,
        "reason": note,
        "labeller": labeller,
        "drawn": drawn,
    }


def render_lines(lines: list[str | dict]) -> str:
    return "".join(
        (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
        for line in lines
    )


class VerdictFile:
    """The verdict file as the page writes it: each change reads the file anew under a lock
    (threads, and other processes through flock), so two tabs or two servers add to each other's
    verdicts, and replaces it whole."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    @contextmanager
    def _locked(self) -> Iterator[Verdicts]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(f".{self.path.name}.lock")
        with self._lock, open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield read_verdicts(self.path)

    def read(self) -> Verdicts:
        return read_verdicts(self.path)

    def record(self, *rows: dict) -> Verdicts:
        """Write verdicts: each replaces its query's earlier one, and is added last."""
        for row in rows:
            if problem := verdict_problem(row):
                raise ValueError(problem)
        new = {row["qid"]: row for row in rows}
        with self._locked() as verdicts:
            kept = [line for line in verdicts.lines if not _is_verdict_of(line, new)]
            return self._write(kept + list(new.values()))

    def remove(self, qid: str) -> Verdicts:
        """Undo: the query's verdict taken out (nothing when it has none)."""
        with self._locked() as verdicts:
            return self._write([line for line in verdicts.lines if not _is_verdict_of(line, {qid})])

    def _write(self, lines: list[str | dict]) -> Verdicts:
        text = render_lines(lines)
        write_atomically(self.path, text)
        return parse_verdicts(text, str(self.path))


def _is_verdict_of(line: str | dict, qids: Collection[str]) -> bool:
    return isinstance(line, dict) and line["qid"] in qids


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
        return (
            f"{self.checked} checked: {self.passed} pass, {self.estimate:.0%} "
            f"[{self.low:.0%}, {self.high:.0%}]"
        )

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
