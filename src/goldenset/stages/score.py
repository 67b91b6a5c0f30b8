"""score: every enabled retriever on every query set -> metrics, plots, per-question results,
exports (BEIR, TREC runs) and the worst-misses report."""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.errors import GoldensetError
from goldenset.exports import beir_corpus, beir_qrels, beir_queries, trec_run
from goldenset.metric_files import headline_intervals, split_metrics
from goldenset.params import Params
from goldenset.querysets import NO_REAL_QUERIES, absent_summary, golden_evidence, read_goldenset
from goldenset.relevance import (
    TextClasses,
    collapse_items,
    document_qrels,
    evidence_qrels,
    group_starts,
    text_classes,
)
from goldenset.reports import worst_misses
from goldenset.retrieval import resolve_device
from goldenset.retrievers import (
    Corpus,
    Dense,
    ExternalRunFile,
    Queries,
    build_retrievers,
    rank_all,
    recall_loss,
)
from goldenset.scoring import (
    DOCUMENTS,
    ITEMS,
    QuerySet,
    chance_means,
    recall_plot_rows,
    score_ranked,
)
from goldenset.tables import write_parquet
from goldenset.tokens import load_tokenizer, token_starts
from goldenset.vectors import read_vectors
from goldenset.views import (
    ItemChunks,
    Views,
    chunk_layout,
    document_judged_views,
    span_views,
)

log = logging.getLogger("goldenset")
EMBEDDINGS = "data/embeddings"
EXPORT = Path("data/export")
WORST_MISSES = Path("reports/worst_misses.md")


@dataclass(frozen=True)
class Prepared:
    """A query set to score, with its query texts and its chunk-size-fair views."""

    query_set: QuerySet
    texts: list[str]
    views: Views
    # a set whose items are documents is ranked a second time over chunks for its contexts
    chunk_items: QuerySet | None = None


def query_sets(params: Params, chunks: pd.DataFrame) -> list[Prepared]:
    """Each query set with the texts of its queries; sets without queries are left out."""
    sets = []
    budgets = params.score.budgets
    layout = chunk_layout(chunks, _token_starts(params.score.tokenizer, chunks["doc_id"]))
    classes = text_classes(chunks["text"])
    items = (
        ItemChunks.of(len(chunks), None, None)
        if classes is None
        else ItemChunks.of(len(chunks), classes.starts, classes.order)
    )
    for name, qids, texts, evidence in span_sets():
        qrels = evidence_qrels(qids, evidence, chunks, params.score.min_overlap)
        views = span_views(qids, evidence, layout, items, budgets)
        sets.append(Prepared(chunk_set(name, qids, qrels, chunks, classes), texts, views))
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
        real = QuerySet("real", qids, by_doc, doc_order, starts)
        by_chunk = by_doc[:, layout.chunk_doc] if len(chunks) else by_doc[:, :0]
        chunk_items = chunk_set("real", qids, csr_array(by_chunk), chunks, classes)
        views = document_judged_views(by_doc, layout, items, budgets)
        sets.append(Prepared(real, texts, views, chunk_items))
    else:
        log.info(NO_REAL_QUERIES)
    if not sets:
        raise GoldensetError(
            "score: nothing to score: the golden set is empty and there are no labelled "
            "questions (labelled.jsonl or SQuAD files) nor real queries (queries.jsonl + "
            "qrels.tsv) in ingest.path; set generate.max_questions above 0"
        )
    return sets


def span_sets() -> list[tuple[str, list[str], list[str], pd.DataFrame]]:
    """The span-judged query sets that have questions: (name, qids, texts, evidence table)."""
    sets = []
    golden = read_goldenset("data/goldenset.jsonl")
    if len(golden):
        qids, texts = golden["qid"].astype(str).tolist(), golden["question"].tolist()
        sets.append(("synthetic", qids, texts, golden_evidence(golden)))
    labelled = pd.read_parquet("data/labelled.parquet")
    if len(labelled):
        evidence = pd.read_parquet("data/labelled_evidence.parquet")
        sets.append(("labelled", labelled["qid"].tolist(), labelled["text"].tolist(), evidence))
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


def corpus_for(corpus: Corpus, query_set: QuerySet) -> Corpus:
    """The chunks in the order the query set's items group them (equal texts side by side)."""
    rows = query_set.rows
    if rows is None:
        return corpus
    return Corpus(
        [corpus.chunk_ids[row] for row in rows],
        [corpus.texts[row] for row in rows],
        corpus.vectors[rows],
    )


def _token_starts(tokenizer_name: str, doc_ids: pd.Series) -> dict[str, list[int]]:
    """Where each chunked document's tokens start, by the fixed tokenizer (score.tokenizer)."""
    wanted = set(doc_ids)
    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "text"])
    documents = documents[documents["doc_id"].isin(wanted)]
    starts = token_starts(load_tokenizer(tokenizer_name), documents["text"].tolist())
    return dict(zip(documents["doc_id"], starts, strict=True))


def main(params: Params) -> None:
    chunks = pd.read_parquet(
        "data/chunks.parquet", columns=["chunk_id", "doc_id", "start", "end", "text"]
    )
    chunk_ids = chunks["chunk_id"].tolist()
    corpus = Corpus(
        chunk_ids, chunks["text"].tolist(), read_vectors(EMBEDDINGS, "chunks", chunk_ids)
    )
    device = resolve_device(params.score.device)
    sp = params.score
    ks, depth = sp.ks, max(sp.depth, max(sp.ks))
    metrics: dict[str, dict[str, dict[str, float]]] = {}
    results, runs = [], {}
    searches: dict[bytes | None, tuple[Corpus, dict]] = {}
    shutil.rmtree(EXPORT, ignore_errors=True)  # no run file of a retriever since disabled
    _write(WORST_MISSES, "# Worst misses\n\nNo golden-set question was scored.\n")
    chance: dict[str, dict[str, float]] = {}
    for prepared in query_sets(params, chunks):
        query_set, texts = prepared.query_set, prepared.texts
        vectors = read_vectors(EMBEDDINGS, query_set.name, query_set.qids)  # named as the set
        searched, retrievers = _search(searches, corpus, query_set, params, device)
        queries = Queries(query_set, texts, vectors)
        ranked = rank_all(retrievers, queries, depth)
        by_chunk = {name: found.indices for name, found in ranked.items()}
        if prepared.chunk_items is not None:  # documents ranked: rank chunks for the contexts
            by_chunk = _rank_chunks(searches, corpus, prepared, vectors, params, device, depth)
        chance[query_set.name] = chance_means(
            query_set, prepared.views, ks, depth, sp.chance_rankings, sp.chance_seed
        )
        _flag_chance(query_set, chance[query_set.name], sp)
        for retriever, found in ranked.items():
            views = prepared.views if retriever in by_chunk else None
            values, rows = score_ranked(
                query_set, retriever, found, ks, sp.headline, views, by_chunk.get(retriever)
            )
            if retriever == "ann":  # what the index misses against exact search
                exact = ranked.get("dense") or Dense(searched, device).rank(queries, depth, {})
                values.update(recall_loss(found, exact, ks))
            metrics.setdefault(query_set.name, {})[retriever] = values
            results.append(rows)
            runs[f"{query_set.name}.{retriever}"] = trec_run(
                query_set.qids, query_set.item_ids, found, retriever
            )
            log.info("%s/%s: %s", query_set.name, retriever, _headline(values, sp.headline))
        if query_set.name == "synthetic":
            _write_golden_exports(queries, chunks)
            text_of = dict(zip(corpus.chunk_ids, corpus.texts, strict=True))
            item_texts = [text_of[item] for item in query_set.item_ids]
            _write(WORST_MISSES, _worst_misses(params, query_set, ranked, item_texts))
    if not results:
        raise GoldensetError("retrievers: no enabled retriever ranked any query set")
    results = pd.concat(results, ignore_index=True)
    write_parquet(results, "data/results.parquet")
    for name, text in runs.items():
        _write(EXPORT / "runs" / f"{name}.trec", text)
    headline, detail = split_metrics(metrics, sp.headline)
    _write_json("metrics/scores.json", headline)
    _write_json("metrics/detail.json", {**detail, "chance": chance})
    _write_json("metrics/intervals.json", headline_intervals(results, sp.headline, sp.intervals))
    _write_json("plots/recall_at_k.json", recall_plot_rows(metrics, ks))


def _search(
    searches: dict, corpus: Corpus, query_set: QuerySet, params: Params, device
) -> tuple[Corpus, dict]:
    """The retrievers over the chunks in the query set's order: one index per order, shared."""
    order = None if query_set.rows is None else query_set.rows.tobytes()
    if order not in searches:
        searched = corpus_for(corpus, query_set)
        searches[order] = (searched, build_retrievers(params.retrievers, searched, device))
    searched, retrievers = searches[order]
    if not retrievers:
        raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
    return searched, retrievers


def _rank_chunks(
    searches: dict, corpus: Corpus, prepared: Prepared, vectors, params: Params, device, depth
) -> dict[str, np.ndarray]:
    """Chunk items ranked for a set whose items are documents; a run file of documents has
    no chunk ranking, so its retriever gets no context view."""
    chunk_items = prepared.chunk_items
    _, retrievers = _search(searches, corpus, chunk_items, params, device)
    chunk_retrievers = {
        name: retriever
        for name, retriever in retrievers.items()
        if not isinstance(retriever, ExternalRunFile)
    }
    queries = Queries(chunk_items, prepared.texts, vectors)
    return {
        name: found.indices for name, found in rank_all(chunk_retrievers, queries, depth).items()
    }


def _flag_chance(query_set: QuerySet, chance: dict[str, float], sp) -> None:
    """One warning per headline metric that a random ranking already scores above
    score.max_chance."""
    for name in sp.headline:
        level = chance.get(name)
        if level is not None and level > sp.max_chance:
            log.warning(
                "warning: %s: a random ranking of its %d %s scores %s %.3g, above "
                "score.max_chance %.3g: more documents%s",
                query_set.name,
                chance[DOCUMENTS if name.startswith("doc_") else ITEMS],
                "documents" if name.startswith("doc_") else "items",
                name,
                level,
                sp.max_chance,
                _remedy(name),
            )


def _remedy(metric: str) -> str:
    if metric.startswith("context_"):
        return ", or a smaller budget"
    return ", or smaller k" if "@" in metric else ""


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


def _headline(values: dict[str, float], headline: list[str]) -> str:
    shown = [*headline, "recall_loss@10", "n_queries"]
    return ", ".join(f"{name} {values[name]:.4g}" for name in shown if name in values)


def _write_json(path: str, payload: object) -> None:
    _write(Path(path), json.dumps(payload, indent=2, sort_keys=False) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    from goldenset.stage import run_stage

    run_stage(main)
