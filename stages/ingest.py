"""ingest: a folder of documents or a BEIR corpus -> data/documents.parquet, one row per doc."""

from __future__ import annotations

import logging

from goldenset.ingest import documents_frame, ingest
from goldenset.params import Params
from goldenset.stage import run_stage
from goldenset.tables import write_parquet

log = logging.getLogger("goldenset")
OUT = "data/documents.parquet"


def main(params: Params) -> None:
    settings = params.ingest
    result = ingest(settings.path, settings.max_file_mb, progress=True)
    for skip in result.skipped:
        log.info(skip.line())
    write_parquet(documents_frame(result.documents), OUT)
    log.info("ingest: %s -> %s", result.summary(), OUT)


if __name__ == "__main__":
    run_stage(main)
