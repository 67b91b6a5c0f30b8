"""From the lines a PDF reader found on each page to one document text with its page offsets.

Pure functions: the reader (goldenset.corpus.pdf) gives each page's lines in reading order with
their height on the page; this module drops running headers and footers, joins the lines of a
paragraph, rejoins words hyphenated at a line end, and unfolds ligatures.

A running header or footer is a line at the top or bottom edge of its page whose text, with
digits masked, is at an edge of at least a third of the pages (and of two); a lone page number
("12", "Page 12", "12 of 40") at an edge goes on any page.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

LIGATURES = re.compile("[\ufb00-\ufb06]")
SOFT_HYPHEN = "\ufffe"  # PDFium's mark for a hyphen it found at a line end
PAGE_NUMBER = re.compile(r"(?:page|p\.|seite|página)?\s*#(?:\s*(?:of|/)\s*#)?", re.IGNORECASE)
EDGE_LINES = 2  # lines looked at on each edge of a page
RUNNING_SHARE = 1 / 3
PARAGRAPH_GAP = 1.5  # a drop this many times the usual line spacing starts a paragraph


@dataclass(frozen=True)
class Line:
    text: str
    y: float  # the height of its first character, growing upwards (PDF coordinates)
    end_y: float | None = None  # of its last: lower when the reader joined hyphenated lines

    @property
    def last_y(self) -> float:
        return self.y if self.end_y is None else self.end_y


@dataclass(frozen=True)
class Extracted:
    """A document's text, where each page starts in it, and the pages that gave no text."""

    text: str
    pages: tuple[tuple[int, int], ...]  # (first character, page number)
    textless: tuple[int, ...]  # page numbers with no text layer
    page_count: int
    title: str = ""  # the file's own, when it names one


def masked(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()).casefold())


def _edges(lines: Sequence[Line]) -> list[int]:
    """Indices of the top and bottom lines of a page, by height, EDGE_LINES each."""
    order = sorted(range(len(lines)), key=lambda i: -lines[i].y)
    return sorted(set(order[:EDGE_LINES] + order[-EDGE_LINES:]))


def running_lines(pages: Sequence[Sequence[Line]]) -> list[set[int]]:
    """For each page, the indices of its lines that are running headers, footers or numbers."""
    at_edges = [{masked(lines[i].text) for i in _edges(lines)} for lines in pages]
    counts = Counter(text for texts in at_edges for text in texts)
    needed = max(2, RUNNING_SHARE * sum(1 for lines in pages if lines))
    running = {text for text, n in counts.items() if n >= needed}
    return [
        {
            i
            for i in _edges(lines)
            if (m := masked(lines[i].text)) in running or PAGE_NUMBER.fullmatch(m)
        }
        for lines in pages
    ]


def _line_spacing(lines: Sequence[Line]) -> float:
    drops = [a.last_y - b.y for a, b in zip(lines, lines[1:], strict=False) if a.last_y > b.y]
    return statistics.median(drops) if drops else 0.0


def page_text(lines: Sequence[Line]) -> str:
    """A page's lines as text: a paragraph's lines joined by a space, paragraphs by a blank line,
    hyphenated words rejoined."""
    spacing = _line_spacing(lines)
    parts: list[str] = []
    for index, line in enumerate(lines):
        text = " ".join(line.text.split())
        if not text:
            continue
        if parts:
            drop = lines[index - 1].last_y - line.y
            parts.append("\n\n" if spacing and drop > PARAGRAPH_GAP * spacing else " ")
        parts.append(text)
    return unhyphenate("".join(parts))


def unhyphenate(text: str) -> str:
    """Words a line end split: PDFium's soft hyphen joins them; ligatures become letters."""
    text = text.replace(SOFT_HYPHEN + " ", "").replace(SOFT_HYPHEN, "")
    return LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def assemble(pages: Sequence[Sequence[Line]]) -> Extracted:
    """The document: pages' texts without their running lines, joined by a line break (so a
    sentence across a page break stays one sentence)."""
    running = running_lines(pages)
    text, starts, textless = "", [], []
    for number, (lines, dropped) in enumerate(zip(pages, running, strict=True), start=1):
        kept = [line for i, line in enumerate(lines) if i not in dropped]
        body = page_text(kept)
        if not lines:
            textless.append(number)
        if not body:
            continue
        if text:
            text += "\n"
        starts.append((len(text), number))
        text += body
    return Extracted(text, tuple(starts), tuple(textless), len(pages))
