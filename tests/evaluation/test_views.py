"""The document view against pytrec_eval, the context view against a brute force over sets of
character positions, on random chunkings with overlapping chunks and random rankings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from goldenset.evaluation.context import context_view
from goldenset.evaluation.relevance import text_classes
from goldenset.evaluation.views import ItemChunks, Layout, document_view, span_views
from tests.evaluation.test_ranking import TREC_NAMES, trec_eval_scores

KS = [1, 2, 3, 5]
BUDGETS = [1, 4, 9, 30]


def random_layout(rng: np.random.Generator, n_docs: int) -> tuple[Layout, pd.DataFrame]:
    """Documents of random length, each cut into random, often overlapping chunks, with
    random token starts (a document's tokens start at a random subset of its positions)."""
    rows, token_starts = [], []
    for doc in range(n_docs):
        length = int(rng.integers(20, 60))
        token_starts.append(sorted(rng.choice(length, size=length // 3, replace=False).tolist()))
        for _ in range(int(rng.integers(1, 5))):
            start = int(rng.integers(0, length - 2))
            end = int(rng.integers(start + 1, length + 1))
            rows.append((f"d{999 - doc:03d}", start, end))
    chunks = pd.DataFrame(rows, columns=["doc_id", "start", "end"])
    codes, doc_ids = pd.factorize(chunks["doc_id"])
    layout = Layout(
        list(doc_ids),
        codes.astype(np.int64),
        chunks["start"].to_numpy(),
        chunks["end"].to_numpy(),
        token_starts,
    )
    return layout, chunks


def random_evidence(rng: np.random.Generator, layout: Layout, n_queries: int) -> pd.DataFrame:
    """One to three evidence spans per question, in one or two documents, some overlapping."""
    rows = []
    for query in range(n_queries):
        docs = rng.choice(len(layout.doc_ids), size=int(rng.integers(1, 3)), replace=False)
        for _ in range(int(rng.integers(1, 4))):
            doc = int(rng.choice(docs))
            length = max(t for t in [*layout.token_starts[doc], 20]) + 1
            start = int(rng.integers(0, length - 1))
            rows.append((f"q{query}", layout.doc_ids[doc], start, start + int(rng.integers(1, 15))))
    return pd.DataFrame(rows, columns=["qid", "doc_id", "start", "end"])


@pytest.mark.parametrize("seed", range(6))
def test_document_view_matches_pytrec_eval_on_documents_ranked_by_best_chunk(seed):
    rng = np.random.default_rng(seed)
    layout, chunks = random_layout(rng, 8)
    n_queries, n_chunks = 12, len(chunks)
    evidence = random_evidence(rng, layout, n_queries)
    qids = [f"q{i}" for i in range(n_queries)]
    # every third seed: some chunks share a text and rank as one item, as in the score stage
    texts = pd.Series([f"t{row % 5}" if seed % 3 == 0 else f"t{row}" for row in range(n_chunks)])
    classes = text_classes(texts)
    items = (
        ItemChunks.of(n_chunks, None, None)
        if classes is None
        else ItemChunks.of(n_chunks, classes.starts, classes.order)
    )
    n_items = len(items.indptr) - 1
    scores = rng.permutation(n_items).astype(float) + 1.0  # distinct: no ties between items
    depth = int(rng.integers(2, n_items + 1))
    ranked = np.stack([np.argsort(-rng.permutation(scores))[:depth] for _ in qids])
    views = span_views(qids, evidence, layout, items, BUDGETS)
    ours = document_view(ranked, items, layout.chunk_doc, views.doc_qrels, KS)

    qrels = {qid: {doc: 1 for doc in group["doc_id"]} for qid, group in evidence.groupby("qid")}
    run: dict[str, dict[str, float]] = {}
    for qid, row in zip(qids, ranked, strict=True):
        best: dict[str, float] = {}
        for place, item in enumerate(row):
            for chunk in items.rows[items.indptr[item] : items.indptr[item + 1]]:
                doc = layout.doc_ids[layout.chunk_doc[chunk]]
                best[doc] = max(best.get(doc, -1.0), float(depth - place))
        run[qid] = best  # equal scores (copies) tie; trec_eval then orders ids descending
    trec = trec_eval_scores(qrels, run, KS)
    assert list(ours["query"]) == list(range(n_queries))
    for k in KS:
        for name, theirs in TREC_NAMES.items():
            expected = [trec[qid][theirs.format(k=k)] for qid in qids]
            np.testing.assert_allclose(ours["doc_" + name.format(k=k)], expected, atol=1e-9)
    expected = [trec[qid]["recip_rank"] for qid in qids]
    np.testing.assert_allclose(ours["doc_mrr"], expected, atol=1e-9)


def brute_force_context(chunks, token_starts, budget) -> set[tuple[int, int]]:
    """(document, position) of every character in the context: the chunks' characters in rank
    order, each new token costing one, up to the first new token past the budget."""
    context: set[tuple[int, int]] = set()
    used = 0
    for doc, start, end in chunks:
        for position in range(start, end):
            if (doc, position) in context:
                continue
            if position in token_starts[doc]:
                if used == budget:
                    return context
                used += 1
            context.add((doc, position))
    return context


def brute_force_scores(context, evidence_rows, doc_index, relevant):
    wanted = {
        (doc_index[doc_id], position)
        for _, doc_id, start, end in evidence_rows
        for position in range(start, end)
    }
    both = len(context & wanted)
    recall = both / len(wanted)
    precision = both / len(context) if context else 0.0
    iou = both / len(context | wanted)
    hit = float(any(doc in relevant for doc, _ in context))
    return recall, precision, iou, hit


@pytest.mark.parametrize("seed", range(8))
def test_context_view_matches_a_brute_force_over_character_positions(seed):
    rng = np.random.default_rng(100 + seed)
    layout, chunks = random_layout(rng, 5)
    n_queries, n_chunks = 10, len(chunks)
    evidence = random_evidence(rng, layout, n_queries)
    qids = [f"q{i}" for i in range(n_queries)]
    items = ItemChunks.of(n_chunks, None, None)
    depth = int(rng.integers(1, n_chunks + 1))
    ranked = np.stack([rng.permutation(n_chunks)[:depth] for _ in qids])
    ranked[0, depth // 2 :] = -1  # a short list
    views = span_views(qids, evidence, layout, items, BUDGETS)
    ours = context_view(ranked, views.context, BUDGETS)

    starts_as_sets = [set(starts) for starts in layout.token_starts]
    doc_index = layout.doc_index
    for query, qid in enumerate(qids):
        row = ranked[query][ranked[query] >= 0]
        ordered = [
            (int(layout.chunk_doc[c]), int(layout.chunk_start[c]), int(layout.chunk_end[c]))
            for c in row
        ]
        rows = list(evidence[evidence["qid"] == qid].itertuples(index=False))
        relevant = {doc_index[r.doc_id] for r in rows}
        for budget in BUDGETS:
            context = brute_force_context(ordered, starts_as_sets, budget)
            expected = brute_force_scores(context, rows, doc_index, relevant)
            got = [ours[f"context_{m}@{budget}"][query] for m in ("recall", "precision", "iou")]
            got.append(ours[f"context_hit@{budget}"][query])
            np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=f"{qid} @{budget}")


def test_a_chunk_that_does_not_fit_is_cut_at_the_budget_and_shared_text_is_free():
    # one document, tokens every 2 characters; chunk 1 = [0, 10) (5 tokens),
    # chunk 2 = [6, 20) overlaps it by 4 characters (2 tokens) and holds 5 new tokens
    layout = Layout(
        ["d"], np.array([0, 0]), np.array([0, 6]), np.array([10, 20]), [list(range(0, 40, 2))]
    )
    evidence = pd.DataFrame([("q", "d", 0, 20)], columns=["qid", "doc_id", "start", "end"])
    views = span_views(["q"], evidence, layout, ItemChunks.of(2, None, None), [5, 8, 12])
    ours = context_view(np.array([[0, 1]]), views.context, [5, 8, 12])
    # 5 tokens: chunk 1 whole; 8: plus 3 new tokens of chunk 2 (to 16); 12: both whole
    assert ours["context_recall@5"][0] == pytest.approx(10 / 20)
    assert ours["context_recall@8"][0] == pytest.approx(16 / 20)
    assert ours["context_recall@12"][0] == pytest.approx(1.0)
    assert ours["context_precision@12"][0] == pytest.approx(1.0)
