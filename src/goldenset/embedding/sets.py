"""The chunks and the questions of every query set as vectors, through the embedding cache: what
the embed stage writes to data/embeddings and `goldenset calibrate` embeds for each model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from goldenset.core.params import EmbedParams
from goldenset.core.vectors import CHUNK_VECTORS
from goldenset.embedding.cache import EmbeddingCache
from goldenset.embedding.encoder import cached_embedder

if TYPE_CHECKING:
    from goldenset.corpus.querysets import QuerySet


@dataclass(frozen=True)
class Embedded:
    """Vectors by name (chunks, then each query set), each with the ids of its rows."""

    ids: dict[str, list[str]]
    vectors: dict[str, np.ndarray]
    encoded: int  # vectors the cache lacked
    cached: int  # vectors the cache held before


def embed_sets(
    settings: EmbedParams,
    chunks: pd.DataFrame,
    query_sets: Mapping[str, QuerySet],
    read_also: Sequence[str | Path] = (),
) -> Embedded:
    """The chunks (chunk_id, text) and every query set's questions, embedded with settings'
    model through its cache (embed.cache_dir, and the caches `read_also` names, read only); the
    ray engine encodes what the caches lack."""
    cache = EmbeddingCache(settings.cache_dir, read_also)
    cached_before = len(cache)
    encode_missing = None
    if settings.engine == "ray":
        from goldenset.embedding.ray import ray_encoder

        encode_missing = ray_encoder(settings)
    embed = cached_embedder(settings, cache, encode_missing)
    texts = {CHUNK_VECTORS: (chunks["chunk_id"].astype(str).tolist(), chunks["text"].tolist())}
    texts.update(
        {name: (questions.qids, questions.texts) for name, questions in query_sets.items()}
    )
    ids, vectors = {}, {}
    for name, (row_ids, row_texts) in texts.items():
        prefix = settings.passage_prefix if name == CHUNK_VECTORS else settings.query_prefix
        ids[name], vectors[name] = row_ids, embed(row_texts, prefix, name)
    return Embedded(ids, vectors, len(cache) - cached_before, cached_before)
