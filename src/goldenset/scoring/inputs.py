"""What scoring reads: :class:`ScoreInputs`, every file of the score stage read once (or made in
memory by `goldenset calibrate`), and :class:`Chunking`, what a run's items are cut from.

goldenset.scoring.configuration reads the files into them (and writes the outputs); this module
and everything scoring calls below it take and return values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from goldenset.corpus.querysets import QuerySet

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


@dataclass(frozen=True)
class Chunking:
    """What a run's items are cut from: goldenset's own chunks, or a store's passages placed in
    their documents (goldenset.scoring.store_chunking). Its query sets are projected onto it
    (goldenset.scoring.prepared); what it can list decides the views."""

    chunks: pd.DataFrame  # SCORED_CHUNK_COLUMNS; a document's chunks contiguous
    vectors: np.ndarray  # goldenset's embeddings of the chunks; no columns for a store's
    token_starts: dict[str, list[int]]
    documents: pd.DataFrame | None = None  # doc_id, text
    # every chunk of it is known: a set judged by evidence spans has a chunk view (its relevant
    # chunks, ideal DCG and recall denominators need every chunk of a document)
    listed: bool = True
    # None: goldenset's own (its chance levels and its BEIR export); else the store it is of
    store: str | None = None


def own_chunking(inputs: ScoreInputs) -> Chunking:
    """goldenset's chunking, as the inputs hold it."""
    return Chunking(inputs.chunks, inputs.chunk_vectors, inputs.token_starts, inputs.documents)
