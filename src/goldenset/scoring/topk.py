"""Exact top-k search over score blocks, with memory bounded by a block of query rows.

An exact retriever is a :class:`ScoreSource` (goldenset.scoring.retrievers: dense, bm25): it hands
out the full score matrix one block of query rows at a time. :func:`top_k` keeps the k best items
(or item groups) of every query without ever sorting a whole row. :class:`TopK` holds the ranked
lists every retriever's run holds (goldenset.scoring.retrievers.Run), and the functions after
it build them.

Ties: equal scores rank by ascending item (or group) index, also across the k-th place, so the
result does not depend on block size or thread timing. NaN scores count as -inf.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from goldenset.core.errors import GoldensetError

# Scores held per block of query rows (the selection adds about a tenth of that).
BLOCK_BUDGET_BYTES = 256 * 2**20
# Blocks smaller than this many scores are selected in one thread.
PARALLEL_MIN_SCORES = 2**22


class ScoreSource(Protocol):
    """Scores of every query against every item, computed a block of query rows at a time.

    A source may also offer ``scores_into(rows, out) -> out``, writing the same scores into a
    given float32 array: top_k then reuses one buffer for every block.
    """

    @property
    def n_queries(self) -> int: ...

    @property
    def n_items(self) -> int: ...

    def scores(self, rows: slice) -> np.ndarray:
        """float32 (rows, n_items): higher means more relevant."""
        ...


def resolve_device(name: str) -> torch.device:
    """score.device: auto is a GPU when torch sees one, else the CPU; cuda without one is an
    error (a silent fall-back would hide a cluster set up wrongly)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise GoldensetError(
            "score.device is cuda but torch sees no GPU: install a CUDA build of torch, "
            "or set score.device to auto or cpu"
        )
    return torch.device(name)


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


def top_k(
    source: ScoreSource,
    k: int,
    *,
    groups: np.ndarray | None = None,
    block_rows: int | None = None,
    progress: bool = False,
) -> TopK:
    """Exact top k per query, computed over blocks of query rows.

    ``groups``: start offsets of contiguous item groups (e.g. the chunks of one document);
    a group scores the max of its items and results are group indices.
    ``block_rows``: query rows per block; by default as many as fit ``BLOCK_BUDGET_BYTES``.
    """
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    n_queries, n_items = source.n_queries, source.n_items
    if groups is not None:
        groups = _checked_groups(groups, n_items)
    n_columns = n_items if groups is None else len(groups)
    kept = min(k, n_columns)
    if block_rows is None:
        block_rows = block_rows_for(n_items)
    indices = np.empty((n_queries, kept), dtype=np.int64)
    scores = np.empty((n_queries, kept), dtype=np.float32)
    # One buffer for every block when the source can fill it: fresh pages cost a page fault
    # each, which is a fifth of a dense block's time.
    fill = getattr(source, "scores_into", None)
    buffer = np.empty((min(block_rows, n_queries), n_items), np.float32) if fill else None
    starts = range(0, n_queries, block_rows)
    threads = max(1, torch.get_num_threads())
    with ThreadPoolExecutor(threads) as pool:
        for start in tqdm(starts, desc="top-k", unit="block", disable=not progress):
            rows = slice(start, min(start + block_rows, n_queries))
            if fill is not None:
                block = fill(rows, buffer[: rows.stop - rows.start])
            else:
                block = np.asarray(source.scores(rows), dtype=np.float32)
            if groups is not None and n_columns:
                # fmax skips NaN, so a group's score is its best real item score.
                block = np.fmax.reduceat(block, groups, axis=1)
            indices[rows], scores[rows] = _select_in_parallel(pool, threads, block, kept)
    return TopK(indices=indices, scores=scores)


def _select_in_parallel(
    pool: ThreadPoolExecutor, threads: int, block: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """select_top_k over row slices in threads (numpy drops the GIL in its loops)."""
    parts = min(threads, block.shape[0], max(1, block.size // PARALLEL_MIN_SCORES))
    if parts <= 1:
        return select_top_k(block, k)
    bounds = np.linspace(0, block.shape[0], parts + 1).astype(int)
    slices = [block[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]
    results = list(pool.map(select_top_k, slices, [k] * parts))
    return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])


def block_rows_for(n_items: int, budget_bytes: int = BLOCK_BUDGET_BYTES) -> int:
    """Query rows whose float32 scores fit the budget (at least one)."""
    return max(1, budget_bytes // (4 * max(n_items, 1)))


def row_ranges(n_rows: int, width: int) -> list[tuple[int, int]]:
    """Ranges of rows [first, last) whose (rows x width) table of 8-byte cells fits the budget."""
    rows = max(1, BLOCK_BUDGET_BYTES // (8 * max(width, 1)))
    return [(first, min(first + rows, n_rows)) for first in range(0, n_rows, rows)]


def entries_of(row: np.ndarray, first: int, last: int) -> slice:
    """The entries of rows [first, last), entries sorted by row."""
    start, stop = np.searchsorted(row, [first, last])
    return slice(int(start), int(stop))


def _checked_groups(groups: np.ndarray, n_items: int) -> np.ndarray:
    groups = np.asarray(groups, dtype=np.int64)
    if n_items == 0 and groups.size == 0:
        return groups
    valid = (
        groups.ndim == 1
        and groups.size > 0
        and groups[0] == 0
        and bool(np.all(np.diff(groups) > 0))
        and groups[-1] < n_items
    )
    if not valid:
        raise ValueError(
            "groups must be strictly increasing start offsets from 0, each below the "
            f"number of items ({n_items})"
        )
    return groups


def select_top_k(block: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k best columns of each row, best first, ties by lower index."""
    n_rows, n_columns = block.shape
    if k >= n_columns or n_rows == 0:
        return _select_rows_exactly(block, np.arange(n_rows), min(k, n_columns))
    # Split the columns into groups; a row's k best group maxima are k real scores, so the
    # k-th of them is a lower bound of the row's k-th score, and only groups whose max reaches
    # it can hold the top k. With spread-out groups that is about k groups out of thousands,
    # so one pass (the group max) replaces a selection over every column.
    group_size = max(1, min(32, n_columns // (8 * k)))
    group_count = n_columns // group_size
    grouped = group_count * group_size
    # Group j holds columns j, j + group_count, ...: its max runs over contiguous slices.
    # A strided view, not a reshape: that would copy the block when columns are left over.
    row_stride, column_stride = block.strides
    by_group = np.lib.stride_tricks.as_strided(
        block,
        shape=(n_rows, group_size, group_count),
        strides=(row_stride, group_count * column_stride, column_stride),
        writeable=False,
    )
    maxima = np.fmax.reduce(by_group, axis=1)  # fmax skips NaN, which ranks as -inf
    maxima[np.isnan(maxima)] = -np.inf  # else partition would rank an all-NaN group first
    lower = np.partition(maxima, group_count - k, axis=1)[:, group_count - k]
    rows, groups = np.nonzero(maxima >= lower[:, None])
    # Rows with a wide tie at the bound (e.g. BM25 zeros) or a bound of -inf (ties with NaN
    # scores) take the exact single-row path instead.
    awkward = (np.bincount(rows, minlength=n_rows) > 4 * k + 64) | (lower == -np.inf)
    keep = ~awkward[rows]
    rows, groups = rows[keep], groups[keep]
    members = by_group[rows, :, groups]  # (reaching groups, group_size)
    hit, member = np.nonzero(members >= lower[rows, None])
    rows, columns, values = rows[hit], groups[hit] + group_count * member, members[hit, member]
    fast = np.flatnonzero(~awkward)
    if grouped < n_columns:  # the few columns left over are candidates of every row
        tail = block[fast, grouped:]
        tail_rows, tail_columns = np.nonzero(tail >= lower[fast, None])
        rows = np.concatenate((rows, fast[tail_rows]))
        columns = np.concatenate((columns, grouped + tail_columns))
        values = np.concatenate((values, tail[tail_rows, tail_columns]))
    indices = np.empty((n_rows, k), dtype=np.int64)
    scores = np.empty((n_rows, k), dtype=np.float32)
    indices[fast], scores[fast] = _best_candidates(rows, columns, values, fast, k, n_columns)
    slow = np.flatnonzero(awkward)
    if slow.size:
        indices[slow], scores[slow] = _select_rows_exactly(block, slow, k)
    return indices, scores


def _best_candidates(
    rows: np.ndarray,
    columns: np.ndarray,
    values: np.ndarray,
    row_ids: np.ndarray,
    k: int,
    n_columns: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Top k of each row's candidates (at least k per row), by score then lower column."""
    if row_ids.size == 0:
        return np.empty((0, k), dtype=np.int64), np.empty((0, k), dtype=np.float32)
    slot_of_row = np.full(int(row_ids.max()) + 1, -1, dtype=np.int64)
    slot_of_row[row_ids] = np.arange(row_ids.size)
    slots = slot_of_row[rows]
    order = np.argsort(slots, kind="stable")
    slots, columns, values = slots[order], columns[order], values[order]
    counts = np.bincount(slots, minlength=row_ids.size)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    position = np.arange(slots.size) - first[slots]
    # Padding sorts after every real candidate: +inf negated score, then a column past the end.
    negated = np.full((row_ids.size, int(counts.max())), np.inf, dtype=np.float32)
    padded_columns = np.full(negated.shape, n_columns, dtype=np.int64)
    negated[slots, position] = -values
    padded_columns[slots, position] = columns
    best = np.lexsort((padded_columns, negated), axis=1)[:, :k]
    return (
        np.take_along_axis(padded_columns, best, axis=1),
        -np.take_along_axis(negated, best, axis=1),
    )


def _select_rows_exactly(
    block: np.ndarray, row_ids: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Row by row, linear time: everything above the k-th value, then its ties by lower index."""
    indices = np.empty((row_ids.size, k), dtype=np.int64)
    scores = np.empty((row_ids.size, k), dtype=np.float32)
    if k == 0:
        return indices, scores
    n_columns = block.shape[1]
    for slot, row in enumerate(row_ids):
        values = np.where(np.isnan(block[row]), np.float32(-np.inf), block[row])
        kth = np.partition(values, n_columns - k)[n_columns - k]
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[: k - above.size]
        chosen = np.sort(np.concatenate((above, tied)))
        order = np.argsort(-values[chosen], kind="stable")
        indices[slot] = chosen[order]
        scores[slot] = values[chosen[order]]
    return indices, scores
