"""PDF and Word files to text, paid once: each file's text is kept in cache/extracted under its
content hash (a persist output of ingest, shared through the DVC remote like the other caches),
so a re-ingest of an unchanged folder extracts nothing and one changed file costs one extraction.

What a file could not give (encrypted, scanned, broken) is kept too: a 500-page scan is read once.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from goldenset.core.files import damaged_cache, read_json_cache, write_json
from goldenset.corpus.documents import SkipReason, Unreadable
from goldenset.corpus.places import Places

log = logging.getLogger("goldenset")

PDF_SUFFIXES = (".pdf",)
WORD_SUFFIXES = (".docx",)
# bump when the text a file gives changes (goldenset.corpus.layout, .pdf, .docx): old entries
# are then never read again
EXTRACTION_VERSION = 2
OCR_HINT = "goldenset does not OCR: run OCR first, e.g. ocrmypdf in.pdf out.pdf"


@dataclass(frozen=True)
class FileText:
    title: str
    text: str
    places: Places
    pages: int = 0  # a PDF's page count
    textless: tuple[int, ...] = ()  # the PDF pages that have no text layer

    def note(self, source: str) -> str | None:
        """The line for pages kept out because they have no text, or None."""
        if not self.textless:
            return None
        shown = ", ".join(map(str, self.textless[:10])) + (
            ", ..." if len(self.textless) > 10 else ""
        )
        return (
            f"note: {source}: {len(self.textless)} of its {self.pages} pages have no text layer "
            f"(p. {shown}), left out; {OCR_HINT}"
        )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_text(cache: Path | None, digest: str) -> FileText | Unreadable | None:
    """What the file of this content hash gave before, or None when it was never read. A
    damaged entry is the caches' one line (goldenset.core.files.read_json_cache)."""
    entry = _entry(cache, digest) if cache is not None else None
    if entry is None or not entry.exists():
        return None
    what = "the text of that file"
    try:
        return _from_json(read_json_cache(entry, what))
    except (ValueError, KeyError, TypeError):
        raise damaged_cache(entry, what, "not an extracted text") from None


def extract(
    path: Path, digest: str, cache: Path | None, on_page: Callable[[], None] = lambda: None
) -> FileText | Unreadable:
    """Read the file now, and keep what it gave in the cache (the caller looked there first)."""
    extracted = _read(path, on_page)
    if cache is not None:
        write_json(_entry(cache, digest), _to_json(extracted), indent=None)
    return extracted


def _read(path: Path, on_page: Callable[[], None]) -> FileText | Unreadable:
    try:
        if path.name.lower().endswith(WORD_SUFFIXES):
            from goldenset.corpus.docx import read_docx

            word = read_docx(path)
            return FileText(word.title, word.text, Places(headings=word.headings))
        from goldenset.corpus.pdf import read_pdf

        pdf = read_pdf(path, on_page)
    except Unreadable as unreadable:
        return unreadable
    if not pdf.text.strip():
        return Unreadable(
            SkipReason.SCANNED,
            f"no text layer on any of its {pdf.page_count} pages (a scan?); {OCR_HINT}",
        )
    return FileText(pdf.title, pdf.text, Places(pages=pdf.pages), pdf.page_count, pdf.textless)


def _entry(cache: Path, digest: str) -> Path:
    return cache / f"v{EXTRACTION_VERSION}" / digest[:2] / f"{digest}.json"


def _to_json(extracted: FileText | Unreadable) -> dict:
    if isinstance(extracted, Unreadable):
        return {"skip": extracted.reason, "detail": extracted.detail}
    return {
        "title": extracted.title,
        "text": extracted.text,
        "places": extracted.places.to_json(),
        "pages": extracted.pages,
        "textless": list(extracted.textless),
    }


def _from_json(data: dict) -> FileText | Unreadable:
    if "skip" in data:
        return Unreadable(str(data["skip"]), str(data["detail"]))
    return FileText(
        str(data["title"]),
        str(data["text"]),
        Places.from_json(data["places"]),
        int(data["pages"]),
        tuple(int(p) for p in data["textless"]),
    )
