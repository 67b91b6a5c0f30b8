"""The golden set in BEIR format and ranked lists as TREC run files, for other IR tools.

BEIR (corpus.jsonl, queries.jsonl, qrels/test.tsv) is what BEIR, MTEB and ranx read; a TREC run
(``qid Q0 docid rank score tag``) is what trec_eval, pytrec_eval and ranx read. The corpus holds
the chunks of the current chunking, so a tool scores the very items our metrics rank.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np
import pandas as pd

from goldenset.corpus.places import PLACE


def beir_corpus(chunks: pd.DataFrame) -> str:
    """One JSON line per chunk: _id (chunk id), title (empty), text, and where it comes from:
    its document, offsets, and its place there when it has one ("p. 12-13", "§ A > B")."""
    return "".join(
        json.dumps(
            {"_id": row.chunk_id, "title": "", "text": row.text, "metadata": _source(row)},
            ensure_ascii=False,
        )
        + "\n"
        for row in chunks.itertuples(index=False)
    )


def _source(row) -> dict:
    source = {"doc_id": row.doc_id, "start": int(row.start), "end": int(row.end)}
    place = getattr(row, PLACE, "")
    return {**source, "place": place} if isinstance(place, str) and place else source


def beir_queries(qids: Iterable[str], texts: Iterable[str]) -> str:
    return "".join(
        json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n"
        for qid, text in zip(qids, texts, strict=True)
    )


def beir_qrels(qids: list[str], qrels, item_ids: list[str]) -> str:
    """qrels/test.tsv: a header, then query-id, corpus-id, score for every relevant pair."""
    qrels = qrels.tocoo()
    lines = ["query-id\tcorpus-id\tscore"]
    order = np.lexsort((qrels.col, qrels.row))
    for row, column, grade in zip(
        qrels.row[order], qrels.col[order], qrels.data[order], strict=True
    ):
        if grade > 0:
            lines.append(f"{qids[row]}\t{item_ids[column]}\t{_grade(grade)}")
    return "\n".join(lines) + "\n"


def _grade(grade: float) -> str:
    return str(int(grade)) if float(grade).is_integer() else repr(float(grade))
