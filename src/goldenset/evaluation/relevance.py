"""Which chunks answer which question: the judgments the metrics are computed against.

A generated question carries the character span of its evidence in its document (a labelled
question one or more spans, in one or more documents), so its judgments hold for any chunking:
a chunk is relevant when it covers at least `min_overlap` of an evidence span, or when it lies
wholly inside one (a chunking finer than the evidence must not leave a question without any
relevant chunk). When no chunk qualifies for a span, the chunks covering the largest share of it
count, so every question is scored under every chunking.

Chunks with the same text (after the normalisation of goldenset.corpus.duplicates) are one item when
chunks are ranked: a retriever that returns the copy of a relevant chunk found it, and the copy
neither adds a relevant item nor pushes anything down. Ranking classes of equal text is exactly
ranking the corpus without the copies.

A judged document absent from the corpus (skipped at ingest) stays a relevant item that no
retriever can return, as in trec_eval: it lowers recall and nDCG, never raises them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import coo_array, csr_array

from goldenset.corpus.duplicates import text_key


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


def evidence_qrels(
    qids: list[str], evidence: pd.DataFrame, chunks: pd.DataFrame, min_overlap: float
) -> csr_array:
    """(questions x chunks) binary judgments from an evidence table (qid, doc_id, start, end).

    A question may have several evidence spans, in several documents: a chunk is relevant when
    it qualifies for any of them, and each span on its own gets its best chunks when none
    qualifies. Rows follow `qids`; evidence of other questions is ignored.
    """
    ranges = document_ranges(chunks["doc_id"])
    starts, ends = chunks["start"].to_numpy(), chunks["end"].to_numpy()
    row_of = {qid: row for row, qid in enumerate(qids)}
    judged = set()
    for span in evidence.itertuples(index=False):
        row = row_of.get(span.qid)
        if row is None:
            continue
        first, last = ranges.get(span.doc_id, (0, 0))
        chunk_starts, chunk_ends = starts[first:last], ends[first:last]
        relevant = span_chunks(chunk_starts, chunk_ends, span.start, span.end, min_overlap)
        judged.update((row, int(col) + first) for col in relevant)
    pairs = np.array(sorted(judged), dtype=np.int64).reshape(-1, 2)
    data = np.ones(len(pairs), dtype=np.float64)
    return csr_array((data, (pairs[:, 0], pairs[:, 1])), shape=(len(qids), len(chunks)))


def span_chunks(
    chunk_starts: np.ndarray,
    chunk_ends: np.ndarray,
    evidence_start: int,
    evidence_end: int,
    min_overlap: float,
) -> np.ndarray:
    """Positions of the chunks (of one document) relevant to one evidence span."""
    share = evidence_overlap(chunk_starts, chunk_ends, evidence_start, evidence_end)
    inside = (chunk_starts >= evidence_start) & (chunk_ends <= evidence_end)
    qualifies = (share >= min_overlap) | inside
    if not qualifies.any() and share.size and share.max() > 0:
        qualifies = share == share.max()
    return np.flatnonzero(qualifies)


def document_qrels(qids: pd.Series, qrels: pd.DataFrame, doc_order: list[str]) -> csr_array:
    """(queries x documents) graded judgments, documents in chunk-group order.

    Judged documents not in `doc_order` get columns after it, in id order: relevant items
    that no ranking holds.
    """
    query_row = {qid: i for i, qid in enumerate(qids)}
    judged = qrels[qrels["qid"].isin(query_row)]
    absent = sorted(set(judged["doc_id"]) - set(doc_order))
    doc_col = {doc_id: i for i, doc_id in enumerate([*doc_order, *absent])}
    rows = judged["qid"].map(query_row).to_numpy()
    cols = judged["doc_id"].map(doc_col).to_numpy()
    grades = judged["grade"].to_numpy(dtype=np.float64)
    return csr_array((grades, (rows, cols)), shape=(len(query_row), len(doc_col)))


@dataclass(frozen=True)
class TextClasses:
    """Chunks grouped by equal text; classes numbered by their first chunk, in chunk order."""

    of_chunk: np.ndarray  # class of each chunk row
    order: np.ndarray  # chunk rows sorted by class (stable): the rows a retriever scores
    starts: np.ndarray  # where each class begins in `order`: the groups of top_k
    first: np.ndarray  # first chunk row of each class: its id in results


def text_classes(chunk_texts: pd.Series) -> TextClasses | None:
    """Classes of chunks with equal normalised text; None when every chunk text is distinct."""
    keys = [text_key(text) for text in chunk_texts]
    of_chunk, uniques = pd.factorize(pd.Series(keys, dtype=object))
    if len(uniques) == len(keys):
        return None
    order = np.argsort(of_chunk, kind="stable")
    starts = group_starts(pd.Series(of_chunk[order]))
    return TextClasses(of_chunk.astype(np.int64), order, starts, order[starts])


def collapse_items(qrels: csr_array, of_item: np.ndarray, n_classes: int) -> csr_array:
    """(queries x classes) judgments: the best grade of a class's items.

    Columns beyond `of_item` (judged items absent from the corpus) follow the classes.
    """
    n_items = len(of_item)
    target = np.r_[of_item, np.arange(qrels.shape[1] - n_items) + n_classes]
    entries = coo_array(qrels)
    frame = (
        pd.DataFrame({"row": entries.row, "col": target[entries.col], "grade": entries.data})
        .groupby(["row", "col"], as_index=False)["grade"]
        .max()
    )
    shape = (qrels.shape[0], n_classes + qrels.shape[1] - n_items)
    return csr_array((frame["grade"].to_numpy(), (frame["row"], frame["col"])), shape=shape)
