"""BEIR corpora: one JSON object a line ({"_id", "title", "text"}), plain or gzipped."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from goldenset.corpus.documents import Document, IngestResult, Skip, SkipReason, over_limit


def document_text(title: str, text: str) -> str:
    """A record's title and text as one text, as MTEB/BEIR embed a whole abstract: the title, a
    space and the text, stripped (the text alone when there is no title)."""
    return f"{title} {text}".strip()


def read_corpus(file: Path, source: str, max_bytes: int, result: IngestResult) -> None:
    """Each line {"_id", "title", "text", ...}: doc_id = _id, text = `document_text`."""
    if file.stat().st_size == 0:
        result.skipped.append(Skip(source, SkipReason.EMPTY, "empty file"))
        return
    opener = gzip.open if file.name.lower().endswith(".gz") else open
    has_lines = False
    try:
        with opener(file, "rb") as lines:
            for number, raw in enumerate(lines, start=1):
                if raw.strip():
                    has_lines = True
                    _read_corpus_line(raw, f"{source}:{number}", max_bytes, result)
    except (OSError, EOFError, zlib.error) as error:
        result.skipped.append(
            Skip(source, SkipReason.BAD_GZIP, f"cannot read it as gzip ({error})")
        )
        return
    if not has_lines:
        result.skipped.append(Skip(source, SkipReason.EMPTY, "empty corpus (no lines)"))


def _read_corpus_line(raw: bytes, source: str, max_bytes: int, result: IngestResult) -> None:
    # a corpus file may be big; the size limit applies to each of its documents
    if len(raw) > max_bytes:
        result.skipped.append(
            Skip(
                source,
                SkipReason.TOO_LARGE,
                f"document too large: {over_limit(len(raw), max_bytes)}",
            )
        )
        return
    try:
        record = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        result.skipped.append(
            Skip(source, SkipReason.NOT_UTF8, "not UTF-8, convert the corpus with iconv")
        )
        return
    except json.JSONDecodeError as error:
        result.skipped.append(Skip(source, SkipReason.BAD_LINE, f"not valid JSON ({error.msg})"))
        return
    if not isinstance(record, dict) or not isinstance(record.get("_id"), (str, int)):
        result.skipped.append(Skip(source, SkipReason.BAD_LINE, 'no "_id" (a string) in this line'))
        return
    doc_id = str(record["_id"])
    title, body = record.get("title") or "", record.get("text") or ""
    if not isinstance(title, str) or not isinstance(body, str):
        skip = Skip(source, SkipReason.BAD_LINE, '"title" and "text" must be strings', doc_id)
        result.skipped.append(skip)
        return
    text = document_text(title, body)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        result.skipped.append(Skip(source, SkipReason.NO_TEXT, "no title or text", doc_id))
        return
    result.documents.append(Document(doc_id, source, title.strip(), text))
