"""The questions a retriever is scored on: the generated golden set, labelled questions
(goldenset.corpus.labelled) and real queries.

Real queries are the BEIR files at the top of the `ingest.path` folder (`queries.jsonl`, and
`qrels.tsv` or `qrels/test.tsv`). The ingest stage reads them and writes data/queries.parquet
and data/qrels.parquet, which always exist (empty when there are none), so no later stage
depends on a path a fresh clone may lack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl
from goldenset.core.params import Disagreement
from goldenset.corpus.verdicts import fixed_qids, parse_verdicts

GOLDENSET_COLUMNS = ["qid", "question", "doc_id", "evidence_start", "evidence_end"]
FIXED_FROM = "fixed_from"  # the original's qid, in a row a person fixed (the apply stage's)
QUERY_COLUMNS = ["qid", "text"]
# absent: why a judged document is not in the corpus ("" when it is): trec_eval still counts
# it as relevant, and a retriever can never find it
QRELS_COLUMNS = ["qid", "doc_id", "grade", "absent"]
# a span-judged query set (synthetic, labelled): one or more evidence spans per question,
# character offsets into the document text of data/documents.parquet
EVIDENCE_COLUMNS = ["qid", "doc_id", "start", "end"]
LABELLED_COLUMNS = ["qid", "text"]
LABELLED_FILE = "labelled.jsonl"
QUERIES_FILE = "queries.jsonl"
QRELS_FILES = ("qrels.tsv", "qrels/test.tsv")
NO_REAL_QUERIES = "no real queries: scoring the golden set only"


def read_goldenset(path: str | Path) -> pd.DataFrame:
    """Rows of goldenset.jsonl; an absent or empty file is an empty golden set."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=GOLDENSET_COLUMNS)
    rows = read_jsonl(path)
    return pd.DataFrame(rows, columns=None if rows else GOLDENSET_COLUMNS)


def evidence_frame(rows: Iterable[tuple[str, str, int, int]] = ()) -> pd.DataFrame:
    """The evidence table of a span-judged query set (EVIDENCE_COLUMNS)."""
    frame = pd.DataFrame(list(rows), columns=EVIDENCE_COLUMNS)
    return frame.astype({"qid": str, "doc_id": str, "start": np.int64, "end": np.int64})


def golden_evidence(golden: pd.DataFrame) -> pd.DataFrame:
    """The golden set as an evidence table (qid, doc_id, start, end): one span per question."""
    spans = golden[["qid", "doc_id", "evidence_start", "evidence_end"]].itertuples(index=False)
    return evidence_frame(spans)


def is_real_query_file(relative_path: str) -> bool:
    """True for the BEIR query and judgment files at the top of the documents folder."""
    return relative_path in (QUERIES_FILE, "qrels.tsv") or relative_path.startswith("qrels/")


def is_query_file(relative_path: str) -> bool:
    """True for the files of questions at the top of the documents folder: BEIR or labelled."""
    return is_real_query_file(relative_path) or relative_path == LABELLED_FILE


def find_qrels(folder: Path) -> Path | None:
    for name in QRELS_FILES:
        if (folder / name).exists():
            return folder / name
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
            f"ingest.path: {folder} needs both queries.jsonl and qrels.tsv (BEIR format) "
            "for real queries, or neither; or set ingest.real_queries: false"
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
    rows = read_jsonl(
        path,
        lambda query, _: (str(query["_id"]), str(query["text"])),
        lambda number: f"{path}:{number}: expected a JSON object with '_id' and 'text'",
    )
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


def judged_documents(
    qrels: pd.DataFrame,
    doc_ids: set[str],
    skipped: dict[str, str],
    kept_twin: dict[str, str],
    qrels_path: str,
) -> pd.DataFrame:
    """Qrels against the ingested corpus: the QRELS_COLUMNS table.

    A judgment on a dropped duplicate moves to its kept twin (the best grade when both were
    judged). A judged document skipped at ingest (`skipped`: doc_id -> reason) stays, marked
    absent. Any other unknown document means the wrong corpus or the wrong qrels: an error.
    """
    judged = qrels.assign(doc_id=qrels["doc_id"].map(lambda d: kept_twin.get(d, d)))
    unknown = sorted(set(judged["doc_id"]) - doc_ids - set(skipped))
    if unknown:
        raise GoldensetError(
            f"ingest.path: the qrels {qrels_path} name {len(unknown)} documents that are "
            f"not in the corpus (first: {unknown[0]!r}); check ingest.path or the qrels"
        )
    judged = judged.sort_values("grade", ascending=False, kind="stable")
    judged = judged.drop_duplicates(["qid", "doc_id"]).sort_index()
    absent = judged["doc_id"].map(lambda d: "" if d in doc_ids else skipped[d])
    judged = judged.assign(grade=judged["grade"].astype(float), absent=absent)
    return judged[QRELS_COLUMNS].reset_index(drop=True)


def absent_summary(qrels: pd.DataFrame) -> str | None:
    """One warning for judged documents skipped at ingest, or None when there are none."""
    absent = qrels.drop_duplicates("doc_id")
    absent = absent[absent["absent"] != ""]
    if absent.empty:
        return None
    reasons = ", ".join(f"{n} {why}" for why, n in absent["absent"].value_counts().items())
    return (
        f"warning: {len(absent)} judged documents were skipped at ingest ({reasons}): they count "
        "as relevant and never retrieved, as trec_eval counts them"
    )


EXAMPLES_DIR = "examples"  # generate.example_queries files: a dependency of ingest and generate


@dataclass(frozen=True)
class ExampleQuery:
    """A real user's query shown as a style example; doc_id: the document that answers it."""

    text: str
    doc_id: str | None = None


def read_example_queries(value: str | list[str] | None) -> list[str]:
    """generate.example_queries: texts as given, or the texts of a BEIR queries.jsonl."""
    return [query.text for query in read_examples(value)]


# (doc_id, evidence sentence) -> the (query, why) pairs a person failed for that sentence
Refused = Mapping[tuple[str, str], list[tuple[str, str]]]
# what the writer is told of a query a person failed, by failure kind (labels/RULE.md)
REFUSED_BECAUSE = {
    "a": "a reviewer found that the marked sentence does not answer it",
    "b": "a reviewer found that it does not name its subject well enough to find its document",
    "both": "a reviewer found that the marked sentence does not answer it, and that it does not "
    "name its subject well enough to find its document",
    "nonsense": "a reviewer found it meaningless",
}


def read_refused(value: str | None, disagreement: Disagreement = "fail") -> Refused:
    """generate.failed_queries: (doc_id, evidence sentence) -> the (query, why) pairs people
    failed for that sentence (review.disagreement decides a split), from a verdict file in
    examples/ (labels/*.jsonl's schema)."""
    refused: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for row in _failed_rows(value, disagreement):
        refused.setdefault(sentence_of(row), []).append(
            (row["question"], REFUSED_BECAUSE[row["failed"]])
        )
    return refused


def refused_qids(
    value: str | None, asked_again: Iterable[tuple[str, str]], disagreement: Disagreement = "fail"
) -> list[str]:
    """The failed queries of generate.failed_queries whose sentences (doc_id, evidence) a run
    asked again: the person's share counts their verdicts as the set was first drawn."""
    sentences = set(asked_again)
    failed = _failed_rows(value, disagreement)
    return sorted({row["qid"] for row in failed if sentence_of(row) in sentences})


def sentence_of(row: dict) -> tuple[str, str]:
    return str(row["doc_id"]), str(row["evidence"]).strip()


def _failed_rows(value: str | None, disagreement: Disagreement) -> list[dict]:
    """The failing verdicts of the verdict file generate.failed_queries names, one a question as
    review.disagreement decides it (a question people split on is failed only under "fail"),
    but on questions someone fixed."""
    if value is None:
        return []
    path = in_examples(Path(value), "generate.failed_queries", "a verdict file, or null")
    try:
        verdicts = parse_verdicts(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        raise GoldensetError(f"generate.failed_queries: {path} not found") from None
    if verdicts.problems:
        raise GoldensetError(
            f"generate.failed_queries: {verdicts.problems[0]} (a verdict file: "
            "`goldenset review` writes them)"
        )
    fixed = fixed_qids(verdicts)  # asking its sentence again would leave the person's fix stale
    return [
        row
        for qid, row in verdicts.decided(disagreement).items()
        if row["verdict"] == "fail" and qid not in fixed
    ]


def in_examples(path: Path, param: str, expected: str) -> Path:
    """`path`, a file in examples/ that a param names; else GoldensetError naming the param."""
    # a DVC dependency cannot follow a param that may be a list or null, so files live in one
    # folder that always is one: editing the file then re-runs the stage
    if not path.resolve().is_relative_to(Path(EXAMPLES_DIR).resolve()):
        raise GoldensetError(
            f"{param}: {path} is outside {EXAMPLES_DIR}/, the folder the generate stage depends "
            f"on: move the file into {EXAMPLES_DIR}/"
        )
    if not path.is_file():
        raise GoldensetError(f"{param}: {path} is not a file ({expected})")
    return path


def read_examples(value: str | list[str] | None) -> list[ExampleQuery]:
    """generate.example_queries: texts as given, or the lines of a BEIR queries.jsonl, each
    with the doc_id of the document that answers it when the line names one."""
    if value is None or isinstance(value, list):
        return [ExampleQuery(text) for text in value or []]
    path = in_examples(
        Path(value),
        "generate.example_queries",
        "give a BEIR queries.jsonl, a list of query texts, or null",
    )
    return read_jsonl(
        path,
        lambda query, _: ExampleQuery(
            str(query["text"]), None if query.get("doc_id") is None else str(query["doc_id"])
        ),
        lambda number: (
            f"generate.example_queries: {path} line {number} is not a JSON object "
            'with "text": give a BEIR queries.jsonl'
        ),
    )
