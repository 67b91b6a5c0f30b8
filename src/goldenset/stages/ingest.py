"""ingest: documents, real and labelled queries under ingest.path -> data/documents.parquet,
queries, qrels, labelled questions and their evidence spans, and the query sets plugins make
(data/query_sets).

Exact and near-duplicate documents are dropped (the first in ingest order is kept) and listed
in data/duplicates.json; judgments on a dropped copy move to its kept twin.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import Field

from goldenset.core.files import write_json, write_parquet
from goldenset.core.params import ExampleQueriesParams, IngestParams, StageParams
from goldenset.core.paths import (
    DOCUMENTS,
    DUPLICATES,
    LABELLED,
    LABELLED_EVIDENCE,
    MADE_SETS,
    QRELS,
    QUERIES,
)
from goldenset.core.stage import run_stage
from goldenset.corpus.documents import documents_frame
from goldenset.corpus.duplicates import duplicate_rows, find_duplicates
from goldenset.corpus.ingest import ingest
from goldenset.corpus.querysets import make_query_sets
from goldenset.corpus.reference_sets import labelled_questions, real_queries

log = logging.getLogger("goldenset")


class IngestStage(StageParams):
    ingest: IngestParams = Field(default_factory=IngestParams)
    generate: ExampleQueriesParams = Field(default_factory=ExampleQueriesParams)


def main(params: IngestStage) -> None:
    settings = params.ingest
    Path(settings.cache_dir).mkdir(parents=True, exist_ok=True)  # a DVC output even when empty
    result = ingest(
        settings.path,
        settings.max_file_mb,
        progress=True,
        exclude=settings.exclude,
        max_pdf_mb=settings.max_pdf_mb,
        cache=Path(settings.cache_dir),
    )
    for line in [skip.line() for skip in result.skipped] + result.notes:
        log.info(line)
    documents = result.documents
    duplicates = find_duplicates(
        [d.doc_id for d in documents], [d.text for d in documents], settings.near_duplicates
    )
    for duplicate in duplicates:
        log.info(duplicate.line())
    dropped = {d.doc_id for d in duplicates}
    kept = [d for d in documents if d.doc_id not in dropped]
    # checked before anything is written: bad qrels leave the last outputs as they were
    folder = Path(settings.path)
    queries, qrels = real_queries(
        folder if settings.real_queries else None,
        params.generate.example_queries,
        {d.doc_id for d in kept},
        result,
        duplicates,
    )
    labelled = labelled_questions(folder if settings.labelled else None, kept, result, duplicates)
    table = documents_frame(kept)
    made = make_query_sets(table)
    write_parquet(table, DOCUMENTS)
    write_json(DUPLICATES, duplicate_rows(duplicates), indent=1)
    log.info(
        "ingest: %s%s -> %s",
        result.summary(),
        f"; dropped {len(duplicates):,} duplicates ({DUPLICATES})" if duplicates else "",
        DOCUMENTS,
    )
    write_parquet(queries, QUERIES)
    write_parquet(qrels, QRELS)
    write_parquet(labelled.table, LABELLED)
    write_parquet(labelled.evidence, LABELLED_EVIDENCE)
    for path, frame in made.tables.items():
        write_parquet(frame, path)
    write_json(MADE_SETS, made.counts)


if __name__ == "__main__":
    run_stage(main, IngestStage)
