"""score: every enabled retriever on every query set -> metrics, plots and per-question results."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pandas as pd

from goldenset.errors import GoldensetError
from goldenset.exports import beir_corpus, beir_qrels, beir_queries, trec_run
from goldenset.params import Params
from goldenset.querysets import check_qrels_documents, read_goldenset, read_real_queries
from goldenset.relevance import document_qrels, evidence_qrels, group_starts
from goldenset.reports import worst_misses
from goldenset.retrievers import Corpus, Dense, Queries, build_retrievers, rank_all, recall_loss
from goldenset.scoring import QuerySet, recall_plot_rows, score_ranked
from goldenset.tables import write_parquet
from goldenset.vectors import read_vectors

log = logging.getLogger("goldenset")
EMBEDDINGS = "data/embeddings"
EXPORT = Path("data/export")
WORST_MISSES = Path("reports/worst_misses.md")
PLOTTED = [
    f"{s}_{r}"
    for s in ("real", "synthetic")
    for r in ("dense", "bm25", "hybrid", "ann", "external")
]


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
    chunk_ids = chunks["chunk_id"].tolist()
    corpus = Corpus(
        chunk_ids, chunks["text"].tolist(), read_vectors(EMBEDDINGS, "chunks", chunk_ids)
    )
    retrievers = build_retrievers(params.retrievers, corpus)
    if not retrievers:
        raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
    ks, depth = params.score.ks, max(params.score.depth, max(params.score.ks))
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    results, runs = [], {}
    shutil.rmtree(EXPORT, ignore_errors=True)  # no run file of a retriever since disabled
    _write(WORST_MISSES, "# Worst misses\n\nNo golden-set question was scored.\n")
    for query_set, texts in query_sets(params, chunks):
        vector_name = "synthetic" if query_set.name == "synthetic" else "real"
        queries = Queries(query_set, texts, read_vectors(EMBEDDINGS, vector_name, query_set.qids))
        ranked = rank_all(retrievers, queries, depth)
        for retriever, found in ranked.items():
            values, rows = score_ranked(query_set, retriever, found, ks)
            if retriever == "ann":  # what the index misses against exact search
                exact = ranked.get("dense") or Dense(corpus).rank(queries, depth, {})
                values.update(recall_loss(found, exact, ks))
            metrics.setdefault(query_set.name, {})[retriever] = values
            results.append(rows)
            runs[f"{query_set.name}.{retriever}"] = trec_run(
                query_set.qids, query_set.item_ids, found, retriever
            )
            log.info("%s/%s: %s", query_set.name, retriever, _headline(values))
        if query_set.name == "synthetic":
            _write_golden_exports(queries, chunks)
            _write(WORST_MISSES, _worst_misses(params, query_set, ranked, corpus.texts))
    if not results:
        raise GoldensetError("retrievers: no enabled retriever ranked any query set")
    write_parquet(pd.concat(results, ignore_index=True), "data/results.parquet")
    for name, text in runs.items():
        _write(EXPORT / "runs" / f"{name}.trec", text)
    _write_json("metrics/scores.json", metrics)
    _write_json("plots/recall_at_k.json", recall_plot_rows(metrics, ks, PLOTTED))


def _write_golden_exports(queries: Queries, chunks: pd.DataFrame) -> None:
    """The golden set in BEIR format: the chunks as corpus, the questions, their judgments."""
    beir = EXPORT / "beir"
    query_set = queries.query_set
    _write(beir / "corpus.jsonl", beir_corpus(chunks))
    _write(beir / "queries.jsonl", beir_queries(query_set.qids, queries.texts))
    _write(
        beir / "qrels" / "test.tsv", beir_qrels(query_set.qids, query_set.qrels, query_set.item_ids)
    )


def _worst_misses(params: Params, query_set: QuerySet, ranked: dict, texts: list[str]) -> str:
    settings = params.score
    return worst_misses(
        read_goldenset("data/goldenset.jsonl"),
        query_set,
        ranked,
        texts,
        settings.worst_misses,
        settings.worst_misses_chunks,
        settings.worst_misses_chars,
    )


def _headline(values: dict[str, float]) -> str:
    shown = ["recall@10", "mrr", "ndcg@10", "recall_loss@10", "n_queries"]
    return ", ".join(f"{name} {values[name]:.4g}" for name in shown if name in values)


def _write_json(path: str, payload: object) -> None:
    _write(Path(path), json.dumps(payload, indent=2, sort_keys=False) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    from goldenset.stage import run_stage

    run_stage(main)
