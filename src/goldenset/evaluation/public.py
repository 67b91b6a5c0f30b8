"""``goldenset.evaluate``: a run scored against qrels in the form ranx, BEIR and pytrec_eval use,
``{qid: {doc_id: score}}`` for both, by the code the score stage runs.

    import goldenset
    goldenset.evaluate(qrels, run, ["ndcg@10", "mrr"])  # {"ndcg@10": 0.61, "mrr": 0.55}

The run is ordered as trec_eval orders it (score descending, ties by descending id:
goldenset.core.ranked.rank_run) and judged by goldenset.evaluation.ranking.evaluate. Means are
over the queries of ``qrels`` with at least one relevant document; a query the run does not
answer scores 0 (as in ranx, and trec_eval with ``-c``). Given ``documents`` (chunk id ->
document id), the run ranks chunks and each document ranks at its best chunk: the ``doc_``
measures of goldenset.evaluation.views.document_view, against qrels that judge documents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.sparse import csr_array

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import rank_run
from goldenset.core.stats import mean_present
from goldenset.evaluation.measures import RANKING_VIEWS, parse_metric
from goldenset.evaluation.ranking import N_RELEVANT_KEY, QUERY_KEY
from goldenset.evaluation.ranking import evaluate as evaluate_ranking
from goldenset.evaluation.views import ItemChunks, document_view

Scored = Mapping[str, Mapping[str, float]]


def evaluate(
    qrels: Scored,
    run: Scored,
    metrics: str | Sequence[str],
    *,
    per_query: bool = False,
    documents: Mapping[str, str] | None = None,
) -> dict[str, float] | dict[str, dict[str, float]]:
    """Each metric's mean over the judged queries (``per_query``: each judged query's value,
    by qid). ``metrics``: recall@k, precision@k, hit@k, ndcg@k and mrr as metrics/scores.json
    names them; with ``documents``, their ``doc_`` forms."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    ks = _cutoffs(names, documents is not None)
    qids = [str(qid) for qid in qrels]
    if documents is None:
        values = _judged(qrels, run, qids, ks)
    else:
        values = _judged_documents(qrels, run, qids, ks, documents)
    kept = [qids[row] for row in values[QUERY_KEY]]
    if per_query:
        return {name: dict(zip(kept, values[name].tolist(), strict=True)) for name in names}
    return {name: mean_present(values[name]) for name in names}


def _cutoffs(names: list[str], by_documents: bool) -> list[int]:
    """The cutoffs the metrics name; a clear error for a name this function does not compute."""
    if not names:
        raise GoldensetError("evaluate: name at least one metric, e.g. ['ndcg@10', 'mrr']")
    ks = set()
    for name in names:
        parsed = parse_metric(name)
        views = set(parsed[0].views) & set(RANKING_VIEWS) if parsed else set()
        if not views or name.startswith("doc_") != by_documents:
            form = "doc_ndcg@10, doc_mrr" if by_documents else "ndcg@10, mrr"
            raise GoldensetError(
                f"evaluate: {name!r} is not a metric of this view; it computes recall@k, "
                f"precision@k, hit@k, ndcg@k and mrr (e.g. {form})"
                + ("" if by_documents else "; their doc_ forms need documents=")
            )
        if parsed[1] is not None:
            ks.add(parsed[1])
    return sorted(ks) or [1]


def _judged(qrels: Scored, run: Scored, qids: list[str], ks: list[int]) -> dict[str, np.ndarray]:
    item_ids = _ids(run, qrels)
    ranked = rank_run(_by_qid(run), item_ids, qids)
    return evaluate_ranking(ranked, _matrix(qrels, item_ids), ks)


def _judged_documents(
    qrels: Scored, run: Scored, qids: list[str], ks: list[int], documents: Mapping[str, str]
) -> dict[str, np.ndarray]:
    chunk_ids = _ids(run)
    unmapped = [chunk for chunk in chunk_ids if chunk not in documents]
    if unmapped:
        raise GoldensetError(
            f"evaluate: the run ranks chunk {unmapped[0]!r}, which documents= maps to no document"
        )
    chunk_docs = [str(documents[chunk]) for chunk in chunk_ids]
    doc_ids = list(dict.fromkeys([*chunk_docs, *_ids(qrels)]))  # then those judged, unranked
    column = {doc: position for position, doc in enumerate(doc_ids)}
    chunk_doc = np.array([column[doc] for doc in chunk_docs], dtype=np.int64)
    ranked = rank_run(_by_qid(run), chunk_ids, qids)
    items = ItemChunks.of(len(chunk_ids), None, None)
    values = document_view(ranked, items, chunk_doc, _matrix(qrels, doc_ids), ks)
    return {name: array for name, array in values.items() if name != N_RELEVANT_KEY}


def _ids(*tables: Scored) -> list[str]:
    """Every id the tables rank or judge, once each, in the order they first appear."""
    ids = (str(item) for table in tables for answers in table.values() for item in answers)
    return list(dict.fromkeys(ids))


def _by_qid(run: Scored) -> dict[str, Mapping[str, float]]:
    """The run keyed by str qids (rank_run reads ids and scores as str and float itself)."""
    return {str(qid): answers for qid, answers in run.items()}


def _matrix(qrels: Scored, item_ids: list[str]) -> csr_array:
    """(queries x items) grades, rows in the order of ``qrels``."""
    column = {item: position for position, item in enumerate(item_ids)}
    rows, cols, grades = [], [], []
    for row, answers in enumerate(qrels.values()):
        for item, grade in answers.items():
            rows.append(row)
            cols.append(column[str(item)])
            grades.append(float(grade))
    return csr_array((grades, (rows, cols)), shape=(len(qrels), len(item_ids)))
