"""Documents chunked as the chunk params say, token windows counted with the embedding model's
own tokenizer: what the chunk stage writes and `goldenset calibrate` chunks for each chunking."""

from __future__ import annotations

import hashlib
from typing import Any

import pandas as pd

from goldenset.chunking.base import STRATEGIES
from goldenset.chunking.params import ChunkParams
from goldenset.chunking.strategies import chunk_document
from goldenset.core.errors import GoldensetError
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.params import EmbedParams

# data/chunks.parquet: each chunk's span, its text and the text's sha256
CHUNK_COLUMNS = ["chunk_id", "doc_id", "start", "end", "text", "sha256"]


def embedding_tokenizer(model: str, revision: str | None):
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


def chunk_corpus(documents: pd.DataFrame, chunk: ChunkParams, embed: EmbedParams) -> pd.DataFrame:
    """The chunks of documents (doc_id, text) by chunk; strategy tokens loads embed's tokenizer."""
    tokenizer = None
    if STRATEGIES[chunk.strategy].needs_tokenizer:
        tokenizer = embedding_tokenizer(embed.model, embed.revision)
    return chunk_documents(documents, chunk, tokenizer)


def chunk_documents(docs: pd.DataFrame, params: ChunkParams, tokenizer: Any = None) -> pd.DataFrame:
    """One row per chunk: chunk_id "<doc_id>#<i>", doc_id, start, end, text, sha256.

    Documents keep their input order; a document's chunks are contiguous and in text order.
    """
    rows: dict[str, list] = {column: [] for column in CHUNK_COLUMNS}
    for doc_id, text in zip(docs["doc_id"], docs["text"], strict=True):
        for number, (start, end) in enumerate(chunk_document(text, params, tokenizer)):
            chunk_text = text[start:end]
            rows["chunk_id"].append(f"{doc_id}#{number}")
            rows["doc_id"].append(doc_id)
            rows["start"].append(start)
            rows["end"].append(end)
            rows["text"].append(chunk_text)
            rows["sha256"].append(hashlib.sha256(chunk_text.encode("utf-8")).hexdigest())
    frame = pd.DataFrame(rows, columns=CHUNK_COLUMNS)
    return frame.astype({"chunk_id": str, "doc_id": str, "start": "int64", "end": "int64"})
