"""embed: chunks and the questions of every query set (goldenset.corpus.querysets) -> vectors,
through the embedding cache."""

from __future__ import annotations

import logging

import pandas as pd
from pydantic import Field

from goldenset.core.params import EmbedParams, StageParams
from goldenset.core.paths import CHUNKS, EMBEDDINGS
from goldenset.core.stage import run_stage
from goldenset.core.vectors import write_vectors
from goldenset.corpus.queries import FIXED_FROM
from goldenset.corpus.querysets import QuerySet, read_query_sets
from goldenset.embedding.sets import embed_sets

log = logging.getLogger("goldenset")


class EmbedStage(StageParams):
    embed: EmbedParams = Field(default_factory=EmbedParams)


def main(params: EmbedStage) -> None:
    chunks = pd.read_parquet(CHUNKS, columns=["chunk_id", "text"])
    query_sets = read_query_sets(judgments=False)
    embedded = embed_sets(params.embed, chunks, query_sets)
    for name, vectors in embedded.vectors.items():
        write_vectors(EMBEDDINGS, name, embedded.ids[name], vectors)
    counted = ", ".join(
        f"{len(questions)} {name} questions" for name, questions in query_sets.items()
    )
    log.info(
        "embed: %d chunks, %s%s; %d vectors encoded (the cache held %d before)",
        len(chunks),
        counted,
        fixed_note(query_sets),
        embedded.encoded,
        embedded.cached,
    )


def fixed_note(query_sets: dict[str, QuerySet]) -> str:
    """ " (10 of them fixed by a person)" of the golden set; empty when none is: a fixed
    question's new text is what this stage encodes after a review, the rest is cached."""
    fixed = sum(
        int(questions.table[FIXED_FROM].notna().sum())
        for questions in query_sets.values()
        if questions.entry.golden and FIXED_FROM in questions.table
    )
    if not fixed:
        return ""
    return f" ({fixed} golden question{'s' if fixed > 1 else ''} fixed by a person)"


if __name__ == "__main__":
    run_stage(main, EmbedStage)
