"""One configuration scored from the pipeline's files, in three edges: read, score, write.

:func:`read_score_inputs` reads every file the score stage reads, once, into
goldenset.scoring.inputs.ScoreInputs (the tokenizer's token starts and what a retriever reads
from outside, a run file or a module, included); :func:`score_inputs` scores every enabled
retriever on every query set in memory and touches no file; :func:`write_score_outputs` writes
goldenset.scoring.outputs.ScoreOutputs, each file atomically. The score stage, `goldenset
calibrate` (which builds its inputs from chunks and vectors it made in memory) and the
benchmarks call these, so no script re-implements scoring.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically, write_json, write_parquet
from goldenset.core.topk import resolve_device
from goldenset.core.vectors import CHUNK_VECTORS, read_vectors, read_vectors_of
from goldenset.corpus.places import PLACE
from goldenset.corpus.querysets import QuerySet, read_query_sets
from goldenset.retrieval.params import RetrieversSection
from goldenset.retrieval.retrievers import fusable, fusions, load_retrievers, stores
from goldenset.scoring.exports import beir_corpus
from goldenset.scoring.inputs import SCORED_CHUNK_COLUMNS, Chunking, ScoreInputs, own_chunking
from goldenset.scoring.one_chunking import RetrieverChoice, score_chunking
from goldenset.scoring.outputs import ChunkingScores, ScoreOutputs, gathered, with_fixed_from
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.reviewed import read_applied_counts
from goldenset.scoring.store_chunking import StoreChunking, ask_stores, asked_stores
from goldenset.scoring.tokens import document_token_starts


@dataclass(frozen=True)
class ProjectUpstream:
    """What every chunking and model of a project is scored against: its documents (doc_id,
    text) and its query sets, the golden set as people left it (the apply stage's)."""

    documents: pd.DataFrame
    query_sets: dict[str, QuerySet]
    counts: dict | None  # how the verdicts met the golden set (the apply stage's); None: none


def read_project_upstream(root: Path = Path(".")) -> ProjectUpstream:
    """A project's documents and query sets, and how people's verdicts met its golden set: the
    one reading of them that the score stage, calibrate and the benchmarks share."""
    documents, sets = read_upstream(root)
    return ProjectUpstream(documents, sets, read_applied_counts(root) or None)


def read_score_inputs(
    score: ScoreParams, retrievers: RetrieversSection, root: Path = Path(".")
) -> tuple[ScoreInputs, dict | None]:
    """The score stage's inputs under a project folder: chunks, every query set
    (read_project_upstream) and their vectors (data/embeddings, checked against the ids they
    belong to), the documents' token starts, what the enabled retrievers read from outside, and
    each enabled store asked (store_chunking.ask_stores: the network, at this edge); and how the
    verdicts met the golden set (None: no verdict)."""
    # with each chunk's place in a PDF or Word file where the chunk stage wrote it, for the BEIR
    # corpus export
    kept = pq.read_schema(root / paths.CHUNKS).names
    columns = [*SCORED_CHUNK_COLUMNS, *([PLACE] if PLACE in kept else [])]
    chunks = pd.read_parquet(root / paths.CHUNKS, columns=columns)
    chunk_vectors = read_vectors(
        root / paths.EMBEDDINGS, CHUNK_VECTORS, chunks["chunk_id"].tolist()
    )
    project = read_project_upstream(root)
    documents, sets = project.documents, project.query_sets
    chunked = documents[documents["doc_id"].isin(set(chunks["doc_id"]))]
    inputs = ScoreInputs(
        chunks,
        chunk_vectors,
        sets,
        {
            name: read_vectors_of(root / paths.EMBEDDINGS, name, questions.qids)
            for name, questions in sets.items()
            if len(questions)
        },
        document_token_starts(score.tokenizer, chunked),
        {},
        chunked,
    )
    return read_outside(inputs, score, retrievers), project.counts


def read_outside(
    inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection
) -> ScoreInputs:
    """The inputs with what the enabled retrievers read from outside (a run file, a callable and
    its cached answers), and each enabled store asked (store_chunking.ask_stores: the network,
    at this edge): the score stage's reading, and calibrate's, once for every run."""
    return ask_stores(replace(inputs, loaded=load_retrievers(retrievers)), score, retrievers)


def read_outside_of(
    upstream: ProjectUpstream,
    token_starts: dict[str, list[int]],
    score: ScoreParams,
    retrievers: RetrieversSection,
) -> dict[str, object]:
    """What the enabled retrievers read from outside for a project's documents and query sets,
    each store asked every question (read_outside): `goldenset calibrate` reads it once, before
    its first run."""
    loaded = load_retrievers(retrievers)
    query_sets, documents = upstream.query_sets, upstream.documents
    return asked_stores(loaded, query_sets, documents, token_starts, score, retrievers)


def read_upstream(root: Path = Path(".")) -> tuple[pd.DataFrame, dict[str, QuerySet]]:
    """What every chunking and model is scored against: the documents (doc_id, text) and every
    query set (goldenset.corpus.querysets), the golden set read once."""
    documents = pd.read_parquet(root / paths.DOCUMENTS, columns=["doc_id", "text"])
    return documents, read_query_sets(root)


def score_inputs(
    inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection
) -> ScoreOutputs:
    """Every enabled retriever on every query set of the inputs, scored; reads no file.

    goldenset's own retrievers are scored over its chunking; each store over its own, as
    goldenset.scoring.store_chunking.ask_stores placed its answers (its run) in the inputs."""
    device = resolve_device(score.device)
    own = [name for name in [*fusable(), *fusions()] if getattr(retrievers, name).enabled]
    parts: list[ChunkingScores] = []
    if own:
        chosen = RetrieverChoice(retrievers, own, inputs.loaded, device)
        parts.append(_score(own_chunking(inputs), inputs, chosen, score))
    for name in [name for name in stores() if getattr(retrievers, name).enabled]:
        asked = inputs.loaded[name]
        if not isinstance(asked, StoreChunking):
            raise GoldensetError(
                f"retrievers.{name}: a store is asked at the edge: read the inputs with "
                "read_score_inputs (or pass them through "
                "goldenset.scoring.store_chunking.ask_stores)"
            )
        chosen = RetrieverChoice(retrievers, [name], {name: asked.answers})
        part = _score(asked.chunking, inputs, chosen, score)
        part.exports[paths.store_corpus(name)] = beir_corpus(asked.chunking.chunks)
        part.placements[name] = asked.placement
        parts.append(part)
    if not parts:
        raise GoldensetError("retrievers: every retriever is disabled; enable at least one")
    outputs = gathered(parts, score)
    for golden in [questions for questions in inputs.query_sets.values() if questions.entry.golden]:
        outputs.results = with_fixed_from(outputs.results, golden)
    return outputs


def _score(
    chunking: Chunking, inputs: ScoreInputs, chosen: RetrieverChoice, score: ScoreParams
) -> ChunkingScores:
    return score_chunking(chunking, inputs.query_sets, inputs.query_vectors, chosen, score)


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


def save_answers(loaded: Mapping[str, object]) -> None:
    """The answers a retriever that lives outside the pipeline gave this run (what it read from
    outside, ScoreInputs.loaded), added to its cache (retrievers.external.cache_dir): an
    unchanged re-run asks nothing again."""
    for read in loaded.values():
        cache = getattr(read, "cache", None)
        if cache is not None:
            cache.save()
