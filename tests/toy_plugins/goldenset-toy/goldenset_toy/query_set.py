"""A query set made from the documents by the ingest stage: each document's first eight words,
judged relevant to that document alone."""

from __future__ import annotations

import pandas as pd

from goldenset.corpus.querysets import BY_DOCUMENTS, QUERY_SETS, made_by_ingest


def openings(documents: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    qids = [f"toy-{number}" for number in range(len(documents))]
    texts = [" ".join(str(text).split()[:8]) for text in documents["text"]]
    questions = pd.DataFrame({"qid": qids, "text": texts})
    qrels = pd.DataFrame(
        {"qid": qids, "doc_id": documents["doc_id"].astype(str), "grade": 1.0, "absent": ""}
    )
    return questions, qrels


QUERY_SETS.register("toy", made_by_ingest("toy", openings, BY_DOCUMENTS, echo_label="toy"))
