"""Outputs of any git revision, read through DVC: from the cache or the remote, never re-run.

``rev=None`` is the workspace. After `dvc pull` (in CI, say) every committed run can be read.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
from pathlib import Path

import pandas as pd

from goldenset.compare.regressed import Texts
from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_parquet_bytes
from goldenset.core.paths import CHUNKS, DOCUMENTS, RESULTS, store_corpus
from goldenset.corpus.beir import document_text
from goldenset.corpus.querysets import BY_DOCUMENTS, QUERY_SETS, QuerySet, read_query_set
from goldenset.retrieval.retrievers import stores


def label(rev: str | None) -> str:
    return "workspace" if rev is None else rev


def in_repository(path: str | Path, project: str) -> tuple[str, str]:
    """(path from the top of the DVC repository, that top): a project may be a subfolder of its
    repository (`goldenset init` writes one), and DVC reads a revision's paths from the top."""
    from dvc.repo import Repo

    root = Repo.find_root(project)
    inside = Path(os.path.relpath(Path(project).resolve(), Path(root).resolve()))
    return (inside / path).as_posix(), root


def read_bytes(path: str | Path, rev: str | None, repo: str) -> bytes:
    """A file (DVC output or git-tracked) as it was at ``rev``."""
    import dvc.api  # slow to import: only when a revision is read

    try:
        if rev is None:  # the workspace's file, whichever folder of the repository runs this
            return (Path(repo) / path).read_bytes()
        located, root = in_repository(path, repo)
        check_revision(rev, root)
        with dvc.api.open(located, repo=root, rev=rev, mode="rb") as handle:
            return handle.read()
    except GoldensetError:
        raise
    except Exception as error:  # dvc raises many types (missing rev, file, cache); all mean this
        raise GoldensetError(f"cannot read {path} at {label(rev)}: {why_unread(error)}") from None


def head_commit(root: str | Path) -> str | None:
    """The commit checked out in the repository at root; None outside git or before a commit."""
    head = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "HEAD"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if head.returncode != 0:
        return None
    return head.stdout.strip() or None


def check_revision(rev: str, root: str) -> None:
    """GoldensetError naming the nearest branches and tags when git knows no such revision: no
    `dvc pull` brings back a branch that does not exist (`git init` may have named it master)."""
    known = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if known.returncode == 0:
        return
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout.split()
    nearest = difflib.get_close_matches(rev, refs, n=3, cutoff=0.0) if refs else []
    hint = f"nearest: {', '.join(nearest)}" if nearest else "the repository has no branch yet"
    raise GoldensetError(f"unknown revision '{rev}': no branch, tag or commit of that name; {hint}")


def why_unread(error: Exception) -> str:
    """What a reader of the error can do, from what DVC or the file system said."""
    from dvc.exceptions import PathMissingError

    if isinstance(error, PathMissingError):  # DVC's own sentence names the path twice
        return (
            "that revision has no such DVC output or git file: commit dvc.lock after `dvc repro` "
            "(outputs are recorded there), or compare another revision"
        )
    if isinstance(error, FileNotFoundError):
        return "no such file in the workspace: run `dvc repro` (or `dvc pull`) first"
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0].rstrip(".")
    return f"{reason}; run `dvc pull` so that revision's outputs are in the cache"


def read_results(rev: str | None, repo: str) -> pd.DataFrame:
    return read_parquet_bytes(read_bytes(RESULTS, rev, repo))


def read_texts(
    rev: str | None, repo: str, query_sets: set[str], retrievers: set[str] = frozenset()
) -> Texts:
    """Question, evidence, chunk and document texts of a revision (with the chunks of each of
    ``retrievers`` that is a store, from its exported corpus); what cannot be read is left out
    (the report then shows ids only), since texts only help a reader."""
    question_texts: dict[str, dict[str, str]] = {}
    evidence: dict[str, dict[str, str]] = {}
    entries = [entry for name, entry in QUERY_SETS.items() if name in query_sets]
    documents = (
        _optional(lambda: _texts(read_bytes(DOCUMENTS, rev, repo), "doc_id"), {})
        if any(entry.judged_by == BY_DOCUMENTS for entry in entries)
        else {}
    )
    document_texts = None
    for entry in entries:
        questions = _optional(lambda entry=entry: _query_set(entry, rev, repo), None)
        if questions is None:
            question_texts[entry.name] = {}
            continue
        question_texts[entry.name] = dict(
            zip(questions.qids, map(str, questions.texts), strict=True)
        )
        if entry.judged_by == BY_DOCUMENTS:
            continue
        if "evidence" in questions.table:  # the golden set keeps its evidence's text
            excerpts = questions.table["evidence"].fillna("").astype(str)
            evidence[entry.name] = dict(zip(questions.qids, excerpts, strict=True))
            continue
        if document_texts is None:
            document_texts = _optional(lambda: _document_texts(rev, repo), {})
        judgments = questions.judgments
        evidence[entry.name] = _optional(
            lambda judgments=judgments, texts=document_texts: _first_excerpts(judgments, texts), {}
        )
    chunks = _optional(lambda: _texts(read_bytes(CHUNKS, rev, repo), "chunk_id"), {})
    for store in sorted(retrievers & set(stores())):
        path = store_corpus(store)
        chunks.update(_optional(lambda path=path: _corpus_texts(read_bytes(path, rev, repo)), {}))
    return Texts(question_texts, evidence, chunks, documents)


def _corpus_texts(data: bytes) -> dict[str, str]:
    """_id -> text of a corpus in BEIR's format."""
    rows = map(json.loads, data.decode("utf-8").splitlines())
    return {str(row["_id"]): str(row["text"]) for row in rows}


def _query_set(entry, rev: str | None, repo: str) -> QuerySet:
    return read_query_set(entry, lambda path: read_bytes(path, rev, repo))


def _optional(read, empty):
    try:
        return read()
    except (GoldensetError, ValueError, KeyError, OSError):
        return empty


def _texts(data: bytes, key: str) -> dict[str, str]:
    frame = read_parquet_bytes(data)
    titles = frame["title"].fillna("").astype(str) if "title" in frame else [""] * len(frame)
    texts = map(document_text, titles, frame["text"].astype(str))
    return dict(zip(frame[key].astype(str), texts, strict=True))


def _document_texts(rev: str | None, repo: str) -> dict[str, str]:
    """doc_id -> text alone: evidence offsets count in it."""
    frame = read_parquet_bytes(read_bytes(DOCUMENTS, rev, repo), columns=["doc_id", "text"])
    return dict(zip(frame["doc_id"].astype(str), frame["text"].astype(str), strict=True))


def _first_excerpts(evidence: pd.DataFrame, documents: dict[str, str]) -> dict[str, str]:
    """qid -> the text of its first evidence span, cut from its document."""
    frame = evidence.drop_duplicates("qid")
    return {
        str(row.qid): documents[row.doc_id][row.start : row.end]
        for row in frame.itertuples(index=False)
        if row.doc_id in documents
    }
