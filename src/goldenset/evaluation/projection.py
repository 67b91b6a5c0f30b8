"""A run read against one view of a query set: its ids become the items the set is judged over.

A retriever's run names ids (goldenset.retrieval.retrievers.Run); the evaluator alone knows what
they stand for. :class:`RunItems` holds, for one view of a set, the item of every id it knows:
each chunk's item (itself, the class of chunks of equal text it belongs to, or its document)
and, for a view of documents, each document's own id. :meth:`RunItems.project` turns a run into
item indices best first, an item at the rank of its first id (a document at its best chunk).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import TopK, first_of_each, ranked_rows
from goldenset.retrieval.run import Run


class RunItems:
    """The items of one view of a query set, as a run's ids name them.

    ``chunk_ids``: the corpus' chunk ids (the list goldenset's own retrievers rank, by identity);
    ``of_chunk``: the item of each chunk row; ``item_ids``: the items' own ids (documents') that
    a run may name too, or None when the items are named by their chunks only."""

    def __init__(
        self,
        name: str,
        qids: list[str],
        chunk_ids: list[str],
        of_chunk: np.ndarray,
        n_items: int,
        item_ids: Sequence[str] | None = None,
    ) -> None:
        self.name, self.qids, self.chunk_ids, self.n_items = name, qids, chunk_ids, n_items
        self.of_chunk = np.asarray(of_chunk, dtype=np.int64)
        self.item_ids = item_ids
        self.unit = "chunk" if item_ids is None else "document"
        self._identity = bool(np.array_equal(self.of_chunk, np.arange(len(chunk_ids))))

    @cached_property
    def _item_of(self) -> dict[str, int]:
        item_of = dict(zip(self.chunk_ids, self.of_chunk.tolist(), strict=True))
        for item, item_id in enumerate(self.item_ids or ()):
            item_of.setdefault(item_id, item)
        return item_of

    def names_chunks(self, ids: Sequence[str]) -> bool:
        """``ids`` is the corpus' chunk list itself (a copy compares element by element)."""
        return ids is self.chunk_ids or (
            isinstance(ids, list) and len(ids) == len(self.chunk_ids) and ids == self.chunk_ids
        )

    def positions(self, ids: Sequence[str]) -> np.ndarray:
        """The item of each id, -1 for an id this view does not know."""
        if self.names_chunks(ids):
            return self.of_chunk
        item_of = self._item_of
        return np.array([item_of.get(item, -1) for item in ids], dtype=np.int64)

    def project(self, run: Run, depth: int, origin: str) -> TopK | None:
        """Each query's items best first, up to ``depth`` (-1 padded), an item at the rank of
        its first id; None when the run names none of these items (a run file of documents read
        against chunks). ``origin``: who made the run, for the error naming an unknown id."""
        found, width = run.found, min(depth, self.n_items)
        if self._identity and self.names_chunks(run.ids) and _distinct(found.indices):
            return _cut(found, width)
        positions = self.positions(run.ids)
        items = np.append(positions, -1)[found.indices]  # padding (-1) stays -1
        listed = found.indices >= 0
        known = items >= 0
        if listed.any() and not known.any():
            return None
        unknown = np.argwhere(listed & ~known)
        if unknown.size:
            row, column = unknown[0]
            raise GoldensetError(
                f"{origin} ranks unknown item id {run.ids[found.indices[row, column]]!r} for "
                f"query {self.qids[row]!r}; {self.name} queries rank {self.unit} ids"
            )
        row, column = np.nonzero(known)
        item = items[row, column]
        first = first_of_each(row, item, len(found.indices), self.n_items)
        scores = found.scores[row[first], column[first]]
        return ranked_rows(row[first], item[first], scores, len(found.indices), width)


def _distinct(indices: np.ndarray) -> bool:
    """No query lists an id twice (exact searches never do; a team's callable might)."""
    if indices.shape[1] < 2:
        return True
    ordered = np.sort(indices, axis=1)
    return not bool(((ordered[:, 1:] == ordered[:, :-1]) & (ordered[:, 1:] >= 0)).any())


def _cut(found: TopK, width: int) -> TopK:
    """The first ``width`` places, padding scored -inf."""
    indices = found.indices[:, :width]
    scores = np.where(indices >= 0, found.scores[:, :width], np.float32(-np.inf))
    return TopK(indices, scores.astype(np.float32, copy=False))
