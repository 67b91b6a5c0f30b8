"""Views of a ranking that do not favour bigger or smaller chunks by construction.

Per-chunk metrics judge a question against chunks, so a chunking into fewer, larger chunks makes
a question easier: with whole documents as chunks, any chunk of the right document is a hit.
Two views measure the same rankings without that bias:

- the document view: a question's relevant documents are those holding its evidence; documents
  rank by their best chunk (the first place any of their chunks reaches in the ranking), and
  the usual rank metrics (doc_recall@k, doc_hit@k, doc_mrr, doc_ndcg@k) are computed on them;
- the context-budget view: the ranked chunks, best first, fill a context of B tokens, counted by
  one fixed tokenizer; text that overlapping chunks share is counted once (the context is a
  union of character intervals per document). The context is then compared, character by
  character, with the evidence (context_recall@B, context_precision@B, context_iou@B) and with
  the relevant documents (context_hit@B).

The last chunk that does not fit whole is truncated to the remaining budget (its first new
tokens, in document order): every chunking then spends the same budget, as a prompt packed up
to its limit would. Skipping it instead would leave a chunking of large chunks with an empty
context whenever its best chunk exceeds B, and reward chunkings whose sizes happen to fit.

A ranked item stands for chunks: one chunk, or the chunks of equal text that rank as one item
(goldenset.evaluation.relevance). In the document view it stands for every document of its
chunks (each of those documents' best chunk scored that much); in the context its text is put
once, as its first chunk (the id results show): the copies add no text. The context view itself
is goldenset.evaluation.context.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.core.ranked import first_of_each
from goldenset.evaluation.context import ContextInputs, evidence_by_query
from goldenset.evaluation.ranking import N_RELEVANT_KEY, QUERY_KEY, evaluate
from goldenset.evaluation.relevance import document_qrels


@dataclass(frozen=True)
class ItemChunks:
    """The chunk rows each ranked item stands for: item i holds ``rows[indptr[i]:indptr[i+1]]``."""

    indptr: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(cls, n_chunks: int, groups: np.ndarray | None, order: np.ndarray | None) -> ItemChunks:
        """Items of a query set: chunks (no groups), or groups of the rows in ``order``."""
        order = np.arange(n_chunks, dtype=np.int64) if order is None else np.asarray(order)
        if groups is None:
            return cls(np.arange(n_chunks + 1, dtype=np.int64), order.astype(np.int64))
        return cls(np.r_[np.asarray(groups, dtype=np.int64), n_chunks], order.astype(np.int64))

    def first(self) -> np.ndarray:
        """The first chunk row of each item: the one whose text enters a context."""
        return self.rows[self.indptr[:-1]]


def _expand(indptr: np.ndarray, values: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, ...]:
    """(position of each item's entry among ``items``, the entries), items' lists concatenated."""
    counts = indptr[items + 1] - indptr[items]
    total = int(counts.sum())
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    entries = values[np.repeat(indptr[items], counts) + offsets]
    return np.repeat(np.arange(items.size), counts), entries


def ranked_documents(ranked: np.ndarray, items: ItemChunks, chunk_doc: np.ndarray) -> np.ndarray:
    """Documents in the order their best chunk ranks, (n_queries, depth'), -1 padded.

    ``ranked``: item indices best first (-1 padding); ``chunk_doc``: document index of each
    chunk row. Documents that first appear at the same item keep chunk order.
    """
    n_queries = ranked.shape[0]
    query, position = np.nonzero(ranked >= 0)
    entry, rows = _expand(items.indptr, items.rows, ranked[query, position])
    query, docs = query[entry], chunk_doc[rows]
    n_docs = int(chunk_doc.max()) + 1 if chunk_doc.size else 1
    # entries are in (query, rank, chunk) order: a document's first entry is its best place
    first = first_of_each(query, docs, n_queries, n_docs)
    query, docs = query[first], docs[first]
    starts = np.searchsorted(query, np.arange(n_queries))
    place = np.arange(query.size) - starts[query]
    depth = int(place.max()) + 1 if place.size else 0
    out = np.full((n_queries, depth), -1, dtype=np.int64)
    out[query, place] = docs
    return out


def document_view(
    ranked: np.ndarray,
    items: ItemChunks,
    chunk_doc: np.ndarray,
    doc_qrels,
    ks: Sequence[int],
) -> dict[str, np.ndarray]:
    """Rank metrics of documents ranked by their best chunk, named doc_<metric>, per judged query.

    ``doc_qrels``: (queries x documents) judgments, columns in the document indices of
    ``chunk_doc`` (judged documents without chunks after them).
    """
    per_query = evaluate(ranked_documents(ranked, items, chunk_doc), doc_qrels, ks)
    return {
        name if name in (QUERY_KEY, N_RELEVANT_KEY) else f"doc_{name}": values
        for name, values in per_query.items()
    }


@dataclass(frozen=True)
class Views:
    """The views of a query set that do not favour a chunk size."""

    budgets: list[int]
    context: ContextInputs  # the context-budget view, read from a ranking of chunk items
    # the document view of a span-judged set: its items' chunks and (queries x documents)
    # judgments; None for a set whose items are documents already
    items: ItemChunks | None = None
    doc_qrels: csr_array | None = None


@dataclass(frozen=True)
class Layout:
    """Where the chunks lie: documents numbered in chunk order, and their tokens."""

    doc_ids: list[str]
    chunk_doc: np.ndarray
    chunk_start: np.ndarray
    chunk_end: np.ndarray
    token_starts: list[list[int]]

    @property
    def doc_index(self) -> dict[str, int]:
        return {doc_id: i for i, doc_id in enumerate(self.doc_ids)}


def chunk_layout(
    chunks: pd.DataFrame, token_starts_of: dict[str, list[int]], documents: Sequence[str] = ()
) -> Layout:
    """``chunks`` (doc_id, start, end; a document's chunks contiguous) with each document's
    token starts; ``documents`` without a chunk come after those with one, so that the views
    still count their evidence (a store's chunking may lack a document)."""
    codes, doc_ids = pd.factorize(chunks["doc_id"], sort=False)
    doc_ids = [str(doc_id) for doc_id in doc_ids]
    chunked = set(doc_ids)
    doc_ids += [str(doc_id) for doc_id in documents if str(doc_id) not in chunked]
    return Layout(
        doc_ids,
        codes.astype(np.int64),
        chunks["start"].to_numpy(dtype=np.int64),
        chunks["end"].to_numpy(dtype=np.int64),
        [token_starts_of.get(doc_id, []) for doc_id in doc_ids],
    )


def span_views(
    qids: Sequence[str], evidence: pd.DataFrame, layout: Layout, items: ItemChunks, budgets
) -> Views:
    """Document and context views of a span-judged set from its evidence table."""
    judged = evidence[["qid", "doc_id"]].drop_duplicates().assign(grade=1.0)
    doc_qrels = document_qrels(pd.Series(list(qids)), judged, layout.doc_ids)
    spans = evidence_by_query(qids, evidence, layout.doc_index)
    return Views(
        list(budgets),
        _context_inputs(items, layout, spans, [set(by_doc) for by_doc in spans]),
        items,
        doc_qrels,
    )


def document_judged_views(
    doc_qrels: csr_array, layout: Layout, items: ItemChunks, budgets
) -> Views:
    """The context view of a set judged per document (``doc_qrels`` columns in layout order)."""
    n_docs = len(layout.doc_ids)
    qrels = csr_array(doc_qrels)
    relevant = [
        {
            int(doc)
            for doc, grade in zip(qrels.indices[a:b], qrels.data[a:b], strict=True)
            if grade > 0 and doc < n_docs
        }
        for a, b in zip(qrels.indptr[:-1], qrels.indptr[1:], strict=True)
    ]
    return Views(list(budgets), _context_inputs(items, layout, None, relevant))


def _context_inputs(items: ItemChunks, layout: Layout, spans, relevant) -> ContextInputs:
    return ContextInputs(
        items.first(),
        layout.chunk_doc,
        layout.chunk_start,
        layout.chunk_end,
        layout.token_starts,
        spans,
        relevant,
    )
