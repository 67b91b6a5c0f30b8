"""embed: chunks, golden-set questions, labelled questions and real queries -> vectors, through
the embedding cache."""

from __future__ import annotations

import logging

import pandas as pd

from goldenset.core.params import Params
from goldenset.core.paths import CHUNKS, EMBEDDINGS, GOLDENSET, LABELLED, QUERIES
from goldenset.core.stage import run_stage
from goldenset.core.vectors import write_vectors
from goldenset.corpus.queries import read_goldenset
from goldenset.embedding.cache import EmbeddingCache
from goldenset.embedding.encoder import cached_embedder

log = logging.getLogger("goldenset")


def main(params: Params) -> None:
    chunks = pd.read_parquet(CHUNKS, columns=["chunk_id", "text"])
    golden = read_goldenset(GOLDENSET)
    real_queries = pd.read_parquet(QUERIES, columns=["qid", "text"])
    labelled = pd.read_parquet(LABELLED, columns=["qid", "text"])

    settings = params.embed
    cache = EmbeddingCache(settings.cache_dir)
    cached_before = len(cache)
    encode_missing = None
    if settings.engine == "ray":
        from goldenset.embedding.ray import ray_encoder

        encode_missing = ray_encoder(settings)
    embed = cached_embedder(settings, cache, encode_missing)

    sets = [
        ("chunks", chunks["chunk_id"], chunks["text"], settings.passage_prefix),
        ("synthetic", golden["qid"], golden["question"], settings.query_prefix),
        ("labelled", labelled["qid"], labelled["text"], settings.query_prefix),
        ("real", real_queries["qid"], real_queries["text"], settings.query_prefix),
    ]
    for name, ids, texts, prefix in sets:
        write_vectors(
            EMBEDDINGS, name, ids.astype(str).tolist(), embed(texts.tolist(), prefix, name)
        )
    log.info(
        "embed: %d chunks, %d generated questions, %d labelled questions, %d real queries; "
        "%d vectors encoded, %d cached",
        len(chunks),
        len(golden),
        len(labelled),
        len(real_queries),
        len(cache) - cached_before,
        cached_before,
    )


if __name__ == "__main__":
    run_stage(main)
