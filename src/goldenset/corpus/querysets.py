"""The query sets, declared once: the questions a retriever is scored on, and how each is judged.

One :class:`QuerySetEntry` per set in the registry :data:`QUERY_SETS` (goldenset.core.registry):
its name (the first key of its metrics and the name of its vectors under data/embeddings), its
files, the column of its question texts, and how it is judged: by evidence spans (its items are
chunks) or by document qrels (its items are documents). The embed stage embeds every set, the
score stage scores every set that has questions, the audit measures every reference set's echo,
and `goldenset compare` reads every set's texts: each from this registry, through
:func:`read_query_sets`, so that a set's files are read in one place.

The built-in sets are written by the stages that make them (ingest: real and labelled queries;
generate: the golden set). A new set is one module (here, or a plugin's: a
``goldenset.query_sets`` entry point) that registers an entry made by :func:`made_by_ingest`:
its function makes the set from the documents, and the ingest stage writes it under
data/query_sets/, a folder the later stages already depend on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from goldenset.core import paths
from goldenset.core.files import read_jsonl, read_parquet_bytes
from goldenset.core.registry import Registry
from goldenset.corpus.queries import (
    GOLDENSET_COLUMNS,
    NO_REAL_QUERIES,
    golden_evidence,
)

BY_SPANS, BY_DOCUMENTS = "spans", "documents"
JudgedBy = Literal["spans", "documents"]
# a file's bytes by its path (goldenset.core.paths); None when it is absent
Reader = Callable[[Path], bytes | None]
# (the documents: doc_id, text) -> (questions: qid and the text column; judgments: for spans
# EVIDENCE_COLUMNS, for documents QRELS_COLUMNS)
Make = Callable[[pd.DataFrame], tuple[pd.DataFrame, pd.DataFrame]]


@dataclass(frozen=True)
class QuerySetEntry:
    name: str  # the first key of its metrics, its result rows and its vectors' file names
    questions_file: Path  # qid and text_column: a .parquet table, or golden-set rows (.jsonl)
    text_column: str
    judged_by: JudgedBy  # spans: items are chunks; documents: items are documents
    # spans: an evidence table (EVIDENCE_COLUMNS); documents: qrels (QRELS_COLUMNS); None: the
    # evidence is in the questions file (golden-set rows: doc_id, evidence_start, evidence_end)
    judgments: Path | None = None
    golden: bool = False  # the generated set: exported as BEIR, its worst misses reported
    # the audit: its echo's key in metrics/audit.json and plots/echo.json (None: the golden set,
    # which the audit measures itself); the first reference with questions is the echo's yardstick
    echo_label: str | None = None
    absent_note: str | None = None  # logged by score when the set has no questions
    make: Make | None = None  # a set the ingest stage makes from the documents and writes

    @property
    def files(self) -> tuple[Path, ...]:
        return tuple(path for path in (self.questions_file, self.judgments) if path is not None)


def made_by_ingest(
    name: str, make: Make, judged_by: JudgedBy, text_column: str = "text", **options: object
) -> QuerySetEntry:
    """A set the ingest stage makes with ``make`` and writes under data/query_sets/ (its
    questions <name>.parquet, its judgments <name>.judgments.parquet)."""
    questions_file = paths.QUERY_SETS / f"{name}.parquet"
    judgments = paths.QUERY_SETS / f"{name}.judgments.parquet"
    return QuerySetEntry(
        name, questions_file, text_column, judged_by, judgments, make=make, **options
    )


# The built-in sets, then plugins' (goldenset.query_sets entry points), in registration order:
# sets are scored, and listed, in this order.
QUERY_SETS: Registry[QuerySetEntry] = Registry(
    "query set", "query_sets", ["goldenset.corpus.querysets"]
)
QUERY_SETS.register(  # the golden set as people left it (the apply stage)
    "synthetic", QuerySetEntry("synthetic", paths.APPLIED, "question", BY_SPANS, golden=True)
)
QUERY_SETS.register(
    "labelled",
    QuerySetEntry(
        "labelled",
        paths.LABELLED,
        "text",
        BY_SPANS,
        paths.LABELLED_EVIDENCE,
        echo_label="labelled_queries",
    ),
)
QUERY_SETS.register(
    "real",
    QuerySetEntry(
        "real",
        paths.QUERIES,
        "text",
        BY_DOCUMENTS,
        paths.QRELS,
        echo_label="real_queries",
        absent_note=NO_REAL_QUERIES,
    ),
)


def document_judged() -> set[str]:
    """The sets whose items are documents (every other set ranks chunks)."""
    return {name for name, entry in QUERY_SETS.items() if entry.judged_by == BY_DOCUMENTS}


def references() -> list[QuerySetEntry]:
    """The sets the audit measures the golden set's echo against, real queries first (what
    users type; labelled questions stand in where there are none)."""
    declared = [entry for entry in QUERY_SETS.values() if entry.echo_label is not None]
    return sorted(declared, key=lambda entry: entry.judged_by != BY_DOCUMENTS)


def ingest_made() -> list[QuerySetEntry]:
    """The sets the ingest stage makes (plugins' and tests' toys: the built-in sets have their
    own stages)."""
    return [entry for entry in QUERY_SETS.values() if entry.make is not None]


@dataclass(frozen=True)
class QuerySet:
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
        if self.entry.judged_by == BY_DOCUMENTS:
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


def read_query_set(entry: QuerySetEntry, read: Reader, judgments: bool = True) -> QuerySet:
    """One query set through ``read`` (a project's files, or a git revision's); judgments
    False reads its questions alone (the embed stage depends on no judgment file)."""
    if entry.judgments is None:  # absent or empty: no questions (read_goldenset)
        data = read(entry.questions_file)
        if data is None and entry.golden:  # a revision from before the apply stage
            data = read(paths.GOLDENSET)
        return golden_query_set(entry, _jsonl(data or b""))
    table = _parquet(read, entry.questions_file)
    judged = _parquet(read, entry.judgments) if judgments and len(table) else pd.DataFrame()
    qids = table["qid"].astype(str).tolist()
    return QuerySet(entry, table, qids, table[entry.text_column].tolist(), judged)


def golden_query_set(entry: QuerySetEntry, table: pd.DataFrame) -> QuerySet:
    """A set whose questions file holds its evidence (golden-set rows) as a QuerySet."""
    qids = table["qid"].astype(str).tolist()
    return QuerySet(entry, table, qids, table[entry.text_column].tolist(), golden_evidence(table))


def read_query_sets(
    root: Path = Path("."),
    read: Reader | None = None,
    names: Collection[str] | None = None,
    judgments: bool = True,
) -> dict[str, QuerySet]:
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


@dataclass(frozen=True)
class MadeSets:
    """The query sets the ingest stage makes: each file's table, and each set's question count."""

    tables: dict[Path, pd.DataFrame]
    counts: dict[str, int]


def make_query_sets(documents: pd.DataFrame) -> MadeSets:
    """Every registered set that is made from the documents (doc_id, text), made."""
    tables: dict[Path, pd.DataFrame] = {}
    counts: dict[str, int] = {}
    for entry in ingest_made():
        assert entry.make is not None and entry.judgments is not None
        table, judgments = entry.make(documents)
        tables[entry.questions_file], tables[entry.judgments] = table, judgments
        counts[entry.name] = len(table)
    return MadeSets(tables, counts)
