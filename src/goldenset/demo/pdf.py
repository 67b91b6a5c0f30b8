"""The demo's abstracts as PDF files, written with PDFium (pypdfium2, which goldenset reads PDFs
with), so `goldenset demo docs --pdf` needs nothing more than goldenset.

Each abstract is laid out on small (A6) pages, as a pocket manual is, so most abstracts span two
pages and a question's page says something: a title in a larger font (which ingest takes as the
document's title, as it would a real paper's), the text in lines of at most WRAP characters, and
the page number at the foot of each page (ingest drops it where the numbers step by one across
pages; a one-page file keeps its "1").
"""

from __future__ import annotations

import ctypes
import textwrap
import unicodedata
from pathlib import Path
from typing import NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

PAGE_WIDTH, PAGE_HEIGHT = 298, 420  # A6, in points
MARGIN = 36


class Style(NamedTuple):
    font: str  # one of the standard fonts every PDF reader has
    size: float
    leading: float
    width: int  # characters a line


BODY = Style("Helvetica", 9.0, 12.0, 46)
TITLE = Style("Helvetica-Bold", 12.0, 15.0, 36)
# what Helvetica's encoding (Windows-1252) has no glyph for, written as a reader would type it;
# mu as the micro sign, which it has (NFKC makes a micro sign Greek)
SPELLED = {"−": "-", "≤": "<=", "≥": ">=", "∼": "~", "′": "'", "″": '"', "\u200b": "", "μ": "µ"}


def typeable(text: str) -> str:
    """`text` in the characters the standard PDF fonts can show: Greek letters by name
    ("β" -> "beta"), superscripts and subscripts as digits, the rest of the SPELLED table."""
    return "".join(_typeable_char(char) for char in unicodedata.normalize("NFKC", text))


def _typeable_char(char: str) -> str:
    if char in SPELLED:
        return SPELLED[char]
    try:
        char.encode("cp1252")
        return char
    except UnicodeEncodeError:
        name = unicodedata.name(char, "")
    if name.startswith("GREEK"):
        return name.split()[-1].lower()
    return "?"


def write_pdf(path: Path, title: str, text: str) -> int:
    """Write one document as a PDF; the number of its pages."""
    document = pdfium.PdfDocument.new()
    lines = [(TITLE, line) for line in _wrapped(title, TITLE)] + [(BODY, "")]
    for paragraph in text.split("\n\n"):
        lines += [(BODY, line) for line in (*_wrapped(paragraph, BODY), "")]
    pages = 0
    while lines:
        pages += 1
        lines = _fill_page(document, pages, lines)
    document.save(str(path))
    document.close()
    return pages


def _wrapped(text: str, style: Style) -> list[str]:
    # never at a hyphen: a compound cut at a line end would read as a hyphenated word
    return textwrap.wrap(
        typeable(text), style.width, break_on_hyphens=False, break_long_words=False
    )


def _fill_page(
    document: pdfium.PdfDocument, number: int, lines: list[tuple[Style, str]]
) -> list[tuple[Style, str]]:
    """Lay lines onto a new page from the top; the lines that did not fit."""
    page = document.new_page(PAGE_WIDTH, PAGE_HEIGHT)
    y = PAGE_HEIGHT - MARGIN
    while lines and y - lines[0][0].leading >= MARGIN:
        style, line = lines.pop(0)
        y -= style.leading
        if line:
            _place(document, page, style, line, MARGIN, y)
    footer = str(number)
    _place(document, page, BODY, footer, PAGE_WIDTH / 2 - 2 * len(footer), MARGIN / 2)
    pdfium_c.FPDFPage_GenerateContent(page.raw)
    page.close()
    return lines


def _place(
    document: pdfium.PdfDocument, page: pdfium.PdfPage, style: Style, text: str, x: float, y: float
) -> None:
    item = pdfium_c.FPDFPageObj_NewTextObj(
        document.raw, style.font.encode(), ctypes.c_float(style.size)
    )
    wide = ctypes.create_string_buffer((text + "\0").encode("utf-16-le"))
    pdfium_c.FPDFText_SetText(item, ctypes.cast(wide, ctypes.POINTER(pdfium_c.FPDF_WCHAR)))
    pdfium_c.FPDFPageObj_Transform(item, 1, 0, 0, 1, x, y)
    pdfium_c.FPDFPage_InsertObject(page.raw, item)
