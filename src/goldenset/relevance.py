"""Which chunks answer which question: the judgments the metrics are computed against.

A generated question carries the character span of its evidence in its document, so its
judgments hold for any chunking: a chunk is relevant when it covers at least `min_overlap` of
the evidence span, or when it lies wholly inside the evidence (a chunking finer than the
evidence must not leave a question without any relevant chunk). When no chunk qualifies, the
chunks covering the largest share count, so every question is scored under every chunking.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import csr_array


def document_ranges(chunk_doc_ids: pd.Series) -> dict[str, tuple[int, int]]:
    """doc_id -> [first, last + 1) chunk rows; chunks of a document are contiguous."""
    codes = chunk_doc_ids.to_numpy()
    starts = group_starts(chunk_doc_ids)
    ends = np.r_[starts[1:], len(codes)]
    return {codes[s]: (int(s), int(e)) for s, e in zip(starts, ends, strict=True)}


def group_starts(chunk_doc_ids: pd.Series) -> np.ndarray:
    """Row where each document's chunks begin, in chunk order: the groups of document ranking."""
    codes = chunk_doc_ids.to_numpy()
    return np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]).astype(np.int64)


def evidence_overlap(
    chunk_starts: np.ndarray, chunk_ends: np.ndarray, evidence_start: int, evidence_end: int
) -> np.ndarray:
    """Share of the evidence span that each chunk covers."""
    covered = np.minimum(chunk_ends, evidence_end) - np.maximum(chunk_starts, evidence_start)
    return np.clip(covered, 0, None) / max(evidence_end - evidence_start, 1)


def evidence_qrels(questions: pd.DataFrame, chunks: pd.DataFrame, min_overlap: float) -> csr_array:
    """(questions x chunks) binary judgments from evidence spans."""
    ranges = document_ranges(chunks["doc_id"])
    starts, ends = chunks["start"].to_numpy(), chunks["end"].to_numpy()
    rows, cols = [], []
    for row, question in enumerate(questions.itertuples(index=False)):
        first, last = ranges.get(question.doc_id, (0, 0))
        span_starts, span_ends = starts[first:last], ends[first:last]
        ev_start, ev_end = question.evidence_start, question.evidence_end
        share = evidence_overlap(span_starts, span_ends, ev_start, ev_end)
        inside = (span_starts >= ev_start) & (span_ends <= ev_end)
        qualifies = (share >= min_overlap) | inside
        if not qualifies.any() and share.size and share.max() > 0:
            qualifies = share == share.max()
        relevant = np.flatnonzero(qualifies) + first
        rows.extend([row] * len(relevant))
        cols.extend(relevant.tolist())
    data = np.ones(len(rows), dtype=np.float64)
    return csr_array((data, (rows, cols)), shape=(len(questions), len(chunks)))


def document_qrels(qids: pd.Series, qrels: pd.DataFrame, doc_order: list[str]) -> csr_array:
    """(queries x documents) graded judgments, documents in chunk-group order."""
    query_row = {qid: i for i, qid in enumerate(qids)}
    doc_col = {doc_id: i for i, doc_id in enumerate(doc_order)}
    judged = qrels[qrels["qid"].isin(query_row) & qrels["doc_id"].isin(doc_col)]
    rows = judged["qid"].map(query_row).to_numpy()
    cols = judged["doc_id"].map(doc_col).to_numpy()
    grades = judged["grade"].to_numpy(dtype=np.float64)
    return csr_array((grades, (rows, cols)), shape=(len(query_row), len(doc_col)))
