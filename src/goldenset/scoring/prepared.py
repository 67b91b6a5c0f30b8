"""Each query set projected onto a chunking, once for every retriever: its judgments over the
items its runs are read as (chunks, chunks of equal text as one item, or documents), how a run's
ids become those items (goldenset.evaluation.projection), and its chunk-size-fair views.

What the chunking lists decides the views: a store that cannot list its chunks gives a set
judged by evidence spans no chunk view (goldenset.scoring.inputs.Chunking.listed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.core.errors import GoldensetError
from goldenset.corpus.queries import absent_summary
from goldenset.corpus.querysets import BY_SPANS, QuerySet
from goldenset.evaluation.projection import RunItems
from goldenset.evaluation.qrels import Qrels
from goldenset.evaluation.relevance import (
    TextClasses,
    collapse_items,
    document_qrels,
    evidence_qrels,
    group_starts,
    text_classes,
)
from goldenset.evaluation.views import (
    ItemChunks,
    Layout,
    Views,
    chunk_layout,
    document_judged_views,
    span_views,
)
from goldenset.scoring.inputs import Chunking
from goldenset.scoring.params import ScoreParams

log = logging.getLogger("goldenset")


@dataclass(frozen=True)
class PreparedSet:
    """A query set projected onto a chunking: its judgments over its items, how a run's ids
    become those items, its questions as read, and its chunk-size-fair views."""

    judged: Qrels
    questions: QuerySet
    views: Views
    items: RunItems  # a run's ids -> judged's items
    # a set whose items are documents reads the same run as chunk items too, for its contexts
    chunk_items: RunItems | None = None
    chunk_view: bool = True  # its own items' metrics (recall@k, ndcg@k...) are measured

    @property
    def texts(self) -> list[str]:
        return self.questions.texts

    @property
    def context_items(self) -> RunItems:
        """How a run's ids become the chunk items its contexts are filled from."""
        return self.items if self.chunk_items is None else self.chunk_items


@dataclass(frozen=True)
class _Projection:
    """What every set's projection onto one chunking shares."""

    chunks: pd.DataFrame
    layout: Layout
    classes: TextClasses | None
    items: ItemChunks
    listed: bool


def prepare_sets(
    chunking: Chunking, query_sets: dict[str, QuerySet], score: ScoreParams
) -> list[PreparedSet]:
    """Each query set projected onto the chunking; sets without questions are left out."""
    chunks = chunking.chunks
    documents = () if chunking.documents is None else chunking.documents["doc_id"].tolist()
    classes = text_classes(chunks["text"])
    items = (
        ItemChunks.of(len(chunks), None, None)
        if classes is None
        else ItemChunks.of(len(chunks), classes.starts, classes.order)
    )
    layout = chunk_layout(chunks, chunking.token_starts, documents)
    projection = _Projection(chunks, layout, classes, items, chunking.listed)
    sets = []
    for questions in query_sets.values():
        if not len(questions):
            if questions.entry.absent_note:
                log.info(questions.entry.absent_note)
            continue
        if questions.entry.judged_by == BY_SPANS:
            sets.append(_by_spans(questions, projection, score))
        else:
            sets.append(_by_documents(questions, projection, score))
    if not sets:
        raise GoldensetError(
            "score: nothing to score: the golden set is empty and there are no labelled "
            "questions (labelled.jsonl or SQuAD files) nor real queries (queries.jsonl + "
            "qrels.tsv) in ingest.path; set generate.max_questions above 0"
        )
    return sets


def _by_spans(questions: QuerySet, projection: _Projection, score: ScoreParams) -> PreparedSet:
    """A set judged by evidence spans: its items are the chunks (equal texts as one)."""
    qids, judgments, chunks = questions.qids, questions.judgments, projection.chunks
    qrels = evidence_qrels(qids, judgments, chunks, score.min_overlap)
    views = span_views(qids, judgments, projection.layout, projection.items, score.budgets)
    judged, items = chunk_set(questions.name, qids, qrels, chunks, projection.classes)
    return PreparedSet(judged, questions, views, items, chunk_view=projection.listed)


def _by_documents(questions: QuerySet, projection: _Projection, score: ScoreParams) -> PreparedSet:
    """A set judged per document: its items are the documents (each at its best chunk), and the
    same runs are read as chunk items too, for the contexts."""
    warning = absent_summary(questions.judgments)
    if warning:
        log.warning(warning)
    name, qids, judgments = questions.name, questions.qids, questions.judgments
    chunks, layout = projection.chunks, projection.layout
    starts = group_starts(chunks["doc_id"])
    doc_order = chunks["doc_id"].iloc[starts].tolist()
    by_doc = document_qrels(qids, judgments, doc_order)
    judged = Qrels(name, qids, by_doc, doc_order)
    of_chunk = np.searchsorted(starts, np.arange(len(chunks)), side="right") - 1
    chunk_ids = chunks["chunk_id"].tolist()
    items = RunItems(name, qids, chunk_ids, of_chunk, len(doc_order), doc_order)
    chunk_items = chunk_run_items(name, qids, chunks, projection.classes)
    # judged per layout document: the same as by_doc but for documents without chunks
    by_layout = document_qrels(qids, judgments, layout.doc_ids)
    views = document_judged_views(by_layout, layout, projection.items, score.budgets)
    return PreparedSet(judged, questions, views, items, chunk_items)


def chunk_set(
    name: str, qids: list[str], qrels: csr_array, chunks: pd.DataFrame, classes: TextClasses | None
) -> tuple[Qrels, RunItems]:
    """Chunks as items, chunks of equal text as one item (the first one's id): their judgments,
    and how a run's chunk ids become them."""
    chunk_ids = chunks["chunk_id"].tolist()
    items = chunk_run_items(name, qids, chunks, classes)
    if classes is None:
        return Qrels(name, qids, qrels, chunk_ids), items
    collapsed = collapse_items(qrels, classes.of_chunk, len(classes.starts))
    item_ids = [chunk_ids[row] for row in classes.first]
    return Qrels(name, qids, collapsed, item_ids), items


def chunk_run_items(
    name: str, qids: list[str], chunks: pd.DataFrame, classes: TextClasses | None
) -> RunItems:
    """How a run's chunk ids become chunk items (a class of equal texts as one)."""
    chunk_ids = chunks["chunk_id"].tolist()
    if classes is None:
        return RunItems(name, qids, chunk_ids, np.arange(len(chunk_ids)), len(chunk_ids))
    return RunItems(name, qids, chunk_ids, classes.of_chunk, len(classes.starts))
