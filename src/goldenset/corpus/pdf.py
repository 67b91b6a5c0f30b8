"""Read a PDF's text page by page with PDFium (pypdfium2), chosen by measurement: see
benchmarks/pdf_extraction.py and docs/pdfs.md.

Only one page is open at a time, so a 2,000-page file takes the memory of one page (PDFium reads
the file lazily). Lines come in PDFium's reading order with their height on the page; the rest
(running headers, paragraphs, hyphens) is goldenset.corpus.layout's. A page PDFium cannot load
(a damaged page object) is left out and named, and the other pages are read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pypdfium2 as pdfium

from goldenset.corpus.documents import SkipReason, Unreadable
from goldenset.corpus.layout import Extracted, Line, assemble
from goldenset.corpus.titles import is_placeholder

ZERO_PAGES = "a PDF of zero pages"
EMPTY_TREE = re.compile(rb"/Type\s*/Pages\b[^>]*/Count\s+0\b")
EMPTY_TREE_MAX_BYTES = 1 << 16


def read_pdf(path: Path, on_page: Callable[[], None] = lambda: None) -> Extracted:
    """The PDF's text and pages; raises Unreadable for an encrypted, broken or empty file.

    `on_page` is called after each page, for a progress bar."""
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        raise _unreadable(error, path) from None
    try:
        pages, damaged = [], []
        for index in range(len(document)):
            try:
                pages.append(_page_lines(document, index))
            except pdfium.PdfiumError:
                pages.append([])
                damaged.append(index + 1)
            on_page()
        title = document.get_metadata_value("Title").strip()
    finally:
        document.close()
    if not pages:
        raise Unreadable(SkipReason.NO_PAGES, ZERO_PAGES)
    assembled = with_damaged(assemble(pages), tuple(damaged))
    # the file's own title first; else the one its first page shows (assembled.title)
    return assembled if is_placeholder(title) else replace(assembled, title=title)


def with_damaged(extracted: Extracted, damaged: tuple[int, ...]) -> Extracted:
    """The document with its damaged pages named as such, not as pages without a text layer
    (OCR would not bring them back)."""
    textless = tuple(page for page in extracted.textless if page not in damaged)
    return replace(extracted, textless=textless, damaged=damaged)


def _unreadable(error: pdfium.PdfiumError, path: Path) -> Unreadable:
    if getattr(error, "err_code", None) == pdfium.raw.FPDF_ERR_PASSWORD:
        return Unreadable(
            SkipReason.ENCRYPTED,
            "encrypted PDF: save an unprotected copy (e.g. qpdf --decrypt in.pdf out.pdf)",
        )
    # PDFium refuses a document whose page tree is empty without an error of its own (it reports
    # the previous failure's): a small file that says so is one
    if path.stat().st_size < EMPTY_TREE_MAX_BYTES and EMPTY_TREE.search(path.read_bytes()):
        return Unreadable(SkipReason.NO_PAGES, ZERO_PAGES)
    return Unreadable(SkipReason.CORRUPT, f"not a readable PDF ({error}): is the file complete?")


def page_count(path: Path) -> int:
    """Pages in the PDF, 0 when it cannot be opened (reading it will say why)."""
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError:
        return 0
    try:
        return len(document)
    finally:
        document.close()


def _page_lines(document: pdfium.PdfDocument, index: int) -> list[Line]:
    page = document[index]
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        lines, start = [], 0
        # PDFium's text has one character per text-page character, lines ending in "\r\n"
        for raw in text.split("\r\n"):
            if raw.strip():
                first = start + len(raw) - len(raw.lstrip())
                last = start + len(raw.rstrip()) - 1  # lower when PDFium joined hyphenated lines
                lines.append(
                    Line(
                        raw,
                        textpage.get_charbox(first)[1],
                        textpage.get_charbox(last)[1],
                        pdfium.raw.FPDFText_GetFontSize(textpage.raw, first),
                    )
                )
            start += len(raw) + 2
        return lines
    finally:
        textpage.close()
        page.close()
