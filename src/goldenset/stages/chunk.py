"""chunk: data/documents.parquet -> data/chunks.parquet, chunks as character spans of documents,
each with its place: the pages it spans (PDF) or the heading it starts under (Word)."""

from __future__ import annotations

import logging

import pandas as pd
from pydantic import Field

from goldenset.chunking.configured import chunk_corpus
from goldenset.chunking.params import ChunkParams
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_parquet
from goldenset.core.params import EmbedParams, StageParams
from goldenset.core.paths import CHUNKS, DOCUMENTS
from goldenset.core.stage import run_stage
from goldenset.corpus.places import PLACE, chunk_places, places_by_document

log = logging.getLogger("goldenset")


class ChunkStage(StageParams):
    chunk: ChunkParams = Field(default_factory=ChunkParams)
    embed: EmbedParams = Field(default_factory=EmbedParams)


def main(params: ChunkStage) -> None:
    if not DOCUMENTS.exists():
        raise GoldensetError(f"{DOCUMENTS} not found: run the ingest stage first (dvc repro)")
    docs = pd.read_parquet(DOCUMENTS)
    settings = params.chunk
    chunks = chunk_corpus(docs[["doc_id", "text"]], settings, params.embed)
    places = places_by_document(docs["doc_id"], docs.get("places", [None] * len(docs)))
    chunks[PLACE] = chunk_places(places, chunks["doc_id"], chunks["start"], chunks["end"])
    write_parquet(chunks, CHUNKS)
    lengths = (chunks["end"] - chunks["start"]).tolist() or [0]
    log.info(
        "chunk: %s documents -> %s chunks (strategy %s, max_size %d, overlap %d), "
        "chars per chunk: mean %.0f, max %d -> %s",
        f"{len(docs):,}",
        f"{len(chunks):,}",
        settings.strategy,
        settings.max_size,
        settings.overlap,
        sum(lengths) / len(lengths),
        max(lengths),
        CHUNKS,
    )


if __name__ == "__main__":
    run_stage(main, ChunkStage)
