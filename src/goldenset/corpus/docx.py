"""Read a Word file (.docx) with python-docx: paragraphs and tables in document order, headings
kept in the text and, as a heading path ("Setup > Cables"), beside it."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from goldenset.corpus.documents import SkipReason, Unreadable
from goldenset.corpus.titles import is_placeholder

HEADING_STYLE = re.compile(r"(?:Heading|Überschrift|Titre|Título)\s*(\d)", re.IGNORECASE)


@dataclass(frozen=True)
class WordText:
    title: str
    text: str
    headings: tuple[tuple[int, str], ...]  # (first character, heading path)


def read_docx(path: Path) -> WordText:
    """The file's text and heading paths; raises Unreadable when it is not a Word file."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as error:
        raise Unreadable(
            SkipReason.NOT_DOCX,
            f"not a Word .docx file ({type(error).__name__}): an old .doc or another format "
            "renamed? Save it as .docx",
        ) from None
    blocks = []
    for block in document.iter_inner_content():
        if isinstance(block, docx.table.Table):
            rows = (" | ".join(cell.text.strip() for cell in row.cells) for row in block.rows)
            blocks.append((None, "\n".join(rows)))
        else:
            style = block.style.name if block.style is not None else ""
            level = 1 if style == "Title" else _heading_level(style)
            blocks.append((level, block.text))
    text, headings = join_blocks(blocks)
    return WordText(_title(document.core_properties.title or "", headings), text, headings)


def _title(own: str, headings: tuple[tuple[int, str], ...]) -> str:
    """The file's own title, unless Word filled it in ("Microsoft Word - …", "Document1"): then
    its first heading, as a reader sees it; "" when it has none (ingest then takes the name)."""
    if not is_placeholder(own):
        return own
    return headings[0][1] if headings else ""


def _heading_level(style: str) -> int | None:
    match = HEADING_STYLE.fullmatch(style.strip())
    return int(match.group(1)) if match else None


def join_blocks(
    blocks: list[tuple[int | None, str]],
) -> tuple[str, tuple[tuple[int, str], ...]]:
    """Blocks (heading level or None, text) as one text, blank lines between them, and where
    each heading's section starts with its path of enclosing headings."""
    text, headings, path = "", [], []
    for level, raw in blocks:
        block = raw.strip()
        if not block:
            continue
        if text:
            text += "\n\n"
        if level is not None:
            path = [*path[: level - 1], " ".join(block.split())]
            headings.append((len(text), " > ".join(path)))
        text += block
    return text, tuple(headings)
