"""PDF and Word files made from known text by real writers (ReportLab, python-docx), for the
ingest tests, the PDF tutorial's fixture and the extraction benchmark.

`write_text_pdf` lays the text out itself, so the test knows what a reader must recover: the
words in reading order, one or two columns, a running header and a page-number footer on every
page, long words hyphenated at line ends, and the page on which each sentence starts.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

FONT, SIZE, LEADING = "Helvetica", 10, 13
MARGIN = 60
GUTTER = 24
MIN_SPLIT = 3  # letters kept on either side of a hyphen
HEADER_TEXT = "Acme Field Manual, revision 7"
FOOTER_TEXT = "Page {page} of the Acme Field Manual"


@dataclass(frozen=True)
class Laid:
    """Where the text went: the page (1-based) each sentence starts on, and the page count."""

    sentence_pages: list[tuple[str, int]]
    pages: int


def sentences_of(text: str) -> list[str]:
    """The sentences the layout tracks: each paragraph's words, cut after . ! or ?"""
    sentences = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        words = paragraph.split()
        cuts = sorted(_sentence_start_words(words)) + [len(words)]
        sentences += [" ".join(words[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
    return sentences


def write_text_pdf(
    path: Path,
    text: str,
    *,
    columns: int = 1,
    header: str | None = HEADER_TEXT,
    footer: str | None = FOOTER_TEXT,
    hyphenate: bool = True,
    table: list[list[str]] | None = None,
    encrypt: str | None = None,
) -> Laid:
    """Write `text` (paragraphs separated by blank lines) as a PDF; return where it went."""
    pdf = canvas.Canvas(str(path), pagesize=A4, encrypt=encrypt, invariant=1)
    width, height = A4
    column_width = (width - 2 * MARGIN - GUTTER * (columns - 1)) / columns
    lines_per_column = int((height - 2 * MARGIN) // LEADING)
    lines: list[tuple[str, list[int]]] = []  # each line, and the sentence indices starting on it
    sentence_index = 0
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        words = paragraph.split()
        starts = _sentence_start_words(words)
        line: list[str] = []
        starting: list[int] = []
        for position, word in enumerate(words):
            first = None
            if position in starts:
                first, sentence_index = sentence_index, sentence_index + 1
            if not line or stringWidth(" ".join([*line, word]), FONT, SIZE) <= column_width:
                line.append(word)
                starting += [first] if first is not None else []
                continue
            head, tail = _split(line, word, column_width) if hyphenate else ("", word)
            if head:
                line.append(head)
                starting += [first] if first is not None else []
            lines.append((" ".join(line), starting))
            line, starting = [tail], [first] if first is not None and not head else []
        lines.append((" ".join(line), starting))
        lines.append(("", []))  # a blank line between paragraphs
    sentences = sentences_of(text)
    pages: list[int] = [0] * len(sentences)
    page, row, column = 1, 0, 0

    def furnish() -> None:
        pdf.setFont(FONT, SIZE)
        if header:
            pdf.drawString(MARGIN, height - MARGIN / 2, header)
        if footer:
            pdf.drawCentredString(width / 2, MARGIN / 2, footer.format(page=page))

    furnish()
    for content, starting in lines:
        if row == lines_per_column:
            row, column = 0, column + 1
            if column == columns:
                pdf.showPage()
                page, column = page + 1, 0
                furnish()
        if not content and row == 0:
            continue
        x = MARGIN + column * (column_width + GUTTER)
        pdf.drawString(x, height - MARGIN - row * LEADING, content)
        for index in starting:
            pages[index] = page
        row += 1
    if table:
        pdf.showPage()
        page += 1
        furnish()
        for r, cells in enumerate(table):
            for c, cell in enumerate(cells):
                pdf.drawString(MARGIN + c * 150, height - MARGIN - r * LEADING * 1.5, cell)
    pdf.showPage()
    pdf.save()
    return Laid(list(zip(sentences, pages, strict=True)), page)


def _sentence_start_words(words: list[str]) -> set[int]:
    starts = {0}
    for index, word in enumerate(words[:-1]):
        if word.endswith((".", "!", "?")):
            starts.add(index + 1)
    return starts


def _split(line: list[str], word: str, width: float) -> tuple[str, str]:
    """The longest head of `word` that fits on the line with a hyphen, and the rest."""
    letters = word.rstrip(".,;:!?")
    if not letters.isalpha():
        return "", word
    for cut in range(len(letters) - MIN_SPLIT, MIN_SPLIT - 1, -1):
        head = word[:cut] + "-"
        if stringWidth(" ".join([*line, head]), FONT, SIZE) <= width:
            return head, word[cut:]
    return "", word


def write_image_pdf(path: Path, pages: int = 2) -> None:
    """A scan: every page one picture of text, no text layer."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader

    pdf = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    for page in range(pages):
        picture = Image.new("L", (600, 800), 255)
        ImageDraw.Draw(picture).text((40, 40), f"Scanned page {page + 1}", fill=0)
        buffer = io.BytesIO()
        picture.save(buffer, format="PNG")
        pdf.drawImage(ImageReader(io.BytesIO(buffer.getvalue())), 0, 0, *A4)
        pdf.showPage()
    pdf.save()


def write_docx(path: Path, sections: list[tuple[int, str, str]]) -> None:
    """A Word file of (heading level, heading, body paragraph) sections, by python-docx."""
    from docx import Document

    document = Document()
    for level, heading, body in sections:
        document.add_heading(heading, level=level)
        for paragraph in re.split(r"\n\s*\n", body.strip()):
            document.add_paragraph(" ".join(paragraph.split()))
    document.save(str(path))


def merge_pdfs(folder: Path, parts: list[str], into: str) -> None:
    """The parts' pages, in order, as one PDF named ``into``; the parts removed."""
    writer = PdfWriter()
    for part in parts:
        writer.append(str(folder / part))
        (folder / part).unlink()
    writer.write(str(folder / into))
