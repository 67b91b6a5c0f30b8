"""The verdict file as the review page writes it, and what people's verdicts add up to: a
pass share with its interval, and two people's agreement on the questions both judged.

The format (one JSON line a verdict, keyed by question and labeller, a later line wins) is
goldenset.corpus.verdicts'. The file is git-tracked beside params.yaml (review.folder); every write
replaces it whole (write_atomically) under a lock, and keeps a malformed line as it was, so a
second tab or a killed server loses nothing.
"""

from __future__ import annotations

import fcntl
import itertools
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from goldenset.core.files import write_atomically
from goldenset.corpus.verdicts import (
    FAILURES,
    FIELDS,
    Verdicts,
    key_of,
    labeller_of,
    parse_verdicts,
    read_verdicts,
    render_lines,
    verdict_problem,
)


def verdict_row(
    query: dict,
    kind: str,
    note: str,
    labeller: str,
    drawn: str,
    *,
    fix: dict | None = None,
    seconds: float | None = None,
) -> dict:
    """A verdict line for a golden-set row: `kind` is pass or one of FAILURES; `fix` the
    person's own version (corpus.verdicts.FIX_FIELDS) of a query failed for a or b; `seconds`
    the time it took."""
    if kind != "pass" and kind not in FAILURES:
        raise ValueError(f"verdict {kind!r}: pass or one of {', '.join(FAILURES)}")
    row = {
        **{name: query.get(name) for name in FIELDS[:5]},
        "verdict": "pass" if kind == "pass" else "fail",
        "failed": None if kind == "pass" else kind,
        "reason": note,
        "labeller": labeller,
        "drawn": drawn,
    }
    if fix is not None:
        row["fix"] = fix
    if seconds is not None:
        row["seconds"] = round(float(seconds), 1)
    return row


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

    def record(self, *rows: dict, again: bool = False) -> Verdicts:
        """Add verdicts, each after the file's lines. The same verdict again adds nothing (so
        loading a file twice is loading it once), unless `again`: a person's action on the page
        is a line even when it repeats their verdict, so that undo takes back that action."""
        for row in rows:
            if problem := verdict_problem(row):
                raise ValueError(problem)
        with self._locked() as verdicts:
            new = {key_of(row): row for row in rows}
            added = [
                row for key, row in new.items() if again or not _same(verdicts.latest.get(key), row)
            ]
            return self._write([*verdicts.lines, *added]) if added else verdicts

    def undo(self, labeller: str) -> tuple[Verdicts, str | None]:
        """Take back the labeller's last action: their last line, with the lines before it on
        the same question that gave the same verdict (an action repeated is one verdict), so the
        verdict the question had before counts again, or none. Also the question it was of
        (None: nothing to undo)."""
        with self._locked() as verdicts:
            lines = verdicts.lines
            theirs = [i for i, line in enumerate(lines) if _given_by(line, labeller)]
            if not theirs:
                return verdicts, None
            last = lines[theirs[-1]]
            same_question = [i for i in theirs if lines[i]["qid"] == last["qid"]]
            taken = set()
            for i in reversed(same_question):
                if not _same(lines[i], last):
                    break
                taken.add(i)
            kept = [line for i, line in enumerate(lines) if i not in taken]
            return self._write(kept), last["qid"]

    def remove_leftovers(self) -> list[Path]:
        """Remove the temporary files a killed writer left beside the file (write_atomically's),
        under the lock, so never a live writer's file in flight; the paths removed."""
        if not self.path.parent.is_dir():
            return []
        with self._locked():
            left = sorted(self.path.parent.glob(f".{self.path.name}.*.tmp"))
            for path in left:
                path.unlink(missing_ok=True)
        return left

    def discard(self, labeller: str, qids: Collection[str]) -> Verdicts:
        """Take the labeller's lines on these questions out of the file (a stale verdict's, whose
        question is no longer written: git keeps what it said)."""
        with self._locked() as verdicts:
            kept = [
                line
                for line in verdicts.lines
                if not (_given_by(line, labeller) and line["qid"] in qids)
            ]
            return self._write(kept) if len(kept) < len(verdicts.lines) else verdicts

    def _write(self, lines: list[str | dict]) -> Verdicts:
        text = render_lines(lines)
        write_atomically(self.path, text)
        return parse_verdicts(text, str(self.path))


def _given_by(line: str | dict, labeller: str) -> bool:
    return isinstance(line, dict) and labeller_of(line) == labeller


def _same(before: dict | None, row: dict) -> bool:
    return before is not None and all(before.get(name) == row.get(name) for name in CHANGES)


# what makes a verdict on a question new (a fix with other text is; the seconds it took are not)
CHANGES = ("verdict", "failed", "reason", "drawn", "fix")


@dataclass(frozen=True)
class Agreement:
    """Two labellers on the questions both judged: how often their verdicts (pass or fail)
    agree, Cohen's kappa (agreement beyond what their own pass shares give by chance; None when
    chance agreement is total), and the questions they split on."""

    labellers: tuple[str, str]
    n_questions: int
    agreed: int
    kappa: float | None
    split: list[tuple[dict, dict]]  # (the first's row, the second's) of each disagreement

    def line(self) -> str:
        kappa = "n/a" if self.kappa is None else f"{self.kappa:.2f}"
        return (
            f"{self.labellers[0]} and {self.labellers[1]} agree on {self.agreed} of the "
            f"{self.n_questions} questions both judged ({self.agreed / self.n_questions:.0%}), "
            f"Cohen's kappa {kappa}"
        )

    def as_dict(self) -> dict:
        return {
            "labellers": list(self.labellers),
            "questions": self.n_questions,
            "agreed": self.agreed,
            "share": round(self.agreed / self.n_questions, 4),
            "kappa": None if self.kappa is None else round(self.kappa, 4),
        }


def agreements(verdicts: Verdicts) -> list[Agreement]:
    """Each pair of labellers who judged a question in common."""
    from sklearn.metrics import cohen_kappa_score

    measured = []
    for first, second in itertools.combinations(verdicts.labellers(), 2):
        theirs = verdicts.of(first), verdicts.of(second)
        both = [qid for qid in theirs[0] if qid in theirs[1]]
        if not both:
            continue
        pairs = [(theirs[0][qid], theirs[1][qid]) for qid in both]
        passed = [[row["verdict"] == "pass" for row in pair] for pair in pairs]
        a, b = zip(*passed, strict=True)
        kappa = float(cohen_kappa_score(a, b)) if len(set(a) | set(b)) == 2 else None
        split = [pair for pair, (x, y) in zip(pairs, passed, strict=True) if x != y]
        measured.append(Agreement((first, second), len(both), len(both) - len(split), kappa, split))
    return measured
