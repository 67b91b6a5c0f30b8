"""score: every enabled retriever on every query set -> metrics, plots and per-question results."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
from scipy.sparse import csr_array

from goldenset.errors import GoldensetError
from goldenset.metric_files import headline_intervals, split_metrics
from goldenset.params import Params
from goldenset.querysets import NO_REAL_QUERIES, absent_summary, read_goldenset
from goldenset.relevance import (
    TextClasses,
    chunk_qrels_from_documents,
    collapse_items,
    document_qrels,
    evidence_qrels,
    group_starts,
    text_classes,
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
    classes = text_classes(chunks["text"])
    golden = read_goldenset("data/goldenset.jsonl")
    if len(golden):
        qrels = evidence_qrels(golden, chunks, params.score.min_overlap)
        synthetic = chunk_set("synthetic", golden["qid"].tolist(), qrels, chunks, classes)
        sets.append((synthetic, golden["question"].tolist()))
    queries = pd.read_parquet("data/queries.parquet")
    judgments = pd.read_parquet("data/qrels.parquet")
    if len(queries):
        warning = absent_summary(judgments)
        if warning:
            log.warning(warning)
        starts = group_starts(chunks["doc_id"])
        doc_order = chunks["doc_id"].iloc[starts].tolist()
        by_doc = document_qrels(queries["qid"], judgments, doc_order)
        qids, texts = queries["qid"].tolist(), queries["text"].tolist()
        sets.append((QuerySet("real", qids, by_doc, doc_order, starts), texts))
        by_chunk = chunk_qrels_from_documents(by_doc, starts, len(chunks))
        sets.append((chunk_set("real_chunks", qids, by_chunk, chunks, classes), texts))
    else:
        log.info(NO_REAL_QUERIES)
    if not sets:
        raise GoldensetError(
            "score: nothing to score: the golden set is empty and there are no real queries "
            "(queries.jsonl + qrels.tsv in ingest.path); set generate.max_questions above 0"
        )
    return sets


def chunk_set(
    name: str, qids: list[str], qrels: csr_array, chunks: pd.DataFrame, classes: TextClasses | None
) -> QuerySet:
    """Chunks ranked as items, chunks of equal text as one item (the first one's id)."""
    chunk_ids = chunks["chunk_id"].tolist()
    if classes is None:
        return QuerySet(name, qids, qrels, chunk_ids)
    collapsed = collapse_items(qrels, classes.of_chunk, len(classes.starts))
    item_ids = [chunk_ids[row] for row in classes.first]
    return QuerySet(name, qids, collapsed, item_ids, classes.starts, classes.order)


def main(params: Params) -> None:
    chunks = pd.read_parquet(
        "data/chunks.parquet", columns=["chunk_id", "doc_id", "start", "end", "text"]
    )
    chunk_vectors = read_vectors(EMBEDDINGS, "chunks", chunks["chunk_id"].tolist())
    enabled = params.retrievers
    sp = params.score
    device = resolve_device(params.score.device)
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    results = []
    for query_set, texts in query_sets(params, chunks):
        vector_name = "synthetic" if query_set.name == "synthetic" else "real"
        scored_rows = query_set.rows
        sources = {}
        if enabled.dense.enabled:
            vectors = read_vectors(EMBEDDINGS, vector_name, query_set.qids)
            items = chunk_vectors if scored_rows is None else chunk_vectors[scored_rows]
            sources["dense"] = DenseScores(vectors, items, device)
        if enabled.bm25.enabled:
            bm25 = enabled.bm25
            item_texts = chunks["text"]
            if scored_rows is not None:
                item_texts = item_texts.iloc[scored_rows]
            sources["bm25"] = BM25Scores(item_texts.tolist(), texts, k1=bm25.k1, b=bm25.b)
        for retriever, source in sources.items():
            values, rows = score(query_set, retriever, source, sp.ks, sp.depth, sp.headline)
            metrics.setdefault(query_set.name, {})[retriever] = values
            results.append(rows)
            log.info("%s/%s: %s", query_set.name, retriever, _headline(values))
    if not results:
        raise GoldensetError(
            "retrievers: every retriever is disabled; enable retrievers.dense or retrievers.bm25"
        )
    results = pd.concat(results, ignore_index=True)
    write_parquet(results, "data/results.parquet")
    headline, detail = split_metrics(metrics, sp.headline)
    _write_json("metrics/scores.json", headline)
    _write_json("metrics/detail.json", detail)
    _write_json("metrics/intervals.json", headline_intervals(results, sp.headline, sp.intervals))
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
