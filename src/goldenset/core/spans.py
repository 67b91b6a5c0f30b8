"""Character spans of a text: sentences, paragraphs, markdown sections, and windows packed from
them. Chunking (goldenset.chunking.strategies) and the passages the question writer is asked about
(goldenset.generation.passages) both cut text with these, so an edit to how chunks are made
never changes the passages, and with them the answers already paid for.

Every function here returns spans `(start, end)` into the text it was given: ordered, non-empty,
trimmed of surrounding whitespace, and together covering every non-whitespace character.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

Span = tuple[int, int]

# Words ending in a period that rarely end a sentence; "etc." is left out on purpose because it
# usually does end one when a capital follows.
_ABBREVIATIONS = frozenset(
    """e.g. i.e. al. fig. figs. dr. drs. mr. mrs. ms. prof. vs. cf. eq. eqs. ref. refs. approx.
    st. jr. sr. inc. ltd. co. corp. vol. pp. p. ch. sec. tab. resp. ca. viz. no. nos. dept. est.
    min. max. jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec.""".split()  # noqa: SIM905
)
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+")
_OPENERS = "\"'“‘([{"
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")
_LINE_BREAK = re.compile(r"\n")
# A line that starts a list item or a heading ends whatever came before it.
_BLOCK_START = re.compile(r"[^\S\n]{0,3}(?:#{1,6}(?:\s|$)|[-*+]\s|\d{1,9}[.)]\s)")
_ATX_HEADING = re.compile(r"[ ]{0,3}#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")


def trim_span(text: str, start: int, end: int) -> Span | None:
    """The span without its leading and trailing whitespace, or None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def segments(text: str, cuts: Sequence[int], start: int = 0, end: int | None = None) -> list[Span]:
    """Cut text[start:end] at the given positions; trimmed, empty pieces dropped."""
    end = len(text) if end is None else end
    bounds = [start, *sorted(c for c in set(cuts) if start < c < end), end]
    spans = (trim_span(text, a, b) for a, b in pairwise(bounds))
    return [span for span in spans if span is not None]


def _is_abbreviation(text: str, punct_start: int) -> bool:
    """True when the period at punct_start closes an abbreviation or an initial, not a sentence."""
    word_start = punct_start
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start : punct_start + 1].lstrip(_OPENERS)
    return word.lower() in _ABBREVIATIONS or (
        _INITIALS.fullmatch(word) is not None and (len(word) > 2 or word[0].isupper())
    )


def _starts_sentence(char: str) -> bool:
    return char.isupper() or char.isdigit() or char in _OPENERS


def _line_cuts(text: str) -> list[int]:
    """Single line breaks that end a unit: before a heading or list item, and after a heading."""
    cuts = []
    for match in _LINE_BREAK.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        after_heading = _ATX_HEADING.match(text, line_start, match.start()) is not None
        if after_heading or _BLOCK_START.match(text, match.end()):
            cuts.append(match.start())
    return cuts


def sentence_spans(text: str) -> list[Span]:
    """Sentences: cut after . ! ? when whitespace and a capital, digit, quote or bracket follow;
    also at blank lines and at line breaks around headings and list items.

    Abbreviations ("e.g.", "et al.", "Fig.") and initials ("J. Smith") do not end a sentence.
    """
    cuts = [m.start() for m in _BLANK_LINE.finditer(text)] + _line_cuts(text)
    for match in _SENTENCE_END.finditer(text):
        following = match.end()
        while following < len(text) and text[following].isspace():
            following += 1
        if following == len(text) or not _starts_sentence(text[following]):
            continue
        lone_period = text[match.start()] == "." and match.end() - match.start() == 1
        if lone_period and _is_abbreviation(text, match.start()):
            continue
        cuts.append(match.end())
    return segments(text, cuts)


def paragraph_spans(text: str) -> list[Span]:
    """Paragraphs: runs of text separated by blank lines (lines holding only whitespace)."""
    return segments(text, [m.start() for m in _BLANK_LINE.finditer(text)])


def markdown_section_spans(text: str) -> list[Span]:
    """Sections: each starts at an ATX heading line (# .. ######) outside fenced code blocks;
    text before the first heading is a section of its own."""
    cuts = []
    fence: str | None = None
    line_start = 0
    while line_start < len(text):
        line_end = text.find("\n", line_start)
        line_end = len(text) if line_end < 0 else line_end
        opener = _FENCE.match(text, line_start, line_end)
        if fence is None and opener:
            fence = opener.group(1)
        elif fence is not None:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
                fence = None
        elif _ATX_HEADING.match(text, line_start, line_end):
            cuts.append(line_start)
        line_start = line_end + 1
    return segments(text, cuts)


def _hard_cut(text: str | None, start: int, limit: int, beyond: int) -> int:
    """Where to end a piece that starts at `start` and may not pass `limit`: where whitespace
    begins, if it does in the second half of the piece and after `beyond`; else at the limit."""
    if text is None:
        return limit
    lowest = max(start + max(1, (limit - start) // 2), beyond + 1)
    for cut in range(limit, lowest - 1, -1):
        if text[cut].isspace() and not text[cut - 1].isspace():
            return cut
    return limit


def _split_unit(text: str | None, start: int, end: int, size: int, overlap: int) -> list[Span]:
    """Split one span longer than `size` into pieces of at most `size` characters."""
    pieces: list[Span] = []
    position = start
    last_end = start
    while position < end:
        if text is not None and text[position].isspace():
            position += 1
            continue
        if end - position <= size:
            cut = end
        else:
            # each piece must end later than the one before, or an overlap could repeat it
            cut = _hard_cut(text, position, position + size, beyond=last_end)
        piece = (position, cut) if text is None else trim_span(text, position, cut)
        if piece is None or piece[1] <= last_end:
            # only whitespace follows the overlap within reach: drop the overlap
            position = last_end
            continue
        pieces.append(piece)
        last_end = piece[1]
        if cut >= end:
            break
        next_position = max(cut - overlap, position + 1)
        # an overlap that starts mid-word would repeat a fragment; start at the next word instead
        while text is not None and next_position < cut and not text[next_position - 1].isspace():
            next_position += 1
        position = next_position
    return pieces


def pack_spans(
    spans: Sequence[Span], size: int, overlap: int = 0, text: str | None = None
) -> list[Span]:
    """Greedily pack consecutive units into windows of at most `size` characters (end - start).

    A unit longer than `size` is split by characters, at whitespace when `text` is given. With
    `overlap`, a window starts with the trailing units of the previous window that span at most
    `overlap` characters, as long as the new window still gains a unit. No overlap is carried
    into or out of a unit that had to be split.
    """
    if size <= 0 or overlap < 0:
        raise ValueError(f"need size > 0 and overlap >= 0, got size={size}, overlap={overlap}")
    units = list(spans)
    windows: list[Span] = []
    first = 0
    while first < len(units):
        start, end = units[first]
        if end - start > size:
            windows.extend(_split_unit(text, start, end, size, overlap))
            first += 1
            continue
        last = first
        while last + 1 < len(units) and units[last + 1][1] - start <= size:
            last += 1
        windows.append((start, units[last][1]))
        first = _overlap_start(units, first, last, size, overlap)
    return windows


def _overlap_start(units: Sequence[Span], first: int, last: int, size: int, overlap: int) -> int:
    """Index of the unit the next window starts at: the earliest unit after `first` whose run up to
    `last` fits in `overlap` and leaves room for the unit after `last`."""
    following = last + 1
    if following >= len(units) or overlap == 0:
        return following
    next_end = units[following][1]
    if next_end - units[following][0] > size:
        return following
    candidate = first + 1
    while candidate <= last and (
        units[last][1] - units[candidate][0] > overlap or next_end - units[candidate][0] > size
    ):
        candidate += 1
    return candidate
