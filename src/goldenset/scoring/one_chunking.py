"""Every retriever's run over one chunking, evaluated on every query set projected onto it: the
one path goldenset's own chunking and a store's take (goldenset.scoring.configuration picks the
retrievers of each).

A retriever is handed a set's questions and a depth, and returns a run keyed by id
(goldenset.retrieval.retrievers.Run); it never sees judgments. Here, and only here, the two meet:
each run is read against the set's items (goldenset.evaluation.projection) and scored against its
judgments by goldenset.evaluation.evaluator, once per set. Chance levels belong to goldenset's own
chunking.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import TopK
from goldenset.corpus.querysets import QuerySet
from goldenset.evaluation.evaluator import N_DOCUMENTS_KEY, N_ITEMS_KEY, chance_means, score_ranked
from goldenset.evaluation.measures import exact_measures, named
from goldenset.evaluation.projection import RunItems
from goldenset.evaluation.qrels import Qrels
from goldenset.retrieval.params import RetrieversSection
from goldenset.retrieval.retrievers import (
    RETRIEVERS,
    Corpus,
    Queries,
    Run,
    build_references,
    build_retrievers,
    rank_all,
)
from goldenset.retrieval.trec import trec_run
from goldenset.scoring.exports import beir_corpus, beir_qrels, beir_queries
from goldenset.scoring.inputs import Chunking
from goldenset.scoring.outputs import ChunkingScores
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.prepared import PreparedSet, prepare_sets
from goldenset.scoring.reports import worst_misses

log = logging.getLogger("goldenset")


class VanishedRun(GoldensetError):
    """A run that names none of a set's items: scoring it would drop it from every output."""

    def __init__(self, retriever: str, message: str) -> None:
        super().__init__(message)
        self.retriever = retriever


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
    query_sets: dict[str, QuerySet],
    query_vectors: dict[str, np.ndarray],
    retrievers: RetrieverChoice,
    score: ScoreParams,
) -> ChunkingScores:
    """The retrievers' runs over the chunking on every query set, scored."""
    chunks = chunking.chunks
    corpus = Corpus(
        chunks["chunk_id"].tolist(),
        chunks["text"].tolist(),
        chunking.vectors,
        chunks["doc_id"].tolist(),
    )
    scored, rankers = _built(corpus, retrievers)
    depth = max(score.depth, max(score.ks))
    part = ChunkingScores()
    for prepared in prepare_sets(chunking, query_sets, score):
        judged = prepared.judged
        queries = Queries(judged.name, judged.qids, prepared.texts, query_vectors[judged.name])
        runs = rank_all(rankers, queries, depth)  # depth documents and texts each
        result = _score_set(prepared, runs, scored, score)
        if chunking.store is None:
            part.chance[judged.name] = _chance(prepared, score)
        if result.metrics:
            part.metrics[judged.name] = result.metrics
        part.rows.extend(result.rows)
        for retriever, found in result.ranked.items():
            part.exports[paths.EXPORT / "runs" / f"{judged.name}.{retriever}.trec"] = trec_run(
                judged.qids, judged.item_ids, found, retriever
            )
        if prepared.questions.entry.golden:
            if chunking.store is None:
                part.exports.update(golden_exports(judged, prepared.texts, chunks))
            text_of = dict(zip(corpus.chunk_ids, corpus.texts, strict=True))
            texts = [text_of[item] for item in judged.item_ids]
            part.misses = _worst_misses(score, prepared, result.ranked, texts)
    return part


def _built(corpus: Corpus, retrievers: RetrieverChoice) -> tuple[set[str], dict]:
    """The retrievers scored (their names), and every one that ranks: those, then the exact
    searches they approximate that are off (ranked as references, not scored)."""
    params, device = retrievers.params, retrievers.device
    built = build_retrievers(params, corpus, device, retrievers.loaded, retrievers.names)
    if not built:
        raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
    references = build_references(params, corpus, built, device)
    return set(built), {**built, **references}


@dataclass(frozen=True)
class _Scored:
    """One query set scored: each retriever's run read as the set's items, and its metrics and
    result rows."""

    ranked: dict[str, TopK]
    metrics: dict[str, dict[str, float]]  # retriever -> metric -> mean
    rows: list[pd.DataFrame]  # each retriever's rows of results.parquet


def _score_set(
    prepared: PreparedSet, runs: Mapping[str, Run], scored: set[str], score: ScoreParams
) -> _Scored:
    judged = prepared.judged
    ks, depth = score.ks, max(score.depth, max(score.ks))
    read = _read_runs(prepared.items, runs, depth)
    ranked = {name: found for name, found in read.items() if name in scored}
    by_chunk = {name: found.indices for name, found in ranked.items()}
    if prepared.chunk_items is not None:  # documents ranked: the same runs as chunks, for contexts
        contexts = _read_contexts(
            prepared.chunk_items, {name: runs[name] for name in ranked}, depth
        )
        by_chunk = {name: found.indices for name, found in contexts.items()}
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
        own = _exact_metrics(retriever, found, read, ks)
        values.update(own)
        metrics[retriever] = values
        rows.append(frame)
        shown = [*score.headline, *(name for name in own if name.endswith(f"@{max(ks)}"))]
        log.info("%s/%s: %s", judged.name, retriever, _headline(values, shown))
    return _Scored(ranked, metrics, rows)


def _read_runs(items: RunItems, runs: Mapping[str, Run], depth: int) -> dict[str, TopK]:
    """Each run read as the set's items; a run that names none of them is an error (a run of
    documents for a set judged by chunks, a run file of another chunking's chunk ids)."""
    read = {}
    for name, run in runs.items():
        found = items.project(run, depth, f"retrievers.{name}")
        if found is None:
            raise VanishedRun(
                name,
                f"retrievers.{name}: its run names none of the {items.name} set's {items.unit} "
                f"ids; {items.name} questions rank {items.unit} ids (data/chunks.parquet's "
                "chunk_id for chunks, the qrels' doc_id for documents)",
            )
        read[name] = found
    return read


def _read_contexts(items: RunItems, runs: Mapping[str, Run], depth: int) -> dict[str, TopK]:
    """Each run of a set judged per document read as chunks, for its contexts: a run of
    documents names none, and leaves its contexts unmeasured, said in one line."""
    read = {}
    for name, run in runs.items():
        found = items.project(run, depth, f"retrievers.{name}")
        if found is None:
            log.warning(
                "warning: retrievers.%s ranks documents on %s, not chunks: its context views "
                "(context_*) are not measured there",
                name,
                items.name,
            )
        else:
            read[name] = found
    return read


def _exact_metrics(
    retriever: str, found: TopK, read: Mapping[str, TopK], ks: list[int]
) -> dict[str, float]:
    """An approximate search's measures against the exact search it approximates (ann against
    dense: recall_loss@k), both read as the set's items."""
    exact = read.get(RETRIEVERS[retriever].approximates or "")
    if exact is None:
        return {}
    return {
        name: measure.compute(found.indices, exact.indices, k)
        for name, measure, k in named(exact_measures(), ks)
    }


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


def golden_exports(judged: Qrels, texts: list[str], chunks: pd.DataFrame) -> dict[Path, str]:
    """The golden set in BEIR format: the chunks as corpus, the questions, their judgments."""
    beir = paths.EXPORT / "beir"
    return {
        beir / "corpus.jsonl": beir_corpus(chunks),
        beir / "queries.jsonl": beir_queries(judged.qids, texts),
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
