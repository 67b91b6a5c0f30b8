"""Does the golden set rank configurations the way real queries do?

Given a project folder that holds data/documents.parquet, data/goldenset.jsonl and real queries
(data/queries.parquet, written by ingest), this scores every retriever (dense, bm25, hybrid,
ann) under several chunkings and one truncated embedding, in one process, with the library's
own functions (chunking, embedding through the project's embedding cache, retrievers, metrics).
It prints synthetic and real nDCG@10 per configuration with the number of questions behind each,
then Kendall's tau between the two rankings of the configurations: near 1, the golden set picks
what real queries pick; near 0 or below, it does not.

Golden-set questions are judged per chunk (evidence spans); real queries per document (a
document ranks by its best chunk), so neither judgment moves with the chunking by definition.

Run: PYTHONPATH=src python benchmarks/calibration.py PROJECT [--sizes 300 600] [--truncate 64]
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import pandas as pd
from scipy.stats import kendalltau

from goldenset.chunking import chunk_documents
from goldenset.embedding import cached_embedder
from goldenset.embedding_cache import EmbeddingCache
from goldenset.params import Params, RetrieversParams, load_params
from goldenset.querysets import read_goldenset
from goldenset.relevance import document_qrels, evidence_qrels, group_starts
from goldenset.retrievers import Corpus, Queries, build_retrievers, rank_all
from goldenset.scoring import QuerySet, score_ranked

RETRIEVERS = ["dense", "bm25", "hybrid", "ann"]
METRIC = "ndcg@10"


def chunkings(params: Params, sizes: list[int]) -> list[tuple[str, object]]:
    base = params.chunk
    found = [
        (f"{base.strategy} {size}", base.model_copy(update={"max_size": size})) for size in sizes
    ]
    return found + [("whole documents", base.model_copy(update={"strategy": "none"}))]


def calibrated_retrievers(settings: RetrieversParams) -> RetrieversParams:
    """The project's retriever settings, with dense, bm25, ann and hybrid (of dense and bm25) on."""

    def on(section, **changes):
        return section.model_copy(update={"enabled": True, **changes})

    return settings.model_copy(
        update={
            "dense": on(settings.dense),
            "bm25": on(settings.bm25),
            "ann": on(settings.ann),
            "external": settings.external.model_copy(update={"enabled": False}),
            "hybrid": on(settings.hybrid, fuse=["dense", "bm25"]),
        }
    )


def score_configuration(
    params: Params,
    chunks: pd.DataFrame,
    golden: pd.DataFrame,
    real: tuple[pd.DataFrame, pd.DataFrame],
    embed,
    retrievers_scored: list[str],
) -> dict[str, dict[str, tuple[float, int]]]:
    """{retriever: {"synthetic"|"real": (nDCG@10, questions)}} for one chunking and embedding."""
    settings = params.embed
    chunk_ids = chunks["chunk_id"].tolist()
    corpus = Corpus(
        chunk_ids, chunks["text"].tolist(), embed(chunks["text"].tolist(), settings.passage_prefix)
    )
    retrievers = build_retrievers(calibrated_retrievers(params.retrievers), corpus)
    queries, judgments = real
    starts = group_starts(chunks["doc_id"])
    doc_order = chunks["doc_id"].iloc[starts].tolist()
    sets = [
        Queries(
            QuerySet(
                "synthetic",
                golden["qid"].tolist(),
                evidence_qrels(golden, chunks, params.score.min_overlap),
                chunk_ids,
            ),
            golden["question"].tolist(),
            embed(golden["question"].tolist(), settings.query_prefix),
        ),
        Queries(
            QuerySet(
                "real",
                queries["qid"].tolist(),
                document_qrels(queries["qid"], judgments, doc_order),
                doc_order,
                starts,
            ),
            queries["text"].tolist(),
            embed(queries["text"].tolist(), settings.query_prefix),
        ),
    ]
    scores: dict[str, dict[str, tuple[float, int]]] = {}
    for query_set in sets:
        ranked = rank_all(retrievers, query_set, max(params.score.depth, 10))
        for name in retrievers_scored:
            if name in ranked:
                values, _ = score_ranked(query_set.query_set, name, ranked[name], [10], [])
                scores.setdefault(name, {})[query_set.query_set.name] = (
                    values[METRIC],
                    int(values["n_queries"]),
                )
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path, help="folder with params.yaml and data/")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[300, 600], help="chunk.max_size values"
    )
    parser.add_argument(
        "--truncate", type=int, default=64, help="embed.max_seq_length of the truncated run"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.chdir(args.project)  # params paths (real queries, caches) are relative to the project
    params = load_params("params.yaml")
    if params.chunk.strategy == "tokens":
        raise SystemExit("calibration chunks by characters: set chunk.strategy to sentences")
    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "text"])
    golden = read_goldenset("data/goldenset.jsonl")
    queries = pd.read_parquet("data/queries.parquet")
    real = (queries, pd.read_parquet("data/qrels.parquet"))
    if not len(queries) or not len(golden):
        raise SystemExit(
            "calibration needs data/goldenset.jsonl and real queries (data/queries.parquet: "
            "run `dvc repro` first)"
        )
    cache = EmbeddingCache(params.embed.cache_dir)
    full = cached_embedder(params.embed, cache)
    truncated_settings = params.embed.model_copy(update={"max_seq_length": args.truncate})
    runs = [
        (name, chunk, full, f"{params.embed.model.split('/')[-1]}")
        for name, chunk in chunkings(params, args.sizes)
    ]
    middle = chunkings(params, args.sizes)[len(args.sizes) // 2]
    runs.append(
        (
            middle[0],
            middle[1],
            cached_embedder(truncated_settings, cache),
            f"max_seq_length {args.truncate}",
        )
    )
    rows = []
    for chunk_name, chunk_params, embed, embedding_name in runs:
        started = time.perf_counter()
        chunks = chunk_documents(documents, chunk_params)
        # bm25 reads no embedding: the truncated run would only repeat its row
        scored = [r for r in RETRIEVERS if not (r == "bm25" and embed is not full)]
        scores = score_configuration(params, chunks, golden, real, embed, scored)
        for retriever, by_set in scores.items():
            rows.append(
                {
                    "configuration": f"{retriever} | {chunk_name} | {embedding_name}",
                    "synthetic": by_set["synthetic"][0],
                    "n_synthetic": by_set["synthetic"][1],
                    "real": by_set["real"][0],
                    "n_real": by_set["real"][1],
                }
            )
        print(
            f"scored {chunk_name} / {embedding_name} ({len(chunks)} chunks) "
            f"in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
    table = pd.DataFrame(rows).sort_values("real", ascending=False, kind="stable")
    print()
    print(f"{METRIC} per configuration (sorted by real):")
    print(table.to_string(index=False, float_format=lambda value: f"{value:.4f}"))
    tau = kendalltau(table["synthetic"], table["real"])
    print()
    print(
        f"Kendall tau, synthetic vs real ranking of {len(table)} configurations: "
        f"{tau.statistic:.3f} (p = {tau.pvalue:.3g})"
    )


if __name__ == "__main__":
    main()
