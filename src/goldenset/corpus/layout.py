"""From the lines a PDF reader found on each page to one document text with its page offsets.

Pure functions: the reader (goldenset.corpus.pdf) gives each page's lines in reading order with
their height on the page; this module drops running headers and footers, joins the lines of a
paragraph, rejoins words hyphenated at a line end, and unfolds ligatures.

A running header or footer is a line at the top or bottom edge of its page whose text, with
digits masked, is at that edge of at least a third of the pages (and of two), or of most pages of
a run of at least three consecutive pages (a chapter's header in a long manual). A lone page
number ("12", "Page 12", "12 of 40") at an edge goes where the numbers step by one from a page to
the next: a one-page invoice ending "Total" / "42" keeps its 42.
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
MARKED_HYPHEN = re.compile("(.?)\ufffe ?", re.DOTALL)
SPLIT_LOOKAHEAD = 8  # characters after a line-end hyphen that tell a split word
LINE_END_HYPHEN = "\u00ad"  # a "-" ending a line before a lowercase letter, PDFium left unmarked
SPLIT_WORD = re.compile(r"(\w+)\u00ad(\w+)")
COMPOUND = re.compile(r"\w+-\w+")
SUSPENDED = {"and", "or", "to", "nor"}  # "pre- and post-": a hyphen left hanging, not a split
PAGE_NUMBER = re.compile(r"(?:page|p\.|seite|página)?\s*#(?:\s*(?:of|/)\s*#)?", re.IGNORECASE)
EDGE_LINES = 2  # lines looked at on each edge of a page
RUNNING_SHARE = 1 / 3
# a line on most pages of a run this long is running; a longer run where it is on most pages has
# this many consecutive pages where it is on most, so windows of this length find every run
RUN_PAGES = 3
PARAGRAPH_GAP = 1.5  # a drop this many times the usual line spacing starts a paragraph
TITLE_SIZE = 1.15  # a first page's opening lines this much larger than its usual size title it
TITLE_LINES = 6


@dataclass(frozen=True)
class Line:
    text: str
    y: float  # the height of its first character, growing upwards (PDF coordinates)
    end_y: float | None = None  # of its last: lower when the reader joined hyphenated lines
    size: float = 0.0  # the font size of its first character (0: not known)

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
    opening: str = ""  # the first page's top line, running or not (a folder's shared header)
    damaged: tuple[int, ...] = ()  # page numbers the reader could not load, left out


def masked(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()).casefold())


def _edges(lines: Sequence[Line]) -> list[tuple[str, int]]:
    """The top and bottom lines of a page, by height, EDGE_LINES each: (edge, index)."""
    order = sorted(range(len(lines)), key=lambda i: -lines[i].y)
    return [("top", i) for i in order[:EDGE_LINES]] + [("bottom", i) for i in order[-EDGE_LINES:]]


def running_lines(pages: Sequence[Sequence[Line]]) -> list[set[int]]:
    """For each page, the indices of its lines that are running headers, footers or numbers.

    A line counts as running only at the same edge on other pages: a document's last line at
    the foot of its last page is not its title's line at the top of its first."""
    at_edges = [edge_keys(lines) for lines in pages]
    running = repeated_keys(at_edges, sum(1 for lines in pages if lines))
    numbers = stepping_numbers(
        [_lone_numbers(lines, keys) for lines, keys in zip(pages, at_edges, strict=True)]
    )
    return [
        {i for i, key in keys if key in running} | numbered
        for keys, numbered in zip(at_edges, numbers, strict=True)
    ]


EdgeKey = tuple[str, str]  # ("top" or "bottom", the line's masked text)


def edge_keys(lines: Sequence[Line]) -> list[tuple[int, EdgeKey]]:
    """A page's edge lines as (line index, key); a line of a short page may be at both edges."""
    return [(i, (edge, masked(lines[i].text))) for edge, i in _edges(lines)]


def repeated_keys(at_edges: Sequence[Sequence[tuple[int, EdgeKey]]], pages: int) -> set[EdgeKey]:
    """The keys that repeat as running lines do: on a third of the `pages` with text (and two),
    or on most pages of RUN_PAGES consecutive ones. Lone numbers are left to stepping_numbers:
    a repeated "#" is as often a table's total as a page number."""
    keys = [{key for _, key in page} for page in at_edges]
    counts = Counter(key for page in keys for key in page)
    needed = max(2, RUNNING_SHARE * pages)
    running = {key for key, n in counts.items() if n >= needed}
    for start in range(len(keys) - RUN_PAGES + 1):
        window = Counter(key for page in keys[start : start + RUN_PAGES] for key in page)
        running |= {key for key, n in window.items() if n > RUN_PAGES / 2}
    return {key for key in running if not PAGE_NUMBER.fullmatch(key[1])}


def _lone_numbers(lines: Sequence[Line], keys: Sequence[tuple[int, EdgeKey]]) -> dict[int, int]:
    """A page's lone numbers at its edges ("12", "Page 12", "12 of 40"): {line index: 12}."""
    return {
        i: int(re.search(r"\d+", lines[i].text).group())
        for i, (_, text) in keys
        if PAGE_NUMBER.fullmatch(text)
    }


def stepping_numbers(numbers: Sequence[dict[int, int]]) -> list[set[int]]:
    """For each page, the lines of its lone numbers that step by one from the page before or to
    the page after: page numbers. A number on a page alone (a one-page file's "42") is text."""
    stepping = []
    for index, on_page in enumerate(numbers):
        before = set(numbers[index - 1].values()) if index > 0 else set()
        after = set(numbers[index + 1].values()) if index + 1 < len(numbers) else set()
        stepping.append({i for i, n in on_page.items() if n - 1 in before or n + 1 in after})
    return stepping


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
            if spacing and drop > PARAGRAPH_GAP * spacing:
                parts.append("\n\n")
            elif split_at_line_end(parts[-1], text):
                parts[-1] = parts[-1][:-1] + LINE_END_HYPHEN
            else:
                parts.append(" ")
        parts.append(text)
    return unhyphenate("".join(parts))


def split_at_line_end(before: str, after: str) -> bool:
    """Whether a line ending `before` and the next starting `after` split a word at a hyphen:
    a lowercase letter before it ("hyphen-", not "SUD-") and a lowercase word after it that is
    not the "and"/"or"/"to" of a suspended hyphen ("pre- and post-")."""
    tail = re.match(r"\w+", after)
    return (
        before[-1:] == "-"
        and before[-2:-1].islower()
        and tail is not None
        and after[0].islower()
        and tail.group() not in SUSPENDED
    )


def rejoin(body: str, compounds: set[str]) -> str:
    """Words split by an unmarked hyphen at a line end: "self-\ntest" stays "self-test" when the
    document writes it so elsewhere, else the word is whole again ("systema-\ntic")."""

    def whole(match: re.Match) -> str:
        hyphenated = f"{match.group(1)}-{match.group(2)}"
        return hyphenated if hyphenated in compounds else match.group(1) + match.group(2)

    return SPLIT_WORD.sub(whole, body)


def unhyphenate(text: str) -> str:
    """Words a line end split: PDFium's soft hyphen joins them, unless it ends no word
    (split_at_line_end); ligatures become letters."""

    def join(match: re.Match) -> str:
        after = match.string[match.end() : match.end() + SPLIT_LOOKAHEAD]
        split = split_at_line_end(match.group(1) + "-", after)
        return match.group(1) + ("" if split else "- ")

    text = MARKED_HYPHEN.sub(join, text)
    return LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def _page_break(before: str, body: str, compounds: set[str]) -> tuple[str, bool]:
    """What goes between a page and the next: a line break, or nothing when a word is split
    across the break ("imm-" / "unoregulatory"); and whether the page's last character, that
    hyphen, goes too (it stays only where the document writes the word with one)."""
    if not split_at_line_end(before, body):
        return "\n", False
    head = re.search(r"\w+-$", before)
    tail = re.match(r"\w+", body)
    hyphenated = (head.group() if head else "") + (tail.group() if tail else "")
    return "", hyphenated not in compounds


def assemble(pages: Sequence[Sequence[Line]]) -> Extracted:
    """The document: pages' texts without their running lines, joined by a line break (so a
    sentence across a page break stays one sentence)."""
    running = running_lines(pages)
    bodies = [
        page_text([line for i, line in enumerate(lines) if i not in dropped])
        for lines, dropped in zip(pages, running, strict=True)
    ]
    # the hyphenated words the document writes within a line: a split word keeps its hyphen
    # only where it is one of them
    compounds = set(COMPOUND.findall("\n".join(bodies)))
    parts: list[str] = []
    length, starts, textless = 0, [], []
    for number, (lines, body) in enumerate(zip(pages, bodies, strict=True), start=1):
        body = rejoin(body, compounds) if LINE_END_HYPHEN in body else body
        if not lines:
            textless.append(number)
        if not body:
            continue
        if parts:
            separator, drop_hyphen = _page_break(parts[-1], body, compounds)
            if drop_hyphen:
                parts[-1], length = parts[-1][:-1], length - 1
            parts.append(separator)
            length += len(separator)
        starts.append((length, number))
        parts.append(body)
        length += len(body)
    title = display_title(pages[0]) if pages else ""
    opening = top_line(pages[0]) if pages else ""
    return Extracted("".join(parts), tuple(starts), tuple(textless), len(pages), title, opening)


def top_line(lines: Sequence[Line]) -> str:
    """A page's highest line, its whitespace collapsed as the page's text has it ("" if none)."""
    return " ".join(max(lines, key=lambda line: line.y).text.split()) if lines else ""


def display_title(lines: Sequence[Line]) -> str:
    """The title a first page shows: its opening lines (up to TITLE_LINES) set in a font larger
    than the page's usual one, as papers, reports and manuals set theirs; "" when none is."""
    sizes = [line.size for line in lines if line.size > 0]
    if len(sizes) <= TITLE_LINES:
        return ""
    usual = statistics.median(sizes)
    opening = []
    for line in lines[:TITLE_LINES]:
        if line.size < usual * TITLE_SIZE:
            break
        opening.append(line.text.strip())
    return " ".join(opening)
