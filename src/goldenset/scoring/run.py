"""One configuration scored from the pipeline's files: every enabled retriever on every query set.

:func:`score_configuration` reads the chunks, embeddings, golden set and query sets and computes
every output of the score stage in memory (:class:`ScoreOutputs`); :func:`write_score_outputs`
writes them, each file atomically. The score stage, `goldenset calibrate` and the benchmarks call
these, so no script re-implements scoring.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.sparse import csr_array

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically, write_json, write_parquet
from goldenset.core.params import Params, ScoreParams
from goldenset.core.vectors import read_vectors
from goldenset.corpus.queries import (
    NO_REAL_QUERIES,
    absent_summary,
    golden_evidence,
    read_goldenset,
)
from goldenset.scoring.exports import beir_corpus, beir_qrels, beir_queries, trec_run
from goldenset.scoring.outputs import headline_intervals, split_metrics
from goldenset.scoring.querysets import (
    DOCUMENTS,
    ITEMS,
    QuerySet,
    chance_means,
    recall_plot_rows,
    score_ranked,
)
from goldenset.scoring.relevance import (
    TextClasses,
    collapse_items,
    document_qrels,
    evidence_qrels,
    group_starts,
    text_classes,
)
from goldenset.scoring.reports import worst_misses
from goldenset.scoring.retrievers import (
    REGISTRY,
    Corpus,
    Queries,
    RankingContext,
    Retriever,
    build_retrievers,
    rank_all,
)
from goldenset.scoring.tokens import load_tokenizer, token_starts
from goldenset.scoring.topk import TopK, resolve_device
from goldenset.scoring.views import (
    ItemChunks,
    Views,
    chunk_layout,
    document_judged_views,
    span_views,
)

log = logging.getLogger("goldenset")
NO_GOLDEN_QUESTION = "# Worst misses\n\nNo golden-set question was scored.\n"
Metrics = dict[str, dict[str, dict[str, float]]]  # query set -> retriever -> metric -> mean


@dataclass(frozen=True)
class Prepared:
    """A query set to score, with its query texts and its chunk-size-fair views."""

    query_set: QuerySet
    texts: list[str]
    views: Views
    # a set whose items are documents is ranked a second time over chunks for its contexts
    chunk_items: QuerySet | None = None


@dataclass
class ScoreOutputs:
    """Everything the score stage writes, by the file it goes to (goldenset.core.paths)."""

    results: pd.DataFrame  # data/results.parquet: one row per query set, retriever, question
    scores: dict  # metrics/scores.json: the headline metrics
    detail: dict  # metrics/detail.json: every other metric, and chance levels
    intervals: dict  # metrics/intervals.json
    recall_plot: list[dict]  # plots/recall_at_k.json
    worst_misses: str  # reports/worst_misses.md
    exports: dict[Path, str] = field(default_factory=dict)  # under data/export: BEIR, TREC runs


def score_configuration(params: Params) -> ScoreOutputs:
    """Every enabled retriever on every query set of the pipeline's files, scored."""
    chunks = pd.read_parquet(paths.CHUNKS, columns=["chunk_id", "doc_id", "start", "end", "text"])
    chunk_ids = chunks["chunk_id"].tolist()
    corpus = Corpus(
        chunk_ids, chunks["text"].tolist(), read_vectors(paths.EMBEDDINGS, "chunks", chunk_ids)
    )
    sp = params.score
    search = _Searches(corpus, params, resolve_device(sp.device))
    metrics: Metrics = {}
    results, exports, chance = [], {}, {}
    report = NO_GOLDEN_QUESTION
    for prepared in query_sets(params, chunks):
        query_set = prepared.query_set
        scored = _score_set(prepared, search, sp)
        chance[query_set.name] = scored.chance
        if scored.metrics:
            metrics[query_set.name] = scored.metrics
        results.extend(scored.rows)
        for retriever, found in scored.ranked.items():
            exports[paths.EXPORT / "runs" / f"{query_set.name}.{retriever}.trec"] = trec_run(
                query_set.qids, query_set.item_ids, found, retriever
            )
        if query_set.name == "synthetic":
            exports.update(golden_exports(scored.queries, chunks))
            text_of = dict(zip(corpus.chunk_ids, corpus.texts, strict=True))
            texts = [text_of[item] for item in query_set.item_ids]
            report = _worst_misses(sp, query_set, scored.ranked, texts)
    if not results:
        raise GoldensetError("retrievers: no enabled retriever ranked any query set")
    frame = pd.concat(results, ignore_index=True)
    headline, detail = split_metrics(metrics, sp.headline)
    return ScoreOutputs(
        results=frame,
        scores=headline,
        detail={**detail, "chance": chance},
        intervals=headline_intervals(frame, sp.headline, sp.intervals),
        recall_plot=recall_plot_rows(metrics, sp.ks),
        worst_misses=report,
        exports=exports,
    )


def write_score_outputs(outputs: ScoreOutputs) -> None:
    """Every file of the score stage, atomically; data/export holds only this run's files (no
    run file of a retriever since disabled)."""
    shutil.rmtree(paths.EXPORT, ignore_errors=True)
    write_parquet(outputs.results, paths.RESULTS)
    for path, text in outputs.exports.items():
        write_atomically(path, text)
    write_atomically(paths.WORST_MISSES, outputs.worst_misses)
    write_json(paths.SCORES, outputs.scores)
    write_json(paths.DETAIL, outputs.detail)
    write_json(paths.INTERVALS, outputs.intervals)
    write_json(paths.RECALL_PLOT, outputs.recall_plot)


@dataclass(frozen=True)
class ScoredSet:
    """One query set scored: what each retriever ranked, and its metrics and result rows."""

    queries: Queries
    ranked: dict[str, TopK]
    metrics: dict[str, dict[str, float]]  # retriever -> metric -> mean
    rows: list[pd.DataFrame]  # each retriever's rows of results.parquet
    chance: dict[str, float]  # each metric's chance level (chance_means)


def _score_set(prepared: Prepared, search: _Searches, sp: ScoreParams) -> ScoredSet:
    query_set = prepared.query_set
    ks, depth = sp.ks, max(sp.depth, max(sp.ks))
    vectors = read_vectors(paths.EMBEDDINGS, query_set.name, query_set.qids)  # named as the set
    searched, retrievers = search.over(query_set)
    queries = Queries(query_set, prepared.texts, vectors)
    ranked = rank_all(retrievers, queries, depth)
    by_chunk = {name: found.indices for name, found in ranked.items()}
    if prepared.chunk_items is not None:  # documents ranked: rank chunks for the contexts
        by_chunk = search.chunk_rankings(prepared, vectors, depth)
    chance = chance_means(query_set, prepared.views, ks, depth, sp.chance_rankings, sp.chance_seed)
    _flag_chance(query_set, chance, sp)
    metrics, rows = {}, []
    for retriever, found in ranked.items():
        views = prepared.views if retriever in by_chunk else None
        values, frame = score_ranked(
            query_set, retriever, found, ks, sp.headline, views, by_chunk.get(retriever)
        )
        extra = REGISTRY[retriever].extra_metrics
        own = {}
        if extra is not None:
            own = extra(found, RankingContext(queries, searched, ranked, depth, search.device), ks)
            values.update(own)
        metrics[retriever] = values
        rows.append(frame)
        shown = [*sp.headline, *(name for name in own if name.endswith(f"@{max(ks)}"))]
        log.info("%s/%s: %s", query_set.name, retriever, _headline(values, shown))
    return ScoredSet(queries, ranked, metrics, rows, chance)


class _Searches:
    """The retrievers over the chunks in a query set's order: one index per order, shared."""

    def __init__(self, corpus: Corpus, params: Params, device: torch.device | str) -> None:
        self.corpus, self.params, self.device = corpus, params, device
        self._built: dict[bytes | None, tuple[Corpus, dict[str, Retriever]]] = {}

    def over(self, query_set: QuerySet) -> tuple[Corpus, dict[str, Retriever]]:
        order = None if query_set.rows is None else query_set.rows.tobytes()
        if order not in self._built:
            searched = corpus_for(self.corpus, query_set)
            built = build_retrievers(self.params.retrievers, searched, self.device)
            self._built[order] = (searched, built)
        searched, retrievers = self._built[order]
        if not retrievers:
            raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
        return searched, retrievers

    def chunk_rankings(
        self, prepared: Prepared, vectors: np.ndarray, depth: int
    ) -> dict[str, np.ndarray]:
        """Chunk items ranked for a set whose items are documents; a retriever that ranks no
        chunks (a run file of documents) gets no context view."""
        chunk_items = prepared.chunk_items
        assert chunk_items is not None
        _, retrievers = self.over(chunk_items)
        chunk_retrievers = {
            name: retriever
            for name, retriever in retrievers.items()
            if REGISTRY[name].ranks_chunks_with(getattr(self.params.retrievers, name))
        }
        queries = Queries(chunk_items, prepared.texts, vectors)
        ranked = rank_all(chunk_retrievers, queries, depth)
        return {name: found.indices for name, found in ranked.items()}


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
    queries = pd.read_parquet(paths.QUERIES)
    judgments = pd.read_parquet(paths.QRELS)
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
    golden = read_goldenset(paths.GOLDENSET)
    if len(golden):
        qids, texts = golden["qid"].astype(str).tolist(), golden["question"].tolist()
        sets.append(("synthetic", qids, texts, golden_evidence(golden)))
    labelled = pd.read_parquet(paths.LABELLED)
    if len(labelled):
        evidence = pd.read_parquet(paths.LABELLED_EVIDENCE)
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
    documents = pd.read_parquet(paths.DOCUMENTS, columns=["doc_id", "text"])
    documents = documents[documents["doc_id"].isin(wanted)]
    starts = token_starts(load_tokenizer(tokenizer_name), documents["text"].tolist())
    return dict(zip(documents["doc_id"], starts, strict=True))


def _flag_chance(query_set: QuerySet, chance: dict[str, float], sp: ScoreParams) -> None:
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


def golden_exports(queries: Queries, chunks: pd.DataFrame) -> dict[Path, str]:
    """The golden set in BEIR format: the chunks as corpus, the questions, their judgments."""
    beir = paths.EXPORT / "beir"
    query_set = queries.query_set
    return {
        beir / "corpus.jsonl": beir_corpus(chunks),
        beir / "queries.jsonl": beir_queries(query_set.qids, queries.texts),
        beir / "qrels" / "test.tsv": beir_qrels(
            query_set.qids, query_set.qrels, query_set.item_ids
        ),
    }


def _worst_misses(
    settings: ScoreParams, query_set: QuerySet, ranked: dict[str, TopK], texts: list[str]
) -> str:
    return worst_misses(
        read_goldenset(paths.GOLDENSET),
        query_set,
        ranked,
        texts,
        settings.worst_misses,
        settings.worst_misses_chunks,
        settings.worst_misses_chars,
    )


def _headline(values: dict[str, float], names: list[str]) -> str:
    shown = [*names, "n_queries"]
    return ", ".join(f"{name} {values[name]:.4g}" for name in shown if name in values)
