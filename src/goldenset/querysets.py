"""The questions a retriever is scored on: the generated golden set and real queries."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from goldenset.errors import GoldensetError

GOLDENSET_COLUMNS = ["qid", "question", "doc_id", "evidence_start", "evidence_end"]


def read_goldenset(path: str | Path) -> pd.DataFrame:
    """Rows of goldenset.jsonl; an absent or empty file is an empty golden set."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=GOLDENSET_COLUMNS)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return pd.DataFrame(rows, columns=None if rows else GOLDENSET_COLUMNS)


def find_qrels(folder: Path) -> Path | None:
    for candidate in (folder / "qrels.tsv", folder / "qrels" / "test.tsv"):
        if candidate.exists():
            return candidate
    return None


def read_real_queries(folder: str | Path) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """BEIR queries.jsonl (qid, text) and qrels (qid, doc_id, grade); None when the folder has none.

    Only queries with a judgment are kept: the others cannot be scored.
    """
    folder = Path(folder)
    queries_path, qrels_path = folder / "queries.jsonl", find_qrels(folder)
    if not queries_path.exists() and qrels_path is None:
        return None
    if not queries_path.exists() or qrels_path is None:
        raise GoldensetError(
            f"score.real_queries: {folder} needs both queries.jsonl and qrels.tsv (BEIR format)"
        )
    queries = _read_queries(queries_path)
    qrels = _read_qrels(qrels_path)
    unknown = sorted(set(qrels["qid"]) - set(queries["qid"]))
    if unknown:
        raise GoldensetError(
            f"{qrels_path}: {len(unknown)} query ids are not in {queries_path} "
            f"(first: {unknown[0]!r}); fix the qrels or the queries file"
        )
    return queries[queries["qid"].isin(set(qrels["qid"]))].reset_index(drop=True), qrels


def _read_queries(path: Path) -> pd.DataFrame:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            query = json.loads(line)
            rows.append((str(query["_id"]), str(query["text"])))
        except (json.JSONDecodeError, KeyError, TypeError):
            raise GoldensetError(
                f"{path}:{number}: expected a JSON object with '_id' and 'text'"
            ) from None
    return pd.DataFrame(rows, columns=["qid", "text"])


def _read_qrels(path: Path) -> pd.DataFrame:
    try:
        qrels = pd.read_csv(path, sep="\t", dtype={0: str, 1: str}, comment=None)
    except (pd.errors.ParserError, ValueError) as error:
        raise GoldensetError(f"{path}: not a BEIR qrels TSV ({error})") from None
    if qrels.shape[1] != 3:
        raise GoldensetError(f"{path}: expected 3 columns: query-id, corpus-id, score")
    qrels.columns = ["qid", "doc_id", "grade"]
    qrels["grade"] = pd.to_numeric(qrels["grade"], errors="raise")
    return qrels


def check_qrels_documents(qrels: pd.DataFrame, doc_ids: set[str], qrels_folder: str) -> None:
    """Judgments on documents missing from the corpus mean the wrong corpus or the wrong qrels."""
    unknown = sorted(set(qrels["doc_id"]) - doc_ids)
    if unknown:
        raise GoldensetError(
            f"score.real_queries: the qrels in {qrels_folder} name {len(unknown)} documents "
            f"that are not in the corpus (first: {unknown[0]!r}); check ingest.path or the qrels"
        )
