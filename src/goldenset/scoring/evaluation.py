"""Every retriever's run over one chunking, evaluated on every query set projected onto it: the
one path goldenset's own chunking and a store's take (goldenset.scoring.configuration picks the
retrievers of each).

A run (goldenset.scoring.topk.TopK) is what any retriever returns; goldenset.scoring.ranked
scores it against the set's judgments. Chance levels belong to goldenset's own chunking.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.corpus.querysets import QuerySet
from goldenset.scoring.exports import beir_corpus, beir_qrels, beir_queries, trec_run
from goldenset.scoring.inputs import Chunking
from goldenset.scoring.outputs import ChunkingScores
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.prepared import PreparedSet, corpus_for, prepare_sets
from goldenset.scoring.ranked import (
    N_DOCUMENTS_KEY,
    N_ITEMS_KEY,
    ItemJudgments,
    chance_means,
    score_ranked,
)
from goldenset.scoring.reports import worst_misses
from goldenset.scoring.retriever_params import RetrieversSection
from goldenset.scoring.retrievers import (
    RETRIEVERS,
    Corpus,
    Queries,
    RankingContext,
    build_retrievers,
    rank_all,
)
from goldenset.scoring.topk import TopK

log = logging.getLogger("goldenset")


@dataclass(frozen=True)
class RetrieverChoice:
    """The retrievers scored over one chunking: their params, the names of those to build, what
    they read from outside, and the dense device."""

    params: RetrieversSection
    names: Sequence[str]
    loaded: dict[str, object]
    device: torch.device | str = "cpu"


def score_chunking(
    chunking: Chunking,
    questions: dict[str, QuerySet],
    query_vectors: dict[str, np.ndarray],
    retrievers: RetrieverChoice,
    score: ScoreParams,
) -> ChunkingScores:
    """The retrievers' runs over the chunking on every query set, scored."""
    chunks = chunking.chunks
    corpus = Corpus(chunks["chunk_id"].tolist(), chunks["text"].tolist(), chunking.vectors)
    search = _Searches(corpus, retrievers)
    part = ChunkingScores()
    for prepared in prepare_sets(chunking, questions, score):
        judged = prepared.judged
        scored = _score_set(prepared, query_vectors[judged.name], search, score)
        if chunking.store is None:
            part.chance[judged.name] = _chance(prepared, score)
        if scored.metrics:
            part.metrics[judged.name] = scored.metrics
        part.rows.extend(scored.rows)
        for retriever, found in scored.ranked.items():
            part.exports[paths.EXPORT / "runs" / f"{judged.name}.{retriever}.trec"] = trec_run(
                judged.qids, judged.item_ids, found, retriever
            )
        if prepared.questions.entry.golden:
            if chunking.store is None:
                part.exports.update(golden_exports(scored.queries, chunks))
            text_of = dict(zip(corpus.chunk_ids, corpus.texts, strict=True))
            texts = [text_of[item] for item in judged.item_ids]
            part.misses = _worst_misses(score, prepared, scored.ranked, texts)
    return part


@dataclass(frozen=True)
class _Scored:
    """One query set scored: each retriever's run, and its metrics and result rows."""

    queries: Queries
    ranked: dict[str, TopK]
    metrics: dict[str, dict[str, float]]  # retriever -> metric -> mean
    rows: list[pd.DataFrame]  # each retriever's rows of results.parquet


def _score_set(
    prepared: PreparedSet, vectors: np.ndarray, search: _Searches, score: ScoreParams
) -> _Scored:
    judged = prepared.judged
    ks, depth = score.ks, max(score.depth, max(score.ks))
    searched, retrievers = search.over(judged)
    queries = Queries(judged, prepared.texts, vectors)
    ranked = rank_all(retrievers, queries, depth)
    by_chunk = {name: found.indices for name, found in ranked.items()}
    if prepared.chunk_items is not None:  # documents ranked: rank chunks for the contexts
        by_chunk = search.chunk_rankings(prepared, vectors, depth)
    metrics, rows = {}, []
    for retriever, found in ranked.items():
        views = prepared.views if retriever in by_chunk else None
        values, frame = score_ranked(
            judged,
            retriever,
            found,
            ks,
            score.headline,
            views,
            by_chunk.get(retriever),
            prepared.chunk_view,
        )
        extra = RETRIEVERS[retriever].extra_metrics
        own = {}
        if extra is not None:
            context = RankingContext(queries, searched, ranked, depth, search.device)
            own = extra(found, context, ks)
            values.update(own)
        metrics[retriever] = values
        rows.append(frame)
        shown = [*score.headline, *(name for name in own if name.endswith(f"@{max(ks)}"))]
        log.info("%s/%s: %s", judged.name, retriever, _headline(values, shown))
    return _Scored(queries, ranked, metrics, rows)


class _Searches:
    """The retrievers over the chunks in a set's item order: one index per order, shared."""

    def __init__(self, corpus: Corpus, retrievers: RetrieverChoice) -> None:
        self.corpus, self.retrievers, self.device = corpus, retrievers, retrievers.device
        self._built: dict[bytes | None, tuple[Corpus, dict]] = {}

    def over(self, judged: ItemJudgments) -> tuple[Corpus, dict]:
        order = None if judged.rows is None else judged.rows.tobytes()
        if order not in self._built:
            searched = corpus_for(self.corpus, judged)
            chosen = self.retrievers
            built = build_retrievers(
                chosen.params, searched, self.device, chosen.loaded, chosen.names
            )
            self._built[order] = (searched, built)
        searched, retrievers = self._built[order]
        if not retrievers:
            raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
        return searched, retrievers

    def chunk_rankings(
        self, prepared: PreparedSet, vectors: np.ndarray, depth: int
    ) -> dict[str, np.ndarray]:
        """The runs over chunk items of a set whose items are documents; a retriever with no
        run of them (a run file of documents) gets no context view."""
        chunk_items = prepared.chunk_items
        assert chunk_items is not None
        _, retrievers = self.over(chunk_items)
        queries = Queries(chunk_items, prepared.texts, vectors)
        ranked = rank_all(retrievers, queries, depth)
        return {name: found.indices for name, found in ranked.items()}


def _chance(prepared: PreparedSet, score: ScoreParams) -> dict[str, float]:
    """Each metric's chance level on the set, with a warning for a headline metric a random
    ranking already scores above score.max_chance."""
    judged, depth = prepared.judged, max(score.depth, max(score.ks))
    chance = chance_means(
        judged, prepared.views, score.ks, depth, score.chance_rankings, score.chance_seed
    )
    for name in score.headline:
        level = chance.get(name)
        if level is not None and level > score.max_chance:
            log.warning(
                "warning: %s: a random ranking of its %d %s scores %s %.3g, above "
                "score.max_chance %.3g: more documents%s",
                judged.name,
                chance[N_DOCUMENTS_KEY if name.startswith("doc_") else N_ITEMS_KEY],
                "documents" if name.startswith("doc_") else "items",
                name,
                level,
                score.max_chance,
                _remedy(name),
            )
    return chance


def _remedy(metric: str) -> str:
    if metric.startswith("context_"):
        return ", or a smaller budget"
    return ", or smaller k" if "@" in metric else ""


def golden_exports(queries: Queries, chunks: pd.DataFrame) -> dict[Path, str]:
    """The golden set in BEIR format: the chunks as corpus, the questions, their judgments."""
    beir = paths.EXPORT / "beir"
    judged = queries.judged
    return {
        beir / "corpus.jsonl": beir_corpus(chunks),
        beir / "queries.jsonl": beir_queries(judged.qids, queries.texts),
        beir / "qrels" / "test.tsv": beir_qrels(judged.qids, judged.qrels, judged.item_ids),
    }


def _worst_misses(
    score: ScoreParams, prepared: PreparedSet, ranked: dict[str, TopK], texts: list[str]
) -> str:
    return worst_misses(
        prepared.questions.table,
        prepared.judged,
        ranked,
        texts,
        score.worst_misses,
        score.worst_misses_chunks,
        score.worst_misses_chars,
    )


def _headline(values: dict[str, float], names: list[str]) -> str:
    shown = [*names, "n_queries"]
    return ", ".join(f"{name} {values[name]:.4g}" for name in shown if name in values)
