"""A store's answers placed on its own chunking, the chunking goldenset then scores it over.

A store (goldenset.retrieval.stores) returns passages of its own chunks. Each distinct passage is
placed in its document (goldenset.retrieval.locate) and becomes a chunk row (chunk_id, doc_id,
start, end, text) of the store's chunking; the store's answers become each question's ranked
chunk ids. Scoring then treats that chunking as it treats goldenset's own (evidence spans judge
any chunk), so the document and context-budget views need nothing more. The chunk view needs the
store's whole chunking, since a question's relevant chunks, ideal DCG and recall denominator come
from every chunk of its documents: it is kept only when the store lists its chunks.

A passage that cannot be placed (no document id, a document the corpus lacks, text not found)
is not dropped: it becomes a chunk of a stand-in document of its own text, never relevant, that
still takes its place in the ranking and spends its tokens in a context.

:func:`store_chunking` is the whole way from a store to the chunking it is scored over: asked
every question of every set (or read from its cache), its passages placed. It asks over the
network and loads the budget tokenizer, so it runs at the edge: :func:`ask_stores`, which
goldenset.scoring.configuration.read_score_inputs calls, puts each enabled store's
:class:`StoreChunking` in the inputs, and scoring reads that value.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import rank_score
from goldenset.corpus.querysets import QuerySet
from goldenset.retrieval.locate import Placement, Span, place_passages
from goldenset.retrieval.params import RetrieversSection
from goldenset.retrieval.retrievers import stores
from goldenset.retrieval.stores.base import Answers, Hit, StoreSource, listed_chunks
from goldenset.retrieval.stores.deepen import ask_deep
from goldenset.scoring.inputs import Chunking, ScoreInputs
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.tokens import document_token_starts

log = logging.getLogger("goldenset")

FOREIGN_COLUMNS = ["chunk_id", "doc_id", "start", "end", "text"]  # those scoring reads
NOT_LOCATED = "(not located)"  # the stand-in document id of a passage not placed, and a number


@dataclass(frozen=True)
class ForeignChunking:
    """A store's chunking as scoring reads it, with its answers placed on it."""

    chunks: pd.DataFrame  # chunk_id, doc_id, start, end, text; a document's chunks contiguous
    documents: pd.DataFrame  # doc_id, text: the corpus and the stand-ins of passages not placed
    answers: Answers
    placement: Placement  # what became of each distinct passage
    listed: bool  # the chunks are the store's whole chunking (the chunk view holds)


def foreign_chunking(
    documents: Mapping[str, str],
    answered: Mapping[str, list[Hit]],
    listed: list[Hit] | None,
    origin: str,
) -> ForeignChunking:
    """The store's chunks (``listed``, when it lists them, and every passage it answered), each
    placed in ``documents`` (doc_id -> text); ``answered``: question text -> its hits, best
    first."""
    passages = _distinct([*(listed or []), *(hit for hits in answered.values() for hit in hits)])
    placement = place_passages(documents, passages)
    rows: dict[tuple, dict] = {}
    id_of: dict[tuple, str] = {}
    stand_ins: dict[str, str] = {}
    for passage, span in zip(passages, placement.spans, strict=True):
        key, row = _row(passage, span, len(stand_ins))
        if span is None:
            stand_ins[row["doc_id"]] = passage.text
        id_of[_key(passage)] = rows.setdefault(key, row)["chunk_id"]
    ranked = {
        text: _ranked([(id_of[_key(hit)], hit.score) for hit in hits])
        for text, hits in answered.items()
    }
    order = {doc_id: rank for rank, doc_id in enumerate([*documents, *stand_ins])}
    chunks = pd.DataFrame(list(rows.values()), columns=FOREIGN_COLUMNS)
    chunks = chunks.sort_values(
        ["doc_id", "start", "end"], key=lambda c: c.map(order) if c.name == "doc_id" else c
    ).reset_index(drop=True)
    frame = pd.DataFrame(
        {"doc_id": list(order), "text": [*documents.values(), *stand_ins.values()]}
    )
    return ForeignChunking(chunks, frame, Answers(ranked, origin), placement, listed is not None)


def _key(hit: Hit) -> tuple:
    """A passage as placed: the same id, document, text and offsets (its score aside)."""
    return (hit.chunk_id, hit.doc_id, hit.start, hit.end, hit.text)


def _distinct(hits: list[Hit]) -> list[Hit]:
    """Each passage once (the first hit of it), in order."""
    first: dict[tuple, Hit] = {}
    for hit in hits:
        first.setdefault(_key(hit), hit)
    return list(first.values())


def _row(passage: Hit, span: Span | None, n_stand_ins: int) -> tuple[tuple, dict]:
    """A placed passage is the chunk of its span (copies of one span are one chunk); one not
    placed, a chunk of its own stand-in document."""
    if span is None:
        doc_id = f"{NOT_LOCATED} {n_stand_ins + 1}"
        chunk_id = passage.chunk_id or doc_id
        return ("", chunk_id), _chunk(chunk_id, doc_id, 0, len(passage.text), passage.text)
    assert passage.doc_id is not None
    chunk_id = passage.chunk_id or f"{passage.doc_id}:{span.start}-{span.end}"
    key = (passage.doc_id, span.start, span.end)
    return key, _chunk(chunk_id, passage.doc_id, span.start, span.end, passage.text)


def _chunk(chunk_id: str, doc_id: str, start: int, end: int, text: str) -> dict:
    return {"chunk_id": chunk_id, "doc_id": doc_id, "start": start, "end": end, "text": text}


def _ranked(answer: list[tuple[str, float | None]]) -> list[tuple[str, float]]:
    """A question's chunk ids, each once (its best place), with its score or, for a store that
    gives none, 1/rank."""
    seen: dict[str, float] = {}
    for rank, (chunk_id, score) in enumerate(answer, start=1):
        seen.setdefault(chunk_id, rank_score(score, rank))
    return list(seen.items())


@dataclass(frozen=True)
class StoreChunking:
    """A store asked: the chunking it is scored over, its answers on it, and the record of the
    placement (detail.json's ``stores``)."""

    chunking: Chunking
    answers: Answers
    placement: dict


def ask_stores(
    inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection
) -> ScoreInputs:
    """The inputs with each enabled store asked (asked_stores)."""
    loaded = asked_stores(
        inputs.loaded, inputs.query_sets, inputs.documents, inputs.token_starts, score, retrievers
    )
    return replace(inputs, loaded=loaded)


def asked_stores(
    loaded: Mapping[str, object],
    query_sets: Mapping[str, QuerySet],
    documents: pd.DataFrame | None,
    token_starts: dict[str, list[int]],
    score: ScoreParams,
    retrievers: RetrieversSection,
) -> dict[str, object]:
    """What was loaded, each enabled store's source (a goldenset.retrieval.stores.StoreSource)
    replaced by its :class:`StoreChunking`: every question of the query sets asked."""
    asked = dict(loaded)
    for name in stores():
        if getattr(retrievers, name).enabled:
            asked[name] = store_chunking(
                name, asked[name], query_sets, documents, token_starts, score
            )
    return asked


def store_chunking(
    name: str,
    source: object,
    query_sets: Mapping[str, QuerySet],
    documents: pd.DataFrame | None,
    token_starts: dict[str, list[int]],
    score: ScoreParams,
) -> StoreChunking:
    """A store's chunking: every question asked (or read from its cache, which keeps every
    answer, a failure half-way included) deep enough to rank as many documents as goldenset's
    own retrievers do (stores.deepen.ask_deep), each passage placed in its document."""
    if documents is None:
        raise GoldensetError(f"retrievers.{name}: a store is scored against the documents' text")
    assert isinstance(source, StoreSource)
    asked = (text for questions in query_sets.values() for text in questions.texts)
    texts = list(dict.fromkeys(asked))
    depth = max(score.depth, max(score.ks))
    try:
        answers, cut = ask_deep(name, source, texts, depth, source.settings.max_fetch)
        listed = listed_chunks(name, source)
    finally:
        source.close()
        source.cache.save()
    if cut:
        log.warning(
            "warning: retrievers.%s: %d of %d questions' answers name fewer than %d distinct "
            "documents at max_fetch %d passages: their rankings are cut short; raise "
            "retrievers.%s.max_fetch",
            name,
            cut,
            len(texts),
            depth,
            source.settings.max_fetch,
            name,
        )
    texts_of = dict(zip(documents["doc_id"], documents["text"], strict=True))
    placed = foreign_chunking(
        texts_of, dict(zip(texts, answers, strict=True)), listed, f"retrievers.{name}"
    )
    _log_placement(name, placed, source.settings.min_located)
    chunking = Chunking(
        placed.chunks,
        np.zeros((len(placed.chunks), 0), dtype=np.float32),  # chunks goldenset never embedded
        _token_starts(token_starts, placed.documents, score.tokenizer),
        placed.documents,
        placed.listed,
        name,
    )
    return StoreChunking(chunking, placed.answers, placement_summary(placed))


def _token_starts(
    known: dict[str, list[int]], documents: pd.DataFrame, tokenizer: str
) -> dict[str, list[int]]:
    """Where the tokens of a store's documents start: those of the corpus as read, those of the
    stand-ins of passages not located counted by the same tokenizer."""
    new = documents[~documents["doc_id"].isin(set(known))]
    return {**known, **(document_token_starts(tokenizer, new) if len(new) else {})}


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
