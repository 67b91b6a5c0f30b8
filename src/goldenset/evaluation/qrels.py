"""The qrels: which items answer which query, the peer of a run (goldenset.retrieval.run.Run).

A run ranks ids; :class:`Qrels` grades the items of one view of a query set (chunks, classes of
chunks of equal text, or documents), as a sparse matrix for the vectorised measures. They meet
in the evaluator (goldenset.evaluation.evaluator) and in the public :func:`goldenset.evaluate`,
which builds a :class:`Qrels` from ``{qid: {doc_id: grade}}`` as ranx, BEIR and pytrec_eval
write them."""

from __future__ import annotations

from dataclasses import dataclass

from scipy.sparse import csr_array


@dataclass(frozen=True)
class Qrels:
    """One query set's judgments over the items of a view: ``qrels[q, i]`` grades item i for
    query ``qids[q]``."""

    name: str  # the first key of a metric: synthetic, labelled or real
    qids: list[str]
    # (queries x items): items are chunks, text classes of chunks, or documents; columns past
    # item_ids are judged items absent from the corpus, which no retriever returns
    qrels: csr_array
    item_ids: list[str]
