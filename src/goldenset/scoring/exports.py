"""The golden set in BEIR format and ranked lists as TREC run files, for other IR tools.

BEIR (corpus.jsonl, queries.jsonl, qrels/test.tsv) is what BEIR, MTEB and ranx read; a TREC run
(``qid Q0 docid rank score tag``) is what trec_eval, pytrec_eval and ranx read. The corpus holds
the chunks of the current chunking, so a tool scores the very items our metrics rank.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.corpus.places import PLACE
from goldenset.scoring.topk import TopK


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


def trec_run(qids: list[str], item_ids: list[str], found: TopK, tag: str) -> str:
    """A TREC run of ranked lists, padding left out.

    Every tool re-sorts a run by score, and trec_eval keeps scores in single precision (ties
    then go by descending docid), so tied float32 scores are separated by the smallest float32
    step below the previous one: each tool then reads our order.
    """
    lines = []
    for row, qid in enumerate(qids):
        kept = found.indices[row] >= 0
        items = found.indices[row][kept]
        scores = strictly_decreasing(found.scores[row][kept])
        for rank, (item, score) in enumerate(zip(items, scores, strict=True), start=1):
            lines.append(f"{qid} Q0 {item_ids[item]} {rank} {score} {tag}")
    return "".join(line + "\n" for line in lines)


def strictly_decreasing(scores: np.ndarray) -> np.ndarray:
    """float32 scores in rank order, each tie (or inversion) one step below its predecessor."""
    scores = np.asarray(scores, dtype=np.float32).copy()
    for position in range(1, scores.size):
        if not scores[position] < scores[position - 1]:
            scores[position] = np.nextafter(scores[position - 1], np.float32(-np.inf))
    return scores


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    """{qid: {docid: score}} from a TREC run file; a malformed line is a clear error."""
    if not path.exists():
        raise GoldensetError(f"retrievers.external.run_file: {path} not found")
    run: dict[str, dict[str, float]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        try:
            qid, _, docid, _, score, _ = fields
            run.setdefault(qid, {})[docid] = float(score)
        except ValueError:
            raise GoldensetError(
                f"{path}:{number}: expected 'qid Q0 docid rank score tag' (TREC run format)"
            ) from None
    return run
