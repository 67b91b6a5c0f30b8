"""Outputs of any git revision, read through DVC: from the cache or the remote, never re-run.

``rev=None`` is the workspace. After `dvc pull` (in CI, say) every committed run can be read.
"""

from __future__ import annotations

import io
import json

import pandas as pd

from goldenset.compare import Texts
from goldenset.errors import GoldensetError

RESULTS = "data/results.parquet"
GOLDENSET = "data/goldenset.jsonl"
CHUNKS = "data/chunks.parquet"
DOCUMENTS = "data/documents.parquet"
QUERIES = "data/queries.parquet"


def label(rev: str | None) -> str:
    return "workspace" if rev is None else rev


def read_bytes(path: str, rev: str | None, repo: str) -> bytes:
    """A file (DVC output or git-tracked) as it was at ``rev``."""
    import dvc.api  # slow to import: only when a revision is read

    try:
        with dvc.api.open(path, repo=repo, rev=rev, mode="rb") as handle:
            return handle.read()
    except Exception as error:  # dvc raises many types (missing rev, file, cache); all mean this
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise GoldensetError(
            f"cannot read {path} at {label(rev)}: {reason}; check the revision, and run "
            "`dvc pull` (or `dvc repro` for the workspace) so its outputs are in the cache"
        ) from None


def read_results(rev: str | None, repo: str) -> pd.DataFrame:
    return pd.read_parquet(io.BytesIO(read_bytes(RESULTS, rev, repo)))


def read_texts(rev: str | None, repo: str, query_sets: set[str]) -> Texts:
    """Question, evidence, chunk and document texts of a revision; what cannot be read is left
    out (the report then shows ids only), since texts only help a reader."""
    questions: dict[str, dict[str, str]] = {}
    evidence: dict[str, str] = {}
    if "synthetic" in query_sets:
        rows = _optional(lambda: _jsonl(read_bytes(GOLDENSET, rev, repo)), [])
        questions["synthetic"] = {row["qid"]: row.get("question", "") for row in rows}
        evidence = {row["qid"]: row.get("evidence", "") for row in rows}
    if "real" in query_sets:
        real = _optional(lambda: _real_queries(rev, repo), {})
        questions["real"] = real
    chunks = _optional(lambda: _texts(read_bytes(CHUNKS, rev, repo), "chunk_id"), {})
    documents = (
        _optional(lambda: _texts(read_bytes(DOCUMENTS, rev, repo), "doc_id"), {})
        if "real" in query_sets
        else {}
    )
    return Texts(questions, evidence, chunks, documents)


def _optional(read, empty):
    try:
        return read()
    except (GoldensetError, ValueError, KeyError, OSError):
        return empty


def _jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def _texts(data: bytes, key: str) -> dict[str, str]:
    frame = pd.read_parquet(io.BytesIO(data))
    text = frame["text"].astype(str)
    if "title" in frame:
        text = frame["title"].fillna("").astype(str) + " " + text
    return dict(zip(frame[key].astype(str), text.str.strip(), strict=True))


def _real_queries(rev: str | None, repo: str) -> dict[str, str]:
    """qid -> text of the real queries that ingest found at that revision."""
    frame = pd.read_parquet(io.BytesIO(read_bytes(QUERIES, rev, repo)))
    return dict(zip(frame["qid"].astype(str), frame["text"].astype(str), strict=True))
