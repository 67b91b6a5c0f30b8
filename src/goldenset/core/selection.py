"""Selecting the k best columns of each row of a score block, without sorting whole rows.

Ties: equal scores rank by ascending column; NaN scores count as -inf.
"""

from __future__ import annotations

import numpy as np


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
