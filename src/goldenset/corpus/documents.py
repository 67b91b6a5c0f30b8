"""What ingest makes of a collection: documents, the sources it skipped and why, and the
documents table the stage writes."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from goldenset.corpus.labelled import Question
from goldenset.corpus.places import Places

DOCUMENT_COLUMNS = ["doc_id", "source", "title", "text", "sha256", "places"]


class SkipReason:
    """Why a source was skipped, as the summary counts it."""

    EMPTY = "empty"
    BINARY = "binary"
    NOT_UTF8 = "not UTF-8"
    TOO_LARGE = "too large"
    NO_TEXT = "no text"
    BAD_LINE = "bad corpus line"
    BAD_GZIP = "bad gzip"
    SCANNED = "no text layer"  # PDF pages that are pictures: goldenset does not OCR
    ENCRYPTED = "encrypted"
    CORRUPT = "corrupt"
    NO_PAGES = "no pages"
    NOT_DOCX = "not a Word file"


class Unreadable(Exception):
    """A PDF or Word file that gives no text: `reason` is a SkipReason, `detail` what to do."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Document:
    doc_id: str
    source: str
    title: str
    text: str
    places: Places = Places()  # the page or heading of each part of the text (PDF, Word)


@dataclass(frozen=True)
class Skip:
    source: str
    reason: str  # a SkipReason
    detail: str  # the line shown to the user, after the source
    doc_id: str | None = None  # the id the document would have had, when it is known

    def line(self) -> str:
        return f"skipped {self.source}: {self.detail}"


@dataclass
class IngestResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    ignored: int = 0  # files with an unsupported extension, or .json not in the SQuAD layout
    squad_questions: list[Question] = field(default_factory=list)  # of the SQuAD articles read
    squad_unanswerable: int = 0  # SQuAD v2.0 questions marked is_impossible
    notes: list[str] = field(default_factory=list)  # kept documents with pages that gave no text
    textless_pages: int = 0
    files_extracted: int = 0  # PDF and Word files read this run that gave text
    # (the others that gave text: from the cache; those that gave none are in `skipped`)
    files_cached: int = 0

    def lines(self) -> list[str]:
        """A line for each skipped file, then a note for each kept file that lost pages."""
        return [skip.line() for skip in self.skipped] + self.notes

    def summary(self) -> str:
        chars = sum(len(doc.text) for doc in self.documents)
        parts = [f"{counted(len(self.documents), 'document')} read, {chars:,} chars"]
        if self.files_extracted or self.files_cached:
            parts.append(
                f"PDF and Word files: {self.files_extracted:,} extracted, "
                f"{self.files_cached:,} from the cache"
            )
        if self.skipped:
            counts = Counter(skip.reason for skip in self.skipped)
            reasons = ", ".join(f"{n:,} {reason}" for reason, n in sorted(counts.items()))
            parts.append(f"skipped {len(self.skipped):,} ({reasons})")
        if self.textless_pages:
            parts.append(f"{counted(self.textless_pages, 'page')} without text kept out")
        if self.ignored:
            parts.append(f"ignored: {counted(self.ignored, 'file')} with other extensions")
        return "; ".join(parts)


def counted(number: int, noun: str) -> str:
    """The count and its noun agreeing with it: "1 page", "3 pages", "1,200 pages"."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def documents_frame(documents: Iterable[Document]) -> pd.DataFrame:
    """The documents table: doc_id, source, title, text, sha256 (hex of the UTF-8 text), places
    (JSON, goldenset.corpus.places)."""
    rows = [
        (
            d.doc_id,
            d.source,
            d.title,
            d.text,
            hashlib.sha256(d.text.encode("utf-8")).hexdigest(),
            d.places.to_json(),
        )
        for d in documents
    ]
    return pd.DataFrame(rows, columns=DOCUMENT_COLUMNS).astype(str)


def over_limit(size: int, max_bytes: int) -> str:
    return f"{size:,} bytes > ingest.max_file_mb ({max_bytes:,} bytes)"
