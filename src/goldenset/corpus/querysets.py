"""The query sets, declared once: the questions a retriever is scored on, and how each is judged.

One :class:`QuerySetEntry` per set in :data:`QUERY_SETS`, the one place to add one (as
goldenset.scoring.measures' MEASURES is for metrics): its name (the first key of its metrics and
the name of its vectors under data/embeddings), its files (goldenset.core.paths), the column of
its question texts, and how it is judged: by evidence spans (its items are chunks) or by
document qrels (its items are documents). The embed stage embeds every set, the score stage
scores every set that has questions, the audit measures every reference set's echo, and
`goldenset compare` reads every set's texts: each from this table, through
:func:`read_query_sets`, so that a set's files are read in one place.

Adding a query set: the stage that makes its files writes them (its questions with ``qid`` and
the text column; for spans its evidence table, EVIDENCE_COLUMNS; for documents its qrels,
QRELS_COLUMNS), one entry here, and its files in dvc.yaml (outputs of that stage, dependencies
of embed, score and audit).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from goldenset.core import paths
from goldenset.core.files import read_jsonl, read_parquet_bytes
from goldenset.corpus.queries import (
    GOLDENSET_COLUMNS,
    NO_REAL_QUERIES,
    golden_evidence,
)

SPANS, DOCUMENTS = "spans", "documents"
Judged = Literal["spans", "documents"]
# a file's bytes by its path (goldenset.core.paths); None when it is absent
Reader = Callable[[Path], bytes | None]


@dataclass(frozen=True)
class QuerySetEntry:
    name: str  # the first key of its metrics, its result rows and its vectors' file names
    questions: Path  # qid and text_column: a .parquet table, or goldenset.jsonl
    text_column: str
    judged: Judged  # spans: items are chunks; documents: items are documents
    # spans: an evidence table (EVIDENCE_COLUMNS); documents: qrels (QRELS_COLUMNS); None: the
    # evidence is in the questions file (goldenset.jsonl: doc_id, evidence_start, evidence_end)
    judgments: Path | None = None
    golden: bool = False  # the generated set: exported as BEIR, its worst misses reported
    # the audit: its echo's key in metrics/audit.json and plots/echo.json (None: the golden set,
    # which the audit measures itself); the first reference with questions is the echo's yardstick
    echo_label: str | None = None
    absent_note: str | None = None  # logged by score when the set has no questions

    @property
    def files(self) -> tuple[Path, ...]:
        return tuple(path for path in (self.questions, self.judgments) if path is not None)


QUERY_SETS: dict[str, QuerySetEntry] = {}


def declare(entry: QuerySetEntry) -> None:
    """Add a query set (a test's toy, a plugin): scored after those declared before it."""
    QUERY_SETS[entry.name] = entry


declare(QuerySetEntry("synthetic", paths.GOLDENSET, "question", SPANS, golden=True))
declare(
    QuerySetEntry(
        "labelled",
        paths.LABELLED,
        "text",
        SPANS,
        paths.LABELLED_EVIDENCE,
        echo_label="labelled_queries",
    )
)
declare(
    QuerySetEntry(
        "real",
        paths.QUERIES,
        "text",
        DOCUMENTS,
        paths.QRELS,
        echo_label="real_queries",
        absent_note=NO_REAL_QUERIES,
    )
)


def document_judged() -> set[str]:
    """The sets whose items are documents (every other set ranks chunks)."""
    return {name for name, entry in QUERY_SETS.items() if entry.judged == DOCUMENTS}


def references() -> list[QuerySetEntry]:
    """The sets the audit measures the golden set's echo against, real queries first (what
    users type; labelled questions stand in where there are none)."""
    found = [entry for entry in QUERY_SETS.values() if entry.echo_label is not None]
    return sorted(found, key=lambda entry: entry.judged != DOCUMENTS)


@dataclass(frozen=True)
class QuestionSet:
    """A query set's questions as read: ids and texts in file order, and their judgments."""

    entry: QuerySetEntry
    table: pd.DataFrame  # the questions file as read (the golden set: every column)
    qids: list[str]
    texts: list[str]
    # spans: qid, doc_id, start, end; documents: qid, doc_id, grade, absent
    judgments: pd.DataFrame

    @property
    def name(self) -> str:
        return self.entry.name

    def __len__(self) -> int:
        return len(self.qids)

    def document_judgments(self) -> pd.DataFrame:
        """(qid, doc_id, grade): for spans, each document holding evidence is relevant."""
        if self.entry.judged == DOCUMENTS:
            return self.judgments
        pairs = self.judgments[["qid", "doc_id"]].drop_duplicates()
        return pairs.assign(grade=1)


def file_reader(root: Path) -> Reader:
    """The files under a project folder (Path(".") for the current one)."""

    def read(path: Path) -> bytes | None:
        try:
            return (root / path).read_bytes()
        except FileNotFoundError:
            return None

    return read


def read_query_set(entry: QuerySetEntry, read: Reader, judgments: bool = True) -> QuestionSet:
    """One query set through ``read`` (a project's files, or a git revision's); judgments
    False reads its questions alone (the embed stage depends on no judgment file)."""
    if entry.questions.suffix == ".jsonl":  # absent or empty: no questions (read_goldenset)
        table = _jsonl(read(entry.questions) or b"")
    else:
        table = _parquet(read, entry.questions)
    judged = pd.DataFrame()
    if entry.judgments is None:
        judged = golden_evidence(table)
    elif judgments and len(table):
        judged = _parquet(read, entry.judgments)
    qids = table["qid"].astype(str).tolist()
    return QuestionSet(entry, table, qids, table[entry.text_column].tolist(), judged)


def read_query_sets(
    root: Path = Path("."),
    read: Reader | None = None,
    names: Collection[str] | None = None,
    judgments: bool = True,
) -> dict[str, QuestionSet]:
    """Every declared query set of a project folder (or through ``read``; of ``names`` only),
    in declaration order; a set without questions is there, empty."""
    reader = read or file_reader(root)
    return {
        name: read_query_set(entry, reader, judgments)
        for name, entry in QUERY_SETS.items()
        if names is None or name in names
    }


def _parquet(read: Reader, path: Path) -> pd.DataFrame:
    data = read(path)
    if data is None:
        raise FileNotFoundError(f"{path} not found: run `dvc repro`")
    return read_parquet_bytes(data)


def _jsonl(data: bytes) -> pd.DataFrame:
    rows = read_jsonl(data)
    return pd.DataFrame(rows, columns=None if rows else GOLDENSET_COLUMNS)
