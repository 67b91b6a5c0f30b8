"""Exact runs that rank ``depth`` documents and ``depth`` distinct texts, fetching at most twice
``depth`` chunks a question.

The evaluator reads one run as documents (each at its best chunk) and as chunks (chunks of equal
text as one). Ranking the top ``depth x spread`` chunks covers both, but spread is the largest
document or the largest set of equal texts: one 2,000-chunk manual, or 300 copies of a footer,
would make every question fetch thousands. Two exact selections cover the same items instead:
the best chunk of each of the ``depth`` best documents (a document scores its best chunk), and
the ``depth`` best chunks among the first chunk of each distinct text (an exact retriever scores
equal texts alike, and the evaluator reads a tie at the lower index). Their union, best first
and ties by lower index, is read by the evaluator exactly as the exhaustive ranking is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import first_of_each, ranked_rows
from goldenset.core.selection import select_top_k

A = TypeVar("A")  # one question's answer


@dataclass(frozen=True)
class Cover:
    """The corpus' documents (the start row of each one's contiguous chunks; None: a document a
    chunk) and its distinct texts (the first row of each; None: every text distinct), with the
    document and the text of every chunk."""

    doc_starts: np.ndarray | None
    firsts: np.ndarray | None
    doc_of: np.ndarray
    text_of: np.ndarray

    @property
    def trivial(self) -> bool:
        """A document a chunk, every text distinct: the k best chunks cover both."""
        return self.doc_starts is None and self.firsts is None

    @classmethod
    def of(cls, doc_ids: Sequence[str] | None, texts: Sequence[str]) -> Cover:
        _, first_rows, text_of = np.unique(
            np.asarray(texts, dtype=object), return_index=True, return_inverse=True
        )
        firsts = None if len(first_rows) == len(texts) else np.sort(first_rows)
        rows = np.arange(len(texts))
        if doc_ids is None:
            return cls(None, firsts, rows, text_of)
        codes = np.asarray(doc_ids, dtype=object)
        new = np.r_[True, codes[1:] != codes[:-1]] if len(codes) else np.zeros(0, dtype=bool)
        if int(new.sum()) != len(set(doc_ids)):
            raise GoldensetError("a corpus' chunks must hold each document's chunks together")
        starts = np.flatnonzero(new)
        one_each = len(starts) == len(codes)
        return cls(None if one_each else starts, firsts, np.cumsum(new) - 1, text_of)

    def short(self, indices: np.ndarray, depth: int, asked: int) -> bool:
        """Whether one question's run, asked for ``asked`` items, is full (more may follow) and
        names fewer than ``depth`` documents or distinct texts."""
        listed = indices[indices >= 0]
        documents, texts = set(self.doc_of[listed]), set(self.text_of[listed])
        return short_answer(len(listed), len(documents), len(texts), depth, asked)


def short_answer(listed: int, documents: int, texts: int, depth: int, asked: int) -> bool:
    """An answer to be asked again deeper: full (``listed`` as many as ``asked``: more may
    follow) and naming fewer than ``depth`` documents or distinct texts."""
    return listed >= asked and min(documents, texts) < depth


def deepen(
    ask: Callable[[list[int], int], list[A]],
    n_rows: int,
    depth: int,
    most: int,
    short: Callable[[A, int], bool],
) -> tuple[list[A], int]:
    """Each row's answer asked for ``depth`` items (``ask(rows, k)``), then twice as many for
    the rows ``short`` says hold too few distinct documents or texts, up to ``most``; with the
    count of rows still short at ``most``."""
    asked = min(depth, most)
    answers = ask(list(range(n_rows)), asked)
    rows = [row for row, answer in enumerate(answers) if short(answer, asked)]
    while rows and asked < most:
        asked = min(2 * asked, most)
        for row, answer in zip(rows, ask(rows, asked), strict=True):
            answers[row] = answer
        rows = [row for row in rows if short(answers[row], asked)]
    return answers, len(rows)


# each row's best chunks looked at first, as a multiple of k: most rows find k documents and k
# texts among them, and only the rest pay for a pass over every document
CANDIDATES = 4


def select_covering(block: np.ndarray, k: int, cover: Cover) -> tuple[np.ndarray, np.ndarray]:
    """Of each row of a score block: the best chunk of each of its k best documents and its k
    best distinct texts, together, best first (ties by lower index), -1 padded to
    covering_width."""
    n_columns = block.shape[1]
    if np.isnan(block).any():  # a NaN ranks as -inf (a copy only then)
        block = np.where(np.isnan(block), np.float32(-np.inf), block)
    seen = select_top_k(block, min(CANDIDATES * k, n_columns))
    everything = seen[0].shape[1] == n_columns  # nothing else to find
    by_text = _first_of_each(seen, cover.text_of, k, everything)
    by_doc = _first_of_each(seen, cover.doc_of, k, everything)
    for (indices, scores, short), exhaustive in [
        (by_text, lambda rows: _best_texts(block[rows], k, cover)),
        (by_doc, lambda rows: _best_documents(block[rows], k, cover)),
    ]:
        if short.any():
            indices[short], scores[short] = exhaustive(short)
    return union_of(by_text[:2], by_doc[:2], covering_width(k, n_columns))


def _first_of_each(
    seen: tuple[np.ndarray, np.ndarray], group_of: np.ndarray, k: int, everything: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Among each row's best chunks (``seen``, best first), the first chunk of each of its first
    k groups (documents or texts: a group ranks at its best chunk), -1 padded; and the rows that
    saw fewer than k groups while more chunks lie beyond what they saw."""
    indices, scores = seen
    n_rows, width = indices.shape
    n_groups = int(group_of.max()) + 1 if group_of.size else 0
    row = np.repeat(np.arange(n_rows), width)
    first = first_of_each(row, group_of[indices].ravel(), n_rows, n_groups)
    found = ranked_rows(row[first], indices.ravel()[first], scores.ravel()[first], n_rows, k)
    short = np.bincount(row[first], minlength=n_rows) < min(k, n_groups)
    return found.indices, found.scores, short & (not everything)


def _best_texts(block: np.ndarray, k: int, cover: Cover) -> tuple[np.ndarray, np.ndarray]:
    """The k best distinct texts of each row over every column (the first chunk of each)."""
    columns = cover.firsts if cover.firsts is not None else np.arange(block.shape[1])
    indices, scores = select_top_k(block[:, columns], min(k, len(columns)))
    return _padded(columns[indices], scores, k)


def _best_documents(block: np.ndarray, k: int, cover: Cover) -> tuple[np.ndarray, np.ndarray]:
    """The best chunk of each of each row's k best documents, over every column."""
    if cover.doc_starts is None:  # a document a chunk
        return _padded(*select_top_k(block, min(k, block.shape[1])), k)
    maxima = np.maximum.reduceat(block, cover.doc_starts, axis=1)
    groups, scores = select_top_k(maxima, min(k, len(cover.doc_starts)))
    return _padded(best_members(block, cover.doc_starts, groups), scores, k)


def _padded(indices: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """-1 (scored -inf) to k columns."""
    missing = k - indices.shape[1]
    return (
        np.pad(indices, ((0, 0), (0, missing)), constant_values=-1),
        np.pad(scores, ((0, 0), (0, missing)), constant_values=-np.inf),
    )


def covering_width(k: int, n_columns: int) -> int:
    """The columns a covering selection fills: the two selections' k each, at most every column."""
    return min(2 * k, n_columns)


def best_members(block: np.ndarray, starts: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The first best column of each chosen group (``groups``: rows x chosen), row by row."""
    n_rows, chosen = groups.shape
    ends = np.r_[starts[1:], block.shape[1]]
    first, sizes = starts[groups].ravel(), (ends - starts)[groups].ravel()
    offsets = np.cumsum(sizes) - sizes
    columns = np.repeat(first - offsets, sizes) + np.arange(int(sizes.sum()))
    rows = np.repeat(np.repeat(np.arange(n_rows), chosen), sizes)
    values = block[rows, columns]
    best = np.maximum.reduceat(values, offsets)
    candidates = np.where(values == np.repeat(best, sizes), columns, block.shape[1])
    return np.minimum.reduceat(candidates, offsets).reshape(n_rows, chosen)


def union_of(
    first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray], width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Two selections of the same rows merged, each index once, best first, ties by lower index;
    -1 (scored -inf) pads each row to ``width``."""
    indices = np.concatenate((first[0], second[0]), axis=1)
    scores = np.concatenate((first[1], second[1]), axis=1)
    order = np.lexsort((indices, -scores), axis=1)
    indices = np.take_along_axis(indices, order, axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    repeated = np.zeros(indices.shape, dtype=bool)
    repeated[:, 1:] = indices[:, 1:] == indices[:, :-1]  # an index's copies score alike: adjacent
    kept = np.argsort(repeated, axis=1, kind="stable")  # each row's distinct indices first
    indices = np.take_along_axis(np.where(repeated, -1, indices), kept, axis=1)
    scores = np.take_along_axis(np.where(repeated, -np.inf, scores), kept, axis=1)
    out = np.full((indices.shape[0], width), -1, dtype=np.int64)
    out_scores = np.full((indices.shape[0], width), -np.inf, dtype=np.float32)
    shown = min(width, indices.shape[1])
    out[:, :shown], out_scores[:, :shown] = indices[:, :shown], scores[:, :shown]
    return out, out_scores
