"""score: every enabled retriever on every query set -> metrics, plots and per-question results."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from goldenset.errors import GoldensetError
from goldenset.params import Params
from goldenset.querysets import check_qrels_documents, read_goldenset, read_real_queries
from goldenset.relevance import (
    chunk_qrels_from_documents,
    document_qrels,
    evidence_qrels,
    group_starts,
)
from goldenset.retrieval import BM25Scores, DenseScores, resolve_device
from goldenset.scoring import QuerySet, recall_plot_rows, score
from goldenset.tables import write_parquet
from goldenset.vectors import read_vectors

log = logging.getLogger("goldenset")
EMBEDDINGS = "data/embeddings"
PLOTTED = [f"{s}_{r}" for s in ("real", "synthetic") for r in ("dense", "bm25")]


def query_sets(params: Params, chunks: pd.DataFrame) -> list[tuple[QuerySet, list[str]]]:
    """Each query set with the texts of its queries; sets without queries are left out."""
    sets = []
    golden = read_goldenset("data/goldenset.jsonl")
    if len(golden):
        qrels = evidence_qrels(golden, chunks, params.score.min_overlap)
        synthetic = QuerySet(
            "synthetic", golden["qid"].tolist(), qrels, chunks["chunk_id"].tolist()
        )
        sets.append((synthetic, golden["question"].tolist()))
    real = read_real_queries(params.score.real_queries)
    if real is not None:
        queries, judgments = real
        check_qrels_documents(judgments, set(chunks["doc_id"]), params.score.real_queries)
        starts = group_starts(chunks["doc_id"])
        doc_order = chunks["doc_id"].iloc[starts].tolist()
        by_doc = document_qrels(queries["qid"], judgments, doc_order)
        qids, texts = queries["qid"].tolist(), queries["text"].tolist()
        sets.append((QuerySet("real", qids, by_doc, doc_order, starts), texts))
        by_chunk = chunk_qrels_from_documents(by_doc, starts, len(chunks))
        sets.append((QuerySet("real_chunks", qids, by_chunk, chunks["chunk_id"].tolist()), texts))
    if not sets:
        raise GoldensetError(
            "score: nothing to score: the golden set is empty and score.real_queries "
            f"({params.score.real_queries}) holds no queries.jsonl + qrels.tsv"
        )
    return sets


def main(params: Params) -> None:
    chunks = pd.read_parquet(
        "data/chunks.parquet", columns=["chunk_id", "doc_id", "start", "end", "text"]
    )
    chunk_vectors = read_vectors(EMBEDDINGS, "chunks", chunks["chunk_id"].tolist())
    enabled = params.retrievers
    device = resolve_device(params.score.device)
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    results = []
    for query_set, texts in query_sets(params, chunks):
        vector_name = "synthetic" if query_set.name == "synthetic" else "real"
        sources = {}
        if enabled.dense.enabled:
            vectors = read_vectors(EMBEDDINGS, vector_name, query_set.qids)
            sources["dense"] = DenseScores(vectors, chunk_vectors, device)
        if enabled.bm25.enabled:
            bm25 = enabled.bm25
            sources["bm25"] = BM25Scores(chunks["text"].tolist(), texts, k1=bm25.k1, b=bm25.b)
        for retriever, source in sources.items():
            values, rows = score(query_set, retriever, source, params.score.ks, params.score.depth)
            metrics.setdefault(query_set.name, {})[retriever] = values
            results.append(rows)
            log.info("%s/%s: %s", query_set.name, retriever, _headline(values))
    if not results:
        raise GoldensetError(
            "retrievers: every retriever is disabled; enable retrievers.dense or retrievers.bm25"
        )
    write_parquet(pd.concat(results, ignore_index=True), "data/results.parquet")
    _write_json("metrics/scores.json", metrics)
    _write_json("plots/recall_at_k.json", recall_plot_rows(metrics, params.score.ks, PLOTTED))


def _headline(values: dict[str, float]) -> str:
    shown = ["recall@10", "mrr", "ndcg@10", "n_queries"]
    return ", ".join(f"{name} {values[name]:.4g}" for name in shown if name in values)


def _write_json(path: str, payload: object) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    from goldenset.stage import run_stage

    run_stage(main)
