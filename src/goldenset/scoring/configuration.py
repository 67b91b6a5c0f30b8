"""One configuration scored from the pipeline's files: every enabled retriever on every query set.

I/O at the edges, scoring pure in the middle: :func:`read_score_inputs` reads every file the
score stage reads, once, into :class:`ScoreInputs` (the tokenizer's token starts and what a
retriever reads from outside, a run file or a module, included); :func:`score_inputs` computes
every output of the stage in memory (:class:`ScoreOutputs`) from those inputs and the score and
retrievers params, and touches no file; :func:`write_score_outputs` writes them, each file
atomically. The score stage,
`goldenset calibrate` (which builds its inputs from chunks and vectors it made in memory) and the
benchmarks call these, so no script re-implements scoring.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.sparse import csr_array

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically, write_json, write_parquet
from goldenset.core.vectors import CHUNK_VECTORS, read_vectors
from goldenset.corpus.queries import absent_summary
from goldenset.corpus.querysets import BY_SPANS, QuerySet, read_query_sets
from goldenset.metrics.measures import MEASURES
from goldenset.metrics.relevance import (
    TextClasses,
    collapse_items,
    document_qrels,
    evidence_qrels,
    group_starts,
    text_classes,
)
from goldenset.metrics.views import (
    ItemChunks,
    Views,
    chunk_layout,
    document_judged_views,
    span_views,
)
from goldenset.scoring.exports import beir_corpus, beir_qrels, beir_queries, trec_run
from goldenset.scoring.foreign import ForeignChunking, foreign_chunking
from goldenset.scoring.outputs import headline_intervals, split_metrics
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.ranked import (
    N_DOCUMENTS_KEY,
    N_ITEMS_KEY,
    ItemJudgments,
    chance_means,
    recall_plot_rows,
    score_ranked,
)
from goldenset.scoring.reports import worst_misses
from goldenset.scoring.retriever_params import RetrieversSection
from goldenset.scoring.retrievers import (
    RETRIEVERS,
    Corpus,
    Queries,
    RankingContext,
    Retriever,
    build_retrievers,
    load_retrievers,
    rank_all,
    stores,
)
from goldenset.scoring.stores.base import ask_store, listed_chunks
from goldenset.scoring.tokens import document_token_starts
from goldenset.scoring.topk import TopK, resolve_device

log = logging.getLogger("goldenset")
NO_GOLDEN_QUESTION = "# Worst misses\n\nNo golden-set question was scored.\n"
Metrics = dict[str, dict[str, dict[str, float]]]  # query set -> retriever -> metric -> mean
# the columns of data/chunks.parquet scoring reads (goldenset.chunking.strategies.CHUNK_COLUMNS
# less the sha256 of each text)
SCORED_CHUNK_COLUMNS = ["chunk_id", "doc_id", "start", "end", "text"]


@dataclass(frozen=True)
class ScoreInputs:
    """Every file the score stage reads, read once (or made in memory: `goldenset calibrate`)."""

    chunks: pd.DataFrame  # SCORED_CHUNK_COLUMNS, in the order of the chunk vectors
    chunk_vectors: np.ndarray
    query_sets: dict[str, QuerySet]  # every declared set (goldenset.corpus.querysets)
    query_vectors: dict[str, np.ndarray]  # by set name, for each set that has questions
    # where each chunked document's tokens start, by score.tokenizer (the context view)
    token_starts: dict[str, list[int]]
    loaded: dict[str, object]  # what an enabled retriever reads from outside, by its name
    # the chunked documents (doc_id, text): a store's passages are placed in them, and the views
    # of a chunking count those it has no chunk of
    documents: pd.DataFrame | None = None


def read_upstream(root: Path = Path(".")) -> tuple[pd.DataFrame, dict[str, QuerySet]]:
    """What every chunking and model is scored against: the documents (doc_id, text) and every
    query set (goldenset.corpus.querysets), the golden set read once."""
    documents = pd.read_parquet(root / paths.DOCUMENTS, columns=["doc_id", "text"])
    return documents, read_query_sets(root)


def read_score_inputs(
    score: ScoreParams, retrievers: RetrieversSection, root: Path = Path(".")
) -> ScoreInputs:
    """The score stage's inputs under a project folder: chunks, every query set and their
    vectors (data/embeddings, checked against the ids they belong to), the documents' token
    starts, and what the enabled retrievers read from outside."""
    chunks = pd.read_parquet(root / paths.CHUNKS, columns=SCORED_CHUNK_COLUMNS)
    chunk_vectors = read_vectors(
        root / paths.EMBEDDINGS, CHUNK_VECTORS, chunks["chunk_id"].tolist()
    )
    documents, sets = read_upstream(root)
    chunked = documents[documents["doc_id"].isin(set(chunks["doc_id"]))]
    return ScoreInputs(
        chunks,
        chunk_vectors,
        sets,
        {
            name: read_vectors(root / paths.EMBEDDINGS, name, questions.qids)
            for name, questions in sets.items()
            if len(questions)
        },
        document_token_starts(score.tokenizer, chunked),
        load_retrievers(retrievers),
        chunked,
    )


def without_questions(inputs: ScoreInputs, qids: Collection[str]) -> ScoreInputs:
    """The inputs less the golden set's questions of `qids` (a person failed them), and their
    vectors."""
    sets, vectors = dict(inputs.query_sets), dict(inputs.query_vectors)
    for name, found in inputs.query_sets.items():
        if not found.entry.golden or name not in vectors:
            continue
        sets[name] = found.without(qids)
        kept = np.array([qid not in qids for qid in found.qids], dtype=bool)
        vectors[name] = vectors[name][kept]
        if not kept.any():
            del vectors[name]
    return replace(inputs, query_sets=sets, query_vectors=vectors)


@dataclass(frozen=True)
class PreparedSet:
    """A query set to score: its judgments over the items retrievers rank, its questions as read,
    and its chunk-size-fair views."""

    query_set: ItemJudgments
    questions: QuerySet
    views: Views
    # a set whose items are documents is ranked a second time over chunks for its contexts
    chunk_items: ItemJudgments | None = None

    @property
    def texts(self) -> list[str]:
        return self.questions.texts


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


def score_inputs(
    inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection
) -> ScoreOutputs:
    """Every enabled retriever on every query set of the inputs, scored; reads no file.

    goldenset's own retrievers are scored over its chunks; each store (a retriever that returns
    passages of its own chunking) over its own chunking (goldenset.scoring.foreign)."""
    own = [name for name in RETRIEVERS.names() if name not in stores()]
    parts = []
    if any(getattr(retrievers, name).enabled for name in own):
        parts.append(_score_chunking(inputs, score, only(retrievers, own)))
    enabled_stores = [name for name in stores() if getattr(retrievers, name).enabled]
    parts += [_score_store(name, inputs, score, retrievers) for name in enabled_stores]
    if not parts:
        raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
    return _outputs(parts, score)


@dataclass
class _Part:
    """One chunking scored (goldenset's own, or a store's): what the outputs gather."""

    metrics: Metrics = field(default_factory=dict)
    rows: list[pd.DataFrame] = field(default_factory=list)
    exports: dict[Path, str] = field(default_factory=dict)
    chance: dict[str, dict[str, float]] = field(default_factory=dict)
    # the chunking's whole worst-misses report (title, introduction, a section per retriever);
    # empty where it scored no golden set
    misses: str = ""
    placements: dict[str, dict] = field(default_factory=dict)  # what became of a store's passages


def _score_chunking(
    inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection
) -> _Part:
    """The enabled retrievers over the chunks of the inputs, on every query set."""
    chunks = inputs.chunks
    corpus = Corpus(chunks["chunk_id"].tolist(), chunks["text"].tolist(), inputs.chunk_vectors)
    search = _Searches(corpus, retrievers, resolve_device(score.device), inputs.loaded)
    part = _Part()
    for prepared in prepare_sets(inputs, score):
        query_set = prepared.query_set
        vectors = inputs.query_vectors[query_set.name]
        scored = _score_set(prepared, vectors, search, score)
        part.chance[query_set.name] = scored.chance
        if scored.metrics:
            part.metrics[query_set.name] = scored.metrics
        part.rows.extend(scored.rows)
        for retriever, found in scored.ranked.items():
            part.exports[paths.EXPORT / "runs" / f"{query_set.name}.{retriever}.trec"] = trec_run(
                query_set.qids, query_set.item_ids, found, retriever
            )
        if prepared.questions.entry.golden:
            part.exports.update(golden_exports(scored.queries, chunks))
            text_of = dict(zip(corpus.chunk_ids, corpus.texts, strict=True))
            texts = [text_of[item] for item in query_set.item_ids]
            part.misses = _worst_misses(score, prepared, scored.ranked, texts)
    return part


def _score_store(
    name: str, inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection
) -> _Part:
    """A store over its own chunking: asked every question (or read from its cache), its passages
    placed in their documents, then scored as a chunking of its own. Without its whole chunking
    listed, a set judged by evidence spans keeps the document and context views only."""
    if inputs.documents is None:
        raise GoldensetError(f"retrievers.{name}: a store is scored against the documents' text")
    source = inputs.loaded[name]
    asked = (text for found in inputs.query_sets.values() for text in found.texts)
    texts = list(dict.fromkeys(asked))
    try:
        answers = ask_store(name, source, texts, max(score.depth, max(score.ks)))
        listed = listed_chunks(name, source)
    finally:
        source.close()
    chunking = foreign_chunking(
        dict(zip(inputs.documents["doc_id"], inputs.documents["text"], strict=True)),
        dict(zip(texts, answers, strict=True)),
        listed,
        f"retrievers.{name}",
    )
    _log_placement(name, chunking, source.settings.min_located)
    # the same questions over the store's chunking: chunks goldenset never embedded
    own = replace(
        inputs,
        chunks=chunking.chunks,
        chunk_vectors=np.zeros((len(chunking.chunks), 0), dtype=np.float32),
        token_starts=_token_starts(inputs.token_starts, chunking.documents, score.tokenizer),
        loaded={name: chunking.answers},
        documents=chunking.documents,
    )
    # chance levels belong to goldenset's chunking: a store's part computes none
    quiet = score.model_copy(update={"chance_rankings": 0, "max_chance": 1.0})
    # the store alone: every other enabled retriever is scored in a part of its own (and this
    # chunking has neither vectors for goldenset's retrievers nor answers of another store)
    part = _score_chunking(own, quiet, only(retrievers, [name]))
    part.chance = {}
    part.exports = {path: text for path, text in part.exports.items() if "runs" in path.parts}
    part.exports[paths.store_corpus(name)] = beir_corpus(chunking.chunks)
    if not chunking.listed:
        _drop_chunk_view(part, inputs.query_sets)
    part.placements[name] = placement_summary(chunking)
    return part


def _token_starts(
    known: dict[str, list[int]], documents: pd.DataFrame, tokenizer: str
) -> dict[str, list[int]]:
    """Where the tokens of a store's documents start: those of the corpus as read, those of the
    stand-ins of passages not located counted by the same tokenizer."""
    new = documents[~documents["doc_id"].isin(set(known))]
    return {**known, **(document_token_starts(tokenizer, new) if len(new) else {})}


def _outputs(parts: list[_Part], score: ScoreParams) -> ScoreOutputs:
    """The parts gathered into the stage's outputs: one metrics file, one results table."""
    metrics: Metrics = {}
    rows, exports, chance, placements = [], {}, {}, {}
    for part in parts:
        for set_name, by_retriever in part.metrics.items():
            metrics.setdefault(set_name, {}).update(by_retriever)
        rows += part.rows
        exports.update(part.exports)
        chance.update(part.chance)
        placements.update(part.placements)
    if not rows:
        raise GoldensetError("retrievers: no enabled retriever ranked any query set")
    frame = pd.concat(rows, ignore_index=True)
    headline, detail = split_metrics(metrics, score.headline)
    return ScoreOutputs(
        results=frame,
        scores=headline,
        detail={**detail, "chance": chance, **({"stores": placements} if placements else {})},
        intervals=headline_intervals(frame, score.headline, score.intervals),
        recall_plot=recall_plot_rows(metrics, score.ks),
        worst_misses=_joined_reports([part.misses for part in parts]),
        exports=exports,
    )


def _joined_reports(reports: list[str]) -> str:
    """One worst-misses report: the first's title and introduction, every part's sections."""
    written = [report for report in reports if report]
    if not written:
        return NO_GOLDEN_QUESTION
    sections = [report.partition("\n## ")[2] for report in written[1:]]
    return "\n## ".join([written[0], *filter(None, sections)])


def only(retrievers: RetrieversSection, names: list[str]) -> RetrieversSection:
    """The `retrievers:` section with every retriever not named switched off."""
    update = {
        name: getattr(retrievers, name).model_copy(update={"enabled": False})
        for name in RETRIEVERS.names()
        if name not in names
    }
    return retrievers.model_copy(update=update)


def _drop_chunk_view(part: _Part, query_sets: dict[str, QuerySet]) -> None:
    """A store that cannot list its chunks has no chunk view on a set judged by evidence spans:
    its relevant chunks, ideal DCG and recall denominators need every chunk of a document."""
    spans = {name for name, found in query_sets.items() if found.entry.judged_by == BY_SPANS}
    for set_name in spans & set(part.metrics):
        for values in part.metrics[set_name].values():
            for metric in [name for name in values if _chunk_view(name)]:
                del values[metric]
    for frame in part.rows:
        judged_by_spans = frame["query_set"].isin(spans)
        frame.loc[judged_by_spans, "first_relevant_rank"] = pd.NA
        for column in [name for name in frame.columns if _chunk_view(name)]:
            frame.loc[judged_by_spans, column] = np.nan


def _chunk_view(metric: str) -> bool:
    """A metric of the chunk view: a measure declared in that view, under its own name (its
    doc_ form is the document view's)."""
    measure = MEASURES.get(metric.partition("@")[0])
    return measure is not None and "chunk" in measure.views


def placement_summary(chunking: ForeignChunking) -> dict:
    """detail.json's record of a store's passages: the share located, how, and the views."""
    placement = chunking.placement
    return {
        "located_share": placement.share,
        "passages": len(placement.spans),
        **{f"located_by_{how}": count for how, count in sorted(placement.by_how.items())},
        "no_document_id": placement.no_document_id,
        "unknown_documents": sum(placement.unknown_documents.values()),
        "not_found": placement.not_found,
        "ambiguous": placement.ambiguous,
        "chunks": len(chunking.chunks),
        "chunk_view": int(chunking.listed),  # 0: the store lists no chunks, doc and context only
    }


def _log_placement(name: str, chunking: ForeignChunking, min_located: float) -> None:
    lines = chunking.placement.lines()
    if not chunking.listed:
        lines.append(
            "it lists no chunks: document and context views only on sets judged by evidence"
        )
    log.info("%s: %s", name, "; ".join(lines))
    if chunking.placement.share < min_located:
        log.warning(
            "warning: retrievers.%s: only %.1f%% of its passages were located in their documents "
            "(retrievers.%s.min_located %.0f%%): check retrievers.%s.doc_id_key and that the store "
            "holds the documents of ingest.path; the rest rank as never relevant",
            name,
            100 * chunking.placement.share,
            name,
            100 * min_located,
            name,
        )


def write_score_outputs(outputs: ScoreOutputs, root: Path = Path(".")) -> None:
    """Every file of the score stage under a project folder, atomically; data/export holds only
    this run's files (no run file of a retriever since disabled)."""
    shutil.rmtree(root / paths.EXPORT, ignore_errors=True)
    write_parquet(outputs.results, root / paths.RESULTS)
    for path, text in outputs.exports.items():
        write_atomically(root / path, text)
    write_atomically(root / paths.WORST_MISSES, outputs.worst_misses)
    write_json(root / paths.SCORES, outputs.scores)
    write_json(root / paths.DETAIL, outputs.detail)
    write_json(root / paths.INTERVALS, outputs.intervals)
    write_json(root / paths.RECALL_PLOT, outputs.recall_plot)


def save_answers(inputs: ScoreInputs) -> None:
    """The answers a retriever that lives outside the pipeline gave this run, added to its cache
    (retrievers.external.cache_dir): an unchanged re-run asks nothing again."""
    for loaded in inputs.loaded.values():
        cache = getattr(loaded, "cache", None)
        if cache is not None:
            cache.save()


@dataclass(frozen=True)
class _Scored:
    """One query set scored: what each retriever ranked, and its metrics and result rows."""

    queries: Queries
    ranked: dict[str, TopK]
    metrics: dict[str, dict[str, float]]  # retriever -> metric -> mean
    rows: list[pd.DataFrame]  # each retriever's rows of results.parquet
    chance: dict[str, float]  # each metric's chance level (chance_means)


def _score_set(
    prepared: PreparedSet, vectors: np.ndarray, search: _Searches, score: ScoreParams
) -> _Scored:
    query_set = prepared.query_set
    ks, depth = score.ks, max(score.depth, max(score.ks))
    searched, retrievers = search.over(query_set)
    queries = Queries(query_set, prepared.texts, vectors)
    ranked = rank_all(retrievers, queries, depth)
    by_chunk = {name: found.indices for name, found in ranked.items()}
    if prepared.chunk_items is not None:  # documents ranked: rank chunks for the contexts
        by_chunk = search.chunk_rankings(prepared, vectors, depth)
    chance = chance_means(
        query_set, prepared.views, ks, depth, score.chance_rankings, score.chance_seed
    )
    _flag_chance(query_set, chance, score)
    metrics, rows = {}, []
    for retriever, found in ranked.items():
        views = prepared.views if retriever in by_chunk else None
        values, frame = score_ranked(
            query_set, retriever, found, ks, score.headline, views, by_chunk.get(retriever)
        )
        extra = RETRIEVERS[retriever].extra_metrics
        own = {}
        if extra is not None:
            own = extra(found, RankingContext(queries, searched, ranked, depth, search.device), ks)
            values.update(own)
        metrics[retriever] = values
        rows.append(frame)
        shown = [*score.headline, *(name for name in own if name.endswith(f"@{max(ks)}"))]
        log.info("%s/%s: %s", query_set.name, retriever, _headline(values, shown))
    return _Scored(queries, ranked, metrics, rows, chance)


class _Searches:
    """The retrievers over the chunks in a query set's order: one index per order, shared."""

    def __init__(
        self,
        corpus: Corpus,
        retrievers: RetrieversSection,
        device: torch.device | str,
        loaded: dict[str, object],
    ) -> None:
        self.corpus, self.retrievers, self.device = corpus, retrievers, device
        self.loaded = loaded
        self._built: dict[bytes | None, tuple[Corpus, dict[str, Retriever]]] = {}

    def over(self, query_set: ItemJudgments) -> tuple[Corpus, dict[str, Retriever]]:
        order = None if query_set.rows is None else query_set.rows.tobytes()
        if order not in self._built:
            searched = corpus_for(self.corpus, query_set)
            built = build_retrievers(self.retrievers, searched, self.device, self.loaded)
            self._built[order] = (searched, built)
        searched, retrievers = self._built[order]
        if not retrievers:
            raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
        return searched, retrievers

    def chunk_rankings(
        self, prepared: PreparedSet, vectors: np.ndarray, depth: int
    ) -> dict[str, np.ndarray]:
        """Chunk items ranked for a set whose items are documents; a retriever that ranks no
        chunks (a run file of documents) gets no context view."""
        chunk_items = prepared.chunk_items
        assert chunk_items is not None
        _, retrievers = self.over(chunk_items)
        chunk_retrievers = {
            name: retriever
            for name, retriever in retrievers.items()
            if RETRIEVERS[name].ranks_chunks_with(getattr(self.retrievers, name))
        }
        queries = Queries(chunk_items, prepared.texts, vectors)
        ranked = rank_all(chunk_retrievers, queries, depth)
        return {name: found.indices for name, found in ranked.items()}


def prepare_sets(inputs: ScoreInputs, score: ScoreParams) -> list[PreparedSet]:
    """Each query set with its judgments and views; sets without questions are left out."""
    chunks = inputs.chunks
    sets = []
    documents = () if inputs.documents is None else inputs.documents["doc_id"].tolist()
    layout = chunk_layout(chunks, inputs.token_starts, documents)
    classes = text_classes(chunks["text"])
    items = (
        ItemChunks.of(len(chunks), None, None)
        if classes is None
        else ItemChunks.of(len(chunks), classes.starts, classes.order)
    )
    for questions in inputs.query_sets.values():
        if not len(questions):
            if questions.entry.absent_note:
                log.info(questions.entry.absent_note)
            continue
        name, qids, judgments = questions.name, questions.qids, questions.judgments
        if questions.entry.judged_by == BY_SPANS:
            qrels = evidence_qrels(qids, judgments, chunks, score.min_overlap)
            views = span_views(qids, judgments, layout, items, score.budgets)
            sets.append(
                PreparedSet(chunk_set(name, qids, qrels, chunks, classes), questions, views)
            )
            continue
        warning = absent_summary(judgments)
        if warning:
            log.warning(warning)
        starts = group_starts(chunks["doc_id"])
        doc_order = chunks["doc_id"].iloc[starts].tolist()
        by_doc = document_qrels(qids, judgments, doc_order)
        documents = ItemJudgments(name, qids, by_doc, doc_order, starts)
        by_chunk = by_doc[:, layout.chunk_doc] if len(chunks) else by_doc[:, :0]
        chunk_items = chunk_set(name, qids, csr_array(by_chunk), chunks, classes)
        # judged per layout document: the same as by_doc but for documents without chunks
        by_layout = document_qrels(qids, judgments, layout.doc_ids)
        views = document_judged_views(by_layout, layout, items, score.budgets)
        sets.append(PreparedSet(documents, questions, views, chunk_items))
    if not sets:
        raise GoldensetError(
            "score: nothing to score: the golden set is empty and there are no labelled "
            "questions (labelled.jsonl or SQuAD files) nor real queries (queries.jsonl + "
            "qrels.tsv) in ingest.path; set generate.max_questions above 0"
        )
    return sets


def chunk_set(
    name: str, qids: list[str], qrels: csr_array, chunks: pd.DataFrame, classes: TextClasses | None
) -> ItemJudgments:
    """Chunks ranked as items, chunks of equal text as one item (the first one's id)."""
    chunk_ids = chunks["chunk_id"].tolist()
    if classes is None:
        return ItemJudgments(name, qids, qrels, chunk_ids)
    collapsed = collapse_items(qrels, classes.of_chunk, len(classes.starts))
    item_ids = [chunk_ids[row] for row in classes.first]
    return ItemJudgments(name, qids, collapsed, item_ids, classes.starts, classes.order)


def corpus_for(corpus: Corpus, query_set: ItemJudgments) -> Corpus:
    """The chunks in the order the query set's items group them (equal texts side by side)."""
    rows = query_set.rows
    if rows is None:
        return corpus
    return Corpus(
        [corpus.chunk_ids[row] for row in rows],
        [corpus.texts[row] for row in rows],
        corpus.vectors[rows],
    )


def _flag_chance(query_set: ItemJudgments, chance: dict[str, float], score: ScoreParams) -> None:
    """One warning per headline metric that a random ranking already scores above
    score.max_chance."""
    for name in score.headline:
        level = chance.get(name)
        if level is not None and level > score.max_chance:
            log.warning(
                "warning: %s: a random ranking of its %d %s scores %s %.3g, above "
                "score.max_chance %.3g: more documents%s",
                query_set.name,
                chance[N_DOCUMENTS_KEY if name.startswith("doc_") else N_ITEMS_KEY],
                "documents" if name.startswith("doc_") else "items",
                name,
                level,
                score.max_chance,
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
    score: ScoreParams, prepared: PreparedSet, ranked: dict[str, TopK], texts: list[str]
) -> str:
    return worst_misses(
        prepared.questions.table,
        prepared.query_set,
        ranked,
        texts,
        score.worst_misses,
        score.worst_misses_chunks,
        score.worst_misses_chars,
    )


def _headline(values: dict[str, float], names: list[str]) -> str:
    shown = [*names, "n_queries"]
    return ", ".join(f"{name} {values[name]:.4g}" for name in shown if name in values)
