"""What a retriever is given and what it returns: the :class:`Corpus` it searches, a query set's
:class:`Queries` and the :class:`Run` keyed by id it answers with, as in BEIR and ranx. The
evaluator (goldenset.evaluation) reads a run's ids against its qrels; nothing here knows of
judgments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from goldenset.core.cover import Cover
    from goldenset.core.ranked import TopK


@dataclass(frozen=True)
class Corpus:
    """The chunks every retriever searches, row i of each field belonging to chunk i; a
    document's chunks are contiguous (``doc_ids`` None: a document a chunk)."""

    chunk_ids: list[str]
    texts: list[str]
    vectors: np.ndarray
    doc_ids: list[str] | None = None

    @cached_property
    def cover(self) -> Cover:
        """Its documents and distinct texts, which a run of depth d ranks d of each."""
        from goldenset.core.cover import Cover

        return Cover.of(self.doc_ids, self.texts)


@dataclass(frozen=True)
class Queries:
    """One query set's questions, row i of each field belonging to question i: all a retriever
    is given besides a depth. It never sees their judgments nor the items they are judged over:
    those meet its run in the evaluator (goldenset.scoring.one_chunking)."""

    name: str  # the query set's name (synthetic, real...), for messages
    qids: list[str]
    texts: list[str]
    vectors: np.ndarray


@dataclass(frozen=True)
class Run:
    """What every retriever returns, keyed by id: row q of ``found`` ranks query q's best ids,
    best first, ``ids[found.indices[q, r]]`` scored ``found.scores[q, r]`` (-1 pads a short list).

    ``ids`` is the retriever's own list (its corpus' chunk ids, or the ids a run file holds),
    in whatever order it keeps them: the evaluator reads ids, never positions."""

    ids: Sequence[str]
    found: TopK
