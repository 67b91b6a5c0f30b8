"""Documents chunked as the chunk params say, token windows counted with the embedding model's
own tokenizer: what the chunk stage writes and `goldenset calibrate` chunks for each chunking."""

from __future__ import annotations

import pandas as pd

from goldenset.chunking.params import ChunkParams
from goldenset.chunking.strategies import STRATEGIES, chunk_documents
from goldenset.core.errors import GoldensetError
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.params import EmbedParams


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
