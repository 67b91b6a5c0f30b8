"""A document's title from its own structure: the first Markdown or reStructuredText heading,
never a metadata line ("PMID: 12345") or a bare number."""

from __future__ import annotations

import re

_MD_ATX = re.compile(r"[ ]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE = re.compile(r"[ ]{0,3}(?:```|~~~)")
_SETEXT = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*$")
_RST_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*$")
# "PMID: 12345", "DOI: 10.1000/x", "Date: 2021-03-04": a record's metadata, not its title
_METADATA = re.compile(r"^\s*[A-Za-z][\w -]{0,20}:\s*[\w./-]*\d[\w./-]*\s*$")
_LETTERS = re.compile(r"[^\W\d_]{2,}")
# what writers fill a file's title with when its author gave none: "Untitled", "Microsoft Word -
# report.doc", Word's "Document1", PowerPoint's "Slide 1"; or nothing at all
PLACEHOLDER = re.compile(
    r"\s*(?:untitled|microsoft (?:word|powerpoint|excel) - |(?:document|slide)\s*\d+\s*$|$)",
    re.IGNORECASE,
)


def is_title(line: str) -> bool:
    """Whether a heading (or file name) can title a document: it has a word of letters and is
    not a metadata line. A number ("12") or "PMID: 12345" names nothing a reader would search."""
    return bool(_LETTERS.search(line)) and not _METADATA.match(line)


def is_placeholder(title: str) -> bool:
    """Whether a file's own title is one its writer filled in (or none): it names nothing."""
    return PLACEHOLDER.match(title) is not None


def markdown_title(text: str) -> str | None:
    """The text of the first heading (# Title, or Title underlined with === / ---) outside code."""
    lines = text.split("\n")
    in_fence = False
    for number, line in enumerate(lines):
        if _MD_FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        atx = _MD_ATX.match(line)
        if atx and is_title(atx.group(1).strip()):
            return atx.group(1).strip()
        underline = lines[number + 1] if number + 1 < len(lines) else ""
        if is_title(line.strip()) and _SETEXT.match(underline) and not _MD_ATX.match(line):
            return line.strip()
    return None


def rst_title(text: str) -> str | None:
    """The first section title: a line underlined (and maybe overlined) with punctuation."""
    lines = text.split("\n")
    for number in range(len(lines) - 1):
        title, underline = lines[number].strip(), lines[number + 1].rstrip()
        if (
            is_title(title)
            and not _RST_ADORNMENT.match(lines[number])
            and _RST_ADORNMENT.match(underline)
            and len(underline) >= len(title)
        ):
            return title
    return None
