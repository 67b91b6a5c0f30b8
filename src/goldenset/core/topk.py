"""Exact top-k search over score blocks, with memory bounded by a block of query rows.

An exact retriever is a :class:`ScoreSource` (goldenset.retrieval.retrievers: dense, bm25): it hands
out the full score matrix one block of query rows at a time. :func:`top_k` keeps the k best items
(or item groups) of every query without ever sorting a whole row, as a TopK
(goldenset.core.ranked, the lists a goldenset.retrieval.run.Run holds).

Ties: equal scores rank by ascending item (or group) index, also across the k-th place, so the
result does not depend on block size or thread timing. NaN scores count as -inf.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from goldenset.core.cover import Cover, covering_width, deepen, select_covering
from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import (
    BLOCK_BUDGET_BYTES,
    TopK,
    padded,
)
from goldenset.core.selection import select_top_k

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


def top_k(
    source: ScoreSource,
    k: int,
    *,
    groups: np.ndarray | None = None,
    cover: Cover | None = None,
    block_rows: int | None = None,
    progress: bool = False,
) -> TopK:
    """Exact top k per query, computed over blocks of query rows.

    ``groups``: start offsets of contiguous item groups (e.g. the chunks of one document);
    a group scores the max of its items and results are group indices.
    ``cover``: the items' documents and distinct texts; each query then gets the best item of
    each of its k best documents and its k best distinct texts, at most 2k items
    (goldenset.core.cover).
    ``block_rows``: query rows per block; by default as many as fit ``BLOCK_BUDGET_BYTES``.
    """
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    n_queries, n_items = source.n_queries, source.n_items
    if groups is not None:
        groups = _checked_groups(groups, n_items)
    n_columns = n_items if groups is None else len(groups)
    kept = min(k, n_columns)
    select: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]] = select_top_k
    if cover is not None and not cover.trivial:
        select, kept = partial(select_covering, cover=cover), covering_width(k, n_items)
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
            selected = _select_in_parallel(pool, threads, block, min(k, n_columns), select)
            indices[rows], scores[rows] = selected
    return TopK(indices=indices, scores=scores)


def _select_in_parallel(
    pool: ThreadPoolExecutor,
    threads: int,
    block: np.ndarray,
    k: int,
    select: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray]:
    """``select`` (select_top_k) over row slices in threads (numpy drops the GIL in its loops)."""
    parts = min(threads, block.shape[0], max(1, block.size // PARALLEL_MIN_SCORES))
    if parts <= 1:
        return select(block, k)
    bounds = np.linspace(0, block.shape[0], parts + 1).astype(int)
    slices = [block[start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]
    results = list(pool.map(select, slices, [k] * parts))
    return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])


def block_rows_for(n_items: int, budget_bytes: int = BLOCK_BUDGET_BYTES) -> int:
    """Query rows whose float32 scores fit the budget (at least one)."""
    return max(1, budget_bytes // (4 * max(n_items, 1)))


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


def deepened_run(
    search: Callable[[list[int], int], TopK], n_rows: int, depth: int, most: int, cover: Cover
) -> tuple[TopK, int]:
    """goldenset.core.cover.deepen over a search that answers rows with a TopK (ann, a
    team's callable): the run, as wide as its widest answer, and the rows still short at
    ``most``."""

    def ask(rows: list[int], k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        found = search(rows, k)
        return list(zip(found.indices, found.scores, strict=True))

    def short(answer: tuple[np.ndarray, np.ndarray], asked: int) -> bool:
        return cover.short(answer[0], depth, asked)

    answers, cut = deepen(ask, n_rows, depth, most, short)
    run = padded(n_rows, max((len(indices) for indices, _ in answers), default=0))
    for row, (indices, scores) in enumerate(answers):
        run.indices[row, : len(indices)], run.scores[row, : len(scores)] = indices, scores
    return run, cut
