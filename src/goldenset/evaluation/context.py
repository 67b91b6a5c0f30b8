"""The context-budget view: a query's ranked chunks, best first, fill a context of B tokens,
counted by one fixed tokenizer; text that overlapping chunks share is counted once (a context is
a union of character intervals per document). The context is compared, character by character,
with the evidence (context_recall@B, context_precision@B, context_iou@B) and with the relevant
documents (context_hit@B). Why it favours no chunk size: goldenset.evaluation.views."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from goldenset.corpus.queries import EVIDENCE_COLUMNS
from goldenset.evaluation.measures import MEASURES, Measure, context_measures

Intervals = list[tuple[int, int]]  # disjoint, sorted [start, end) character ranges


def merged(intervals: Sequence[tuple[int, int]]) -> Intervals:
    """The union of [start, end) ranges as sorted disjoint ranges (empty ones dropped)."""
    out: Intervals = []
    for start, end in sorted((int(s), int(e)) for s, e in intervals if e > s):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _uncovered(covered: Intervals, start: int, end: int) -> Intervals:
    """Parts of [start, end) outside the ``covered`` ranges."""
    parts, cursor = [], start
    for low, high in covered:
        if high <= cursor:
            continue
        if low >= end:
            break
        if low > cursor:
            parts.append((cursor, low))
        cursor = max(cursor, high)
    if cursor < end:
        parts.append((cursor, end))
    return parts


def fill_context(
    chunks: Sequence[tuple[int, int, int]], token_starts: Sequence[Sequence[int]], budget: int
) -> dict[int, Intervals]:
    """The context a budget of tokens holds: document -> character ranges.

    ``chunks``: (document, start, end) best first; ``token_starts[d]``: sorted character offsets
    where document d's tokens start; the tokens of a range are those starting in it, so text
    shared with the context already costs nothing. The context holds every new character of
    the chunks, in rank order, up to the first new token past the budget: the chunk that does
    not fit whole keeps its first new tokens (cut where the next new token starts).
    """
    context: dict[int, Intervals] = {}
    left = budget
    for doc, start, end in chunks:
        starts = token_starts[doc]
        kept, full = [], False
        for low, high in _uncovered(context.get(doc, []), int(start), int(end)):
            first, stop = bisect_left(starts, low), bisect_left(starts, high)
            if stop - first > left:
                kept.append((low, int(starts[first + left])))
                full = True
                break
            kept.append((low, high))
            left -= stop - first
        if kept:
            context[doc] = merged([*context.get(doc, []), *kept])
        if full:
            break
    return context


def _length(intervals: Intervals) -> int:
    return sum(end - start for start, end in intervals)


def _overlap(a: Intervals, b: Intervals) -> int:
    """Characters in both sets of disjoint sorted ranges."""
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class ContextOverlap:
    """One context set against one question's evidence, in characters: what every context
    measure computes from."""

    shown: int  # characters in the context
    wanted: int  # evidence characters
    both: int  # evidence characters in the context
    relevant_shown: bool | None  # a relevant document has text in it; None: none is relevant

    @classmethod
    def of(
        cls, context: dict[int, Intervals], evidence: dict[int, Intervals], relevant_docs: set[int]
    ) -> ContextOverlap:
        shown = sum(_length(ranges) for ranges in context.values())
        wanted = sum(_length(ranges) for ranges in evidence.values())
        both = sum(_overlap(ranges, context.get(doc, [])) for doc, ranges in evidence.items())
        hit = any(context.get(doc) for doc in relevant_docs) if relevant_docs else None
        return cls(shown, wanted, both, hit)


# Recall is NaN without evidence characters (a question judged per document only); precision is
# 0 for an empty context; hit is NaN without relevant documents.
def context_recall(overlap: ContextOverlap) -> float:
    return overlap.both / overlap.wanted if overlap.wanted else float("nan")


def context_precision(overlap: ContextOverlap) -> float:
    return overlap.both / overlap.shown if overlap.shown else 0.0


def context_iou(overlap: ContextOverlap) -> float:
    union = overlap.shown + overlap.wanted - overlap.both
    return overlap.both / union if union and overlap.wanted else float("nan")


def context_hit(overlap: ContextOverlap) -> float:
    return float("nan") if overlap.relevant_shown is None else float(overlap.relevant_shown)


for _measure in (
    Measure(
        name="context_recall",
        parameter="B",
        views=("context",),
        definition="share of the evidence characters in a context of B tokens of ranked chunks",
        compute=context_recall,
    ),
    Measure(
        name="context_precision",
        parameter="B",
        views=("context",),
        definition="share of the context's characters that are evidence (0 for an empty context)",
        compute=context_precision,
    ),
    Measure(
        name="context_iou",
        parameter="B",
        views=("context",),
        definition="evidence and context characters: intersection over union",
        compute=context_iou,
    ),
    Measure(
        name="context_hit",
        parameter="B",
        views=("context",),
        definition="1 when a relevant document has text in the context",
        compute=context_hit,
    ),
):
    MEASURES.register(_measure.name, _measure)


@dataclass(frozen=True)
class ContextInputs:
    """What the context view needs besides a ranking, for one query set."""

    item_chunk: np.ndarray  # the chunk row whose text stands for each item
    chunk_doc: np.ndarray  # document index of each chunk row
    chunk_start: np.ndarray
    chunk_end: np.ndarray
    token_starts: list[list[int]]  # per document index: where its tokens start
    evidence: list[dict[int, Intervals]] | None  # per query: document -> evidence ranges;
    # None for a set judged per document only
    relevant_docs: list[set[int]]  # per query: documents judged relevant


def context_view(
    ranked: np.ndarray, inputs: ContextInputs, budgets: Sequence[int]
) -> dict[str, np.ndarray]:
    """Each context measure at each budget (context_recall@B, ...) per query."""
    n_queries, measures = ranked.shape[0], context_measures()
    out = {f"{m.name}@{b}": np.full(n_queries, np.nan) for b in budgets for m in measures}
    for query in range(n_queries):
        row = ranked[query]
        chunk = inputs.item_chunk[row[row >= 0]]
        chunks = list(
            zip(
                inputs.chunk_doc[chunk].tolist(),
                inputs.chunk_start[chunk].tolist(),
                inputs.chunk_end[chunk].tolist(),
                strict=True,
            )
        )
        for budget in budgets:
            context = fill_context(chunks, inputs.token_starts, budget)
            evidence = {} if inputs.evidence is None else inputs.evidence[query]
            overlap = ContextOverlap.of(context, evidence, inputs.relevant_docs[query])
            for measure in measures:
                out[f"{measure.name}@{budget}"][query] = measure.compute(overlap)
    return out


def evidence_by_query(
    qids: Sequence[str], evidence: pd.DataFrame, doc_index: dict[str, int]
) -> list[dict[int, Intervals]]:
    """Per query: document index -> merged evidence ranges (documents without chunks dropped)."""
    grouped: list[dict[int, list[tuple[int, int]]]] = [{} for _ in qids]
    row_of = {qid: i for i, qid in enumerate(qids)}
    for qid, doc_id, start, end in evidence[EVIDENCE_COLUMNS].itertuples(index=False):
        if qid in row_of and doc_id in doc_index:
            grouped[row_of[qid]].setdefault(doc_index[doc_id], []).append((start, end))
    return [{doc: merged(ranges) for doc, ranges in by_doc.items()} for by_doc in grouped]
