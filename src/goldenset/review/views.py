"""What one screen of the review page shows, as JSON: a query in its document, and a question a
retriever missed beside another retriever's answer.

Texts are cut on the server, in Python's characters, into the part before the evidence, the
evidence and the part after: the page never applies an offset, so multi-byte text cannot shift
the highlight (JavaScript counts UTF-16 units, Python code points).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from goldenset.core.spans import sentence_spans
from goldenset.corpus.places import place_label
from goldenset.evaluation.ranking import misses_worst_first


@dataclass(frozen=True)
class Document:
    title: str
    text: str


def marked(text: str, start: int, end: int) -> list[str]:
    """[before, marked, after] of text, the mark clipped to it (empty when outside)."""
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    end = max(start, end)
    return [text[:start], text[start:end], text[end:]]


def query_view(query: Mapping, document: Document, context: int) -> dict:
    """A golden-set query with `context` characters of its document either side of its evidence."""
    start, end = int(query["evidence_start"]), int(query["evidence_end"])
    low, high = max(0, start - context), min(len(document.text), end + context)
    return {
        "qid": query["qid"],
        "question": query["question"],
        "form": query.get("form") or "question",
        "doc_id": str(query["doc_id"]),
        "place": place_label(query),  # "p. 12" of a PDF, "§ Setup > Cables" of a Word file
        "title": document.title,
        "text": marked(document.text[low:high], start - low, end - low),
        "cut": [low > 0, high < len(document.text)],
        "span": [start, end],  # the evidence's place in the document
        "sentences": sentence_pieces(document.text, low, high),
    }


def sentence_pieces(text: str, low: int, high: int) -> list[list]:
    """text[low:high] as pieces that together spell it: [sentence, start, end] with the
    sentence's place in the text, or [between, None, None] for what lies between sentences.
    The page moves a fix's evidence by these places, never by its own offsets."""
    pieces: list[list] = []
    at = low
    for start, end in sentence_spans(text[low:high]):  # the window's: a document may be a book
        start, end = start + low, end + low
        if start > at:
            pieces.append([text[at:start], None, None])
        pieces.append([text[start:end], start, end])
        at = end
    if at < high:
        pieces.append([text[at:high], None, None])
    return pieces


def missed(results: pd.DataFrame, retriever: str) -> list[str]:
    """Golden-set query ids whose first relevant item `retriever` did not rank first: never
    ranked (results.parquet's <NA>) first, then the lowest ranked, ties in file order."""
    rows = results[results["retriever"] == retriever]
    rank = first_rank(rows["first_relevant_rank"]).fillna(0).to_numpy()
    return rows["qid"].iloc[misses_worst_first(rank)].tolist()


def first_rank(column: pd.Series) -> pd.Series:
    """Ranks as floats, NaN where the evidence was never ranked (<NA> in results.parquet)."""
    return pd.to_numeric(column, errors="coerce").astype(float)


def ranked_view(row: Mapping | None, query: Mapping, chunks: pd.DataFrame, shown: int) -> dict:
    """One retriever's answer to a query: its rank of the evidence and its top `shown` items,
    each item's overlap with the evidence marked."""
    if row is None:
        return {"rank": None, "top": []}
    top = []
    for chunk_id in list(row["top_ids"])[:shown]:
        chunk = chunks.loc[chunk_id] if chunk_id in chunks.index else None
        if chunk is None:  # a store's own chunk: its text is not in data/chunks.parquet
            top.append({"chunk_id": chunk_id, "doc_id": None, "text": ["", "", ""]})
            continue
        same = str(chunk["doc_id"]) == str(query["doc_id"])
        offset = int(chunk["start"])
        start, end = (
            (int(query["evidence_start"]) - offset, int(query["evidence_end"]) - offset)
            if same
            else (0, 0)
        )
        top.append(
            {
                "chunk_id": chunk_id,
                "doc_id": str(chunk["doc_id"]),
                "text": marked(str(chunk["text"]), start, end),
            }
        )
    rank = first_rank(pd.Series([row["first_relevant_rank"]])).iloc[0]
    return {"rank": None if np.isnan(rank) else int(rank), "top": top}
