"""`goldenset demo`: documents to try goldenset on, shipped beside this module (package data
cut from the sample by data/make_demo_docs.py): the sample's first SciFact abstracts as
Markdown files (or PDF files, goldenset.demo.pdf), and the real queries judged on them in the
BEIR layout."""

from __future__ import annotations

import gzip
import json
import shlex
from pathlib import Path

from goldenset.core.errors import GoldensetError

DEMO = Path(__file__).parent  # BEIR files: the shipped sample's first DEMO_DOCUMENTS
DEMO_DOCUMENTS = 100


def read_demo(n_docs: int = 40) -> tuple[list[dict], list[str], list[list[str]]]:
    """The shipped sample's first documents (BEIR corpus lines: _id, title, text), the lines of
    queries.jsonl judged on them, and those judgments (query-id, corpus-id, score)."""
    with gzip.open(DEMO / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        docs = [json.loads(line) for _, line in zip(range(n_docs), corpus, strict=False)]
    ids = {doc["_id"] for doc in docs}
    rows = (DEMO / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]
    qrels = [row.split("\t") for row in rows if row.split("\t")[1] in ids]
    qids = {qid for qid, _, _ in qrels}
    lines = (DEMO / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return docs, [line for line in lines if json.loads(line)["_id"] in qids], qrels


def demo_files(
    docs: list[dict], queries: list[str], qrels: list[list[str]], suffix: str = ".md"
) -> dict[str, str]:
    """File name -> text: each document as Markdown (unless its files are PDFs, written apart),
    and its real queries in the BEIR layout, judged on the documents' files (a document's id in
    a folder is its file name)."""
    files = {}
    if suffix == ".md":
        files = {f"{doc['_id']}.md": f"# {doc['title']}\n\n{doc['text']}\n" for doc in docs}
    files["queries.jsonl"] = "\n".join(queries) + "\n"
    rows = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}{suffix}\t{g}" for q, d, g in qrels)]
    files["qrels.tsv"] = "\n".join(rows) + "\n"
    return files


def write_demo(directory: Path, n_docs: int = 40, pdf: bool = False) -> list[str]:
    """Write `n_docs` documents (as PDFs with `pdf`) and their real queries into a new folder;
    the lines to print."""
    if not 1 <= n_docs <= DEMO_DOCUMENTS:
        raise GoldensetError(
            f"goldenset demo: --documents {n_docs}: give 1 to {DEMO_DOCUMENTS} (the "
            "documents shipped)"
        )
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise GoldensetError(
            f"goldenset demo: {directory} exists and is not empty; name a new folder: "
            "goldenset demo DIR"
        )
    docs, queries, qrels = read_demo(n_docs)
    pages = write_documents(directory, docs, queries, qrels, pdf)
    form = f"PDFs ({pages} pages)" if pdf else "Markdown"
    return [
        f"goldenset demo: wrote {len(docs)} SciFact abstracts as {form} and the "
        f"{len(queries)} real queries judged on them (queries.jsonl, qrels.tsv) in {directory}",
        f"next: goldenset init --docs {shlex.quote(str(directory))}   # in a git repository "
        "(`git init` first in a new folder)",
    ]


def write_documents(
    directory: Path, docs: list[dict], queries: list[str], qrels: list[list[str]], pdf: bool
) -> int:
    """Write BEIR documents as files (Markdown, or PDF with `pdf`) and their real queries into
    `directory`; the pages the PDFs took (0 for Markdown)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in demo_files(docs, queries, qrels, ".pdf" if pdf else ".md").items():
        (directory / name).write_text(text, encoding="utf-8")
    if not pdf:
        return 0
    from goldenset.demo.pdf import write_pdf  # PDFium only when asked for

    return sum(write_pdf(directory / f"{d['_id']}.pdf", d["title"], d["text"]) for d in docs)
