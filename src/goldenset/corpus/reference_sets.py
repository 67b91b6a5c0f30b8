"""The reference query sets ingest finds beside the documents: real queries (a BEIR queries.jsonl
and qrels.tsv) and labelled questions (labelled.jsonl, SQuAD files), each judged against the
documents kept after duplicates are dropped; empty tables where there are none."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from goldenset.core.params import ExampleQueries
from goldenset.corpus.documents import Document, IngestResult
from goldenset.corpus.duplicates import Duplicate
from goldenset.corpus.labelled import LabelledResult, locate_questions, read_labelled_file
from goldenset.corpus.queries import (
    LABELLED_COLUMNS,
    LABELLED_FILE,
    NO_REAL_QUERIES,
    QRELS_COLUMNS,
    QUERY_COLUMNS,
    evidence_frame,
    find_qrels,
    judged_documents,
    read_example_queries,
    read_real_queries,
)

log = logging.getLogger("goldenset")


def real_queries(
    folder: Path | None,
    examples: ExampleQueries,
    doc_ids: set[str],
    result: IngestResult,
    duplicates: list[Duplicate],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries and judgments in ``folder`` (None: ingest.real_queries is off) against the kept
    documents, less the example queries the writer is shown (generate.example_queries); empty
    tables when there are none."""
    real = read_real_queries(folder) if folder is not None and folder.is_dir() else None
    if real is None:
        log.info(NO_REAL_QUERIES)
        return no_real_queries()
    queries, qrels = shown_apart(*real, read_example_queries(examples))
    skipped = {s.doc_id: s.reason for s in result.skipped if s.doc_id is not None}
    twins = {d.doc_id: d.kept for d in duplicates}
    judged = judged_documents(qrels, doc_ids, skipped, twins, str(find_qrels(folder)))
    log.info("real queries: %d queries, %d judgments from %s", len(queries), len(judged), folder)
    return queries, judged


def shown_apart(
    queries: pd.DataFrame, qrels: pd.DataFrame, examples: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The real queries without those that generate shows the writer as style examples: a
    reference that steered the golden set's wording would judge the golden set on its own
    examples."""
    shown = queries["text"].isin(set(examples))
    if shown.any():
        log.info(
            "real queries: %d left out of the reference, shown to the writer as style examples "
            "(generate.example_queries)",
            int(shown.sum()),
        )
    kept = queries[~shown].reset_index(drop=True)
    return kept, qrels[qrels["qid"].isin(set(kept["qid"]))].reset_index(drop=True)


def no_labelled_questions() -> LabelledResult:
    return LabelledResult(pd.DataFrame(columns=LABELLED_COLUMNS, dtype=str), evidence_frame())


def labelled_questions(
    folder: Path | None, kept: list[Document], result: IngestResult, duplicates: list[Duplicate]
) -> LabelledResult:
    """labelled.jsonl and SQuAD questions located in the kept documents (folder None:
    ingest.labelled is off); empty when none."""
    empty = no_labelled_questions()
    if folder is None:
        log.info("no labelled questions (ingest.labelled: false)")
        return empty
    labelled_file = folder / LABELLED_FILE
    parsed = list(result.squad_questions)
    sources = ["SQuAD files"] if parsed else []
    if labelled_file.is_file():
        parsed = read_labelled_file(labelled_file) + parsed
        sources.insert(0, LABELLED_FILE)
    if not parsed:
        log.info("no labelled questions (%s or SQuAD files in ingest.path)", LABELLED_FILE)
        return empty
    twins = {d.doc_id: d.kept for d in duplicates}
    labelled = locate_questions(parsed, {d.doc_id: d.text for d in kept}, twins)
    labelled.unanswerable = result.squad_unanswerable
    for line in labelled.not_found:
        log.info(line)
    log.info(labelled.summary(" and ".join(sources)))
    return labelled


def no_real_queries() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The empty queries and qrels tables."""
    queries = pd.DataFrame({"qid": [], "text": []}, dtype=str)[QUERY_COLUMNS]
    qrels = pd.DataFrame({"qid": [], "doc_id": [], "grade": [], "absent": []}).astype(
        {"qid": str, "doc_id": str, "grade": float, "absent": str}
    )[QRELS_COLUMNS]
    return queries, qrels
