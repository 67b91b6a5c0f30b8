"""ingest: documents, real and labelled queries under ingest.path -> data/documents.parquet,
queries, qrels, labelled questions and their evidence spans.

Exact and near-duplicate documents are dropped (the first in ingest order is kept) and listed
in data/duplicates.json; judgments on a dropped copy move to its kept twin.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
from pydantic import Field

from goldenset.core.files import write_json, write_parquet
from goldenset.core.params import ExampleQueriesParams, IngestParams, StageParams
from goldenset.core.paths import (
    DOCUMENTS,
    DUPLICATES,
    LABELLED,
    LABELLED_EVIDENCE,
    QRELS,
    QUERIES,
)
from goldenset.core.stage import run_stage
from goldenset.corpus.documents import Document, IngestResult, documents_frame
from goldenset.corpus.duplicates import Duplicate, find_duplicates
from goldenset.corpus.ingest import ingest
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


class IngestStage(StageParams):
    ingest: IngestParams = Field(default_factory=IngestParams)
    generate: ExampleQueriesParams = Field(default_factory=ExampleQueriesParams)


def main(params: IngestStage) -> None:
    settings = params.ingest
    result = ingest(settings.path, settings.max_file_mb, progress=True, exclude=settings.exclude)
    for skip in result.skipped:
        log.info(skip.line())
    documents = result.documents
    duplicates = find_duplicates(
        [d.doc_id for d in documents], [d.text for d in documents], settings.near_duplicates
    )
    for duplicate in duplicates:
        log.info(duplicate.line())
    dropped = {d.doc_id for d in duplicates}
    kept = [d for d in documents if d.doc_id not in dropped]
    # checked before anything is written: bad qrels leave the last outputs as they were
    queries, qrels = _real_queries(params, {d.doc_id for d in kept}, result, duplicates)
    labelled = _labelled(params, kept, result, duplicates)
    write_parquet(documents_frame(kept), DOCUMENTS)
    _write_duplicates(duplicates)
    log.info(
        "ingest: %s%s -> %s",
        result.summary(),
        f"; dropped {len(duplicates):,} duplicates ({DUPLICATES})" if duplicates else "",
        DOCUMENTS,
    )
    write_parquet(queries, QUERIES)
    write_parquet(qrels, QRELS)
    write_parquet(labelled.questions, LABELLED)
    write_parquet(labelled.evidence, LABELLED_EVIDENCE)


def _real_queries(
    params: IngestStage, doc_ids: set[str], result: IngestResult, duplicates: list[Duplicate]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries and judgments against the kept documents; empty tables when there are none."""
    folder = Path(params.ingest.path)
    real = read_real_queries(folder) if params.ingest.real_queries and folder.is_dir() else None
    if real is None:
        log.info(NO_REAL_QUERIES)
        return pd.DataFrame({"qid": [], "text": []}, dtype=str)[QUERY_COLUMNS], _empty_qrels()
    queries, qrels = shown_apart(*real, read_example_queries(params.generate.example_queries))
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


def _labelled(
    params: IngestStage, kept: list[Document], result: IngestResult, duplicates: list[Duplicate]
) -> LabelledResult:
    """labelled.jsonl and SQuAD questions located in the kept documents; empty when none."""
    empty = LabelledResult(pd.DataFrame(columns=LABELLED_COLUMNS, dtype=str), evidence_frame())
    if not params.ingest.labelled:
        log.info("no labelled questions (ingest.labelled: false)")
        return empty
    labelled_file = Path(params.ingest.path) / LABELLED_FILE
    questions = list(result.squad_questions)
    sources = ["SQuAD files"] if questions else []
    if labelled_file.is_file():
        questions = read_labelled_file(labelled_file) + questions
        sources.insert(0, LABELLED_FILE)
    if not questions:
        log.info("no labelled questions (%s or SQuAD files in ingest.path)", LABELLED_FILE)
        return empty
    twins = {d.doc_id: d.kept for d in duplicates}
    labelled = locate_questions(questions, {d.doc_id: d.text for d in kept}, twins)
    labelled.unanswerable = result.squad_unanswerable
    for line in labelled.not_found:
        log.info(line)
    log.info(labelled.summary(" and ".join(sources)))
    return labelled


def _empty_qrels() -> pd.DataFrame:
    return pd.DataFrame({"qid": [], "doc_id": [], "grade": [], "absent": []}).astype(
        {"qid": str, "doc_id": str, "grade": float, "absent": str}
    )[QRELS_COLUMNS]


def _write_duplicates(duplicates: list[Duplicate]) -> None:
    rows = [
        {"doc_id": d.doc_id, "kept": d.kept, "kind": d.kind, "similarity": d.similarity}
        for d in duplicates
    ]
    write_json(DUPLICATES, rows, indent=1)


if __name__ == "__main__":
    run_stage(main, IngestStage)
