"""PDF and Word files to text, paid once: each file's text is kept in cache/extracted under its
content hash (a persist output of ingest, shared through the DVC remote like the other caches),
so a re-ingest of an unchanged folder extracts nothing and one changed file costs one extraction.

What a file could not give (encrypted, scanned, broken) is kept too: a 500-page scan is read once.
Each entry is one file's own: what needs the other files of its folder (a header they all open
with, drop_shared_openings) is worked out on top of the entries, on every run.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from goldenset.core.files import damaged_cache, read_json_cache, write_json
from goldenset.corpus.documents import Skip, SkipReason, Unreadable, counted
from goldenset.corpus.layout import Extracted
from goldenset.corpus.places import Places

log = logging.getLogger("goldenset")

PDF_SUFFIXES = (".pdf",)
WORD_SUFFIXES = (".docx",)
# bump when the text a file gives changes (goldenset.corpus.layout, .pdf, .docx): old entries
# are then never read again
EXTRACTION_VERSION = 3
OCR_HINT = "goldenset does not OCR: run OCR first, e.g. ocrmypdf in.pdf out.pdf"
SHOWN_PAGES = 10  # page numbers a note names before "..."
TITLE_MARK = "{title}"  # where a document's title was in its opening line


@dataclass(frozen=True)
class FileText:
    title: str
    text: str
    places: Places
    pages: int = 0  # a PDF's page count
    textless: tuple[int, ...] = ()  # the PDF pages that have no text layer
    opening: str = ""  # a PDF's first top line, as its text starts with it when it was kept
    damaged: tuple[int, ...] = ()  # the PDF pages PDFium could not load

    def notes(self, source: str) -> list[str]:
        """A line for the pages kept out because they have no text layer, and one for those
        PDFium could not load."""
        lines = []
        if self.textless:
            verb = "has" if len(self.textless) == 1 else "have"
            lines.append(
                f"note: {source}: {len(self.textless):,} of its {counted(self.pages, 'page')} "
                f"{verb} no text layer (p. {_shown(self.textless)}), left out; {OCR_HINT}"
            )
        if self.damaged:
            lines.append(
                f"warning: {source}: PDFium cannot load p. {_shown(self.damaged)} of its "
                f"{counted(self.pages, 'page')} (damaged), left out; the other pages are read"
            )
        return lines

    def without_opening(self) -> FileText:
        """The text without the opening line it starts with, its pages' offsets moved with it;
        itself when it does not start with that line, or is nothing else."""
        rest = self.text[len(self.opening) :]
        body = rest.lstrip()
        if not self.opening or not self.text.startswith(self.opening) or rest == body or not body:
            return self
        cut = len(self.text) - len(body)
        return replace(self, text=body, places=Places(pages=_shifted(self.places.pages, cut)))


def _shown(pages: Sequence[int]) -> str:
    listed = ", ".join(map(str, pages[:SHOWN_PAGES]))
    return listed + (", ..." if len(pages) > SHOWN_PAGES else "")


def _shifted(pages: Sequence[tuple[int, int]], cut: int) -> tuple[tuple[int, int], ...]:
    """Page starts with the text's first `cut` characters gone; a page that held nothing else
    starts where the next one does, and goes."""
    moved = [(max(0, start - cut), page) for start, page in pages]
    return tuple(
        mark
        for mark, after in zip(moved, [*moved[1:], None], strict=True)
        if after is None or after[0] > mark[0]
    )


def drop_shared_openings(texts: Mapping[Path, FileText | Skip]) -> dict[Path, FileText | Skip]:
    """The files' texts without the line that opens most PDFs of their folder beside their titles
    ("GOV.UK guidance — <title>"): a running header, which a one-page file's own pages cannot
    show to be one. Worked out on each run over the cached files, as it needs the whole folder."""
    folders: dict[Path, list[Path]] = defaultdict(list)
    for path, got in texts.items():
        if isinstance(got, FileText) and got.opening:
            folders[path.parent].append(path)
    kept = dict(texts)
    for paths in folders.values():
        shapes = {path: opening_shape(texts[path], path.stem) for path in paths}
        shared = _most_files(shapes.values())
        for path in paths:
            if shared is not None and shapes[path] == shared:
                kept[path] = texts[path].without_opening()
    return kept


def opening_shape(text: FileText, stem: str) -> str:
    """A file's opening line with its title (its own, else its file name) masked: "GOV.UK
    guidance — Tax credits" in tax-credits.pdf is "gov uk guidance {title}"; words only, digits
    masked, so that one file's line is another's. "" when the line does not hold the title beside
    other words: a line shared without the title ("Dear customer") may be the text's own."""
    line = f" {_words(text.opening)} "
    for title in (text.title, stem):
        words = _words(title)
        if words and f" {words} " in line and line.strip() != words:
            return line.replace(f" {words} ", f" {TITLE_MARK} ", 1).strip()
    return ""


def _words(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(re.findall(r"[^\W_]+", text.casefold())))


def _most_files(shapes: Collection[str]) -> str | None:
    """The shape more than half the files (and two) open with."""
    counts = Counter(shape for shape in shapes if shape)
    shape, files = counts.most_common(1)[0] if counts else ("", 0)
    return shape if files >= 2 and files > len(shapes) / 2 else None


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
        return _no_text(pdf)
    return FileText(
        pdf.title,
        pdf.text,
        Places(pages=pdf.pages),
        pdf.page_count,
        pdf.textless,
        pdf.opening,
        pdf.damaged,
    )


def _no_text(pdf: Extracted) -> Unreadable:
    """Why a PDF gave no text: every page damaged, or (some left) none with a text layer."""
    if len(pdf.damaged) == pdf.page_count:
        return Unreadable(
            SkipReason.CORRUPT,
            f"PDFium cannot load any of its {counted(pdf.page_count, 'page')} (damaged): "
            "is the file complete?",
        )
    pages = "its 1 page" if pdf.page_count == 1 else f"any of its {pdf.page_count:,} pages"
    return Unreadable(SkipReason.SCANNED, f"no text layer on {pages} (a scan?); {OCR_HINT}")


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
        "opening": extracted.opening,
        "damaged": list(extracted.damaged),
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
        str(data["opening"]),
        tuple(int(p) for p in data["damaged"]),
    )
