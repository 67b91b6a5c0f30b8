"""Ranked lists as arrays, the form a run takes on both sides of the boundary: :class:`TopK`
holds each query's best item indices and their scores (goldenset.retrieval.run.Run wraps one),
the helpers that build and read them, and :func:`rank_run`, which orders a scored run dict as
trec_eval does. numpy alone: the evaluator and its public ``evaluate`` need no torch.

Ties: equal scores rank by ascending item index everywhere but :func:`rank_run`, which follows
trec_eval (descending id)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from goldenset.core.errors import GoldensetError

# Scores (or table cells) held per block of query rows.
BLOCK_BUDGET_BYTES = 256 * 2**20
# first_of_each sorts when the cells outnumber the entries this many times (measured: a table
# of 300 x 50,000 cells takes 15 ms where sorting 30,000 entries takes 1)
SPARSE_CELLS = 8


@dataclass(frozen=True)
class TopK:
    """Best items of each query: ``indices`` int64 and ``scores`` float32, (n_queries, k').

    Sorted by descending score, ties by ascending index; k' = min(k, number of items or groups).
    """

    indices: np.ndarray
    scores: np.ndarray


def ranked_rows(
    rows: np.ndarray, items: np.ndarray, scores: np.ndarray, n_queries: int, depth: int
) -> TopK:
    """Entries already sorted by row then rank -> (n_queries, depth) lists, -1 padded."""
    found = padded(n_queries, depth)
    first = np.searchsorted(rows, np.arange(n_queries))
    position = np.arange(rows.size) - first[rows]
    keep = position < depth
    found.indices[rows[keep], position[keep]] = items[keep]
    found.scores[rows[keep], position[keep]] = scores[keep]
    return found


def padded(n_queries: int, depth: int) -> TopK:
    return TopK(
        indices=np.full((n_queries, depth), -1, dtype=np.int64),
        scores=np.full((n_queries, depth), -np.inf, dtype=np.float32),
    )


def row_ranges(n_rows: int, width: int) -> list[tuple[int, int]]:
    """Ranges of rows [first, last) whose (rows x width) table of 8-byte cells fits the budget."""
    rows = max(1, BLOCK_BUDGET_BYTES // (8 * max(width, 1)))
    return [(first, min(first + rows, n_rows)) for first in range(0, n_rows, rows)]


def entries_of(row: np.ndarray, first: int, last: int) -> slice:
    """The entries of rows [first, last), entries sorted by row."""
    start, stop = np.searchsorted(row, [first, last])
    return slice(int(start), int(stop))


def rank_run(
    run: Mapping[str, Mapping[str, float]],
    item_ids: Sequence[str],
    query_ids: Sequence[str] | None = None,
    depth: int | None = None,
) -> np.ndarray:
    """Order a scored run as trec_eval does: score descending, ties by item id descending.

    ``item_ids[i]`` is the id of item index i. Rows follow ``query_ids`` (default: the run's
    order); a query absent from the run gets an empty row. ``depth`` defaults to the longest
    result list; longer lists are cut, shorter ones padded with -1.
    """
    index_of = {str(item): position for position, item in enumerate(item_ids)}
    query_ids = list(run) if query_ids is None else list(query_ids)
    if depth is None:
        depth = max((len(run.get(qid, {})) for qid in query_ids), default=0)
    ranked = np.full((len(query_ids), depth), -1, dtype=np.int64)
    for row, qid in enumerate(query_ids):
        scored = sorted(run.get(qid, {}).items(), key=lambda pair: str(pair[0]), reverse=True)
        scored.sort(key=lambda pair: -float(pair[1]))  # stable: id-descending ties survive
        for column, (item, _) in enumerate(scored[:depth]):
            position = index_of.get(str(item))
            if position is None:
                raise GoldensetError(f"run for query {qid!r} ranks unknown item id {item!r}")
            ranked[row, column] = position
    return ranked


def first_of_each(row: np.ndarray, item: np.ndarray, n_rows: int, n_items: int) -> np.ndarray:
    """The entries that are their (row, item)'s first, entries given in (row, rank) order: an
    item at its best place (a document at its best chunk, a fused id at its best run).

    Few entries for the cells: sorting their keys. Many: a table of each cell's first position,
    a block of rows at a time, linear in the cells. Both keep the same entries."""
    keep = np.zeros(row.size, dtype=bool)
    if row.size * SPARSE_CELLS < n_rows * n_items:
        _, first = np.unique(row * n_items + item, return_index=True)
        keep[first] = True
        return keep
    for first, last in row_ranges(n_rows, n_items):
        entries = entries_of(row, first, last)
        if entries.start == entries.stop:
            continue
        cell = (row[entries] - first) * n_items + item[entries]
        position = np.arange(entries.start, entries.stop)
        table = np.full((last - first) * n_items, row.size, dtype=np.int64)
        np.minimum.at(table, cell, position)
        keep[entries] = table[cell] == position
    return keep


def rank_score(score: float | None, rank: int) -> float:
    """The score of the item at 1-based ``rank`` of a listed answer: its own, or 1/rank when
    the list gives none (the team's callable, a store), which keeps the list's order."""
    return 1.0 / rank if score is None else float(score)
