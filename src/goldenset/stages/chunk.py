"""chunk: data/documents.parquet -> data/chunks.parquet, chunks as character spans of documents."""

from __future__ import annotations

import logging

import pandas as pd

from goldenset.chunking.strategies import STRATEGIES, chunk_documents
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_parquet
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.params import Params
from goldenset.core.paths import CHUNKS, DOCUMENTS
from goldenset.core.stage import run_stage

log = logging.getLogger("goldenset")


def load_tokenizer(model: str, revision: str | None):
    """The embedding model's own tokenizer, so token windows match what the model will see."""
    from transformers import AutoTokenizer  # slow import, needed only by a strategy in tokens

    try:
        return AutoTokenizer.from_pretrained(resolve_model_path(model), revision=revision)
    except (OSError, ValueError) as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise GoldensetError(
            f"embed.model: cannot load the tokenizer of {model!r} for chunk.strategy tokens "
            f"({reason})"
        ) from None


def main(params: Params) -> None:
    if not DOCUMENTS.exists():
        raise GoldensetError(f"{DOCUMENTS} not found: run the ingest stage first (dvc repro)")
    docs = pd.read_parquet(DOCUMENTS, columns=["doc_id", "text"])
    settings = params.chunk
    tokenizer = None
    if STRATEGIES[settings.strategy].needs_tokenizer:
        tokenizer = load_tokenizer(params.embed.model, params.embed.revision)
    chunks = chunk_documents(docs, settings, tokenizer)
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
    run_stage(main)
