"""Cut document texts into chunks given as character spans, so every chunk is text[start:end].

Every function here returns spans `(start, end)` into the text it was given: ordered, non-empty,
trimmed of surrounding whitespace, and together covering every non-whitespace character.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

import pandas as pd

from goldenset.params import ChunkParams

Span = tuple[int, int]

CHUNK_COLUMNS = ["chunk_id", "doc_id", "start", "end", "text", "sha256"]

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


def _segments(text: str, cuts: Sequence[int], start: int = 0, end: int | None = None) -> list[Span]:
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
    return _segments(text, cuts)


def paragraph_spans(text: str) -> list[Span]:
    """Paragraphs: runs of text separated by blank lines (lines holding only whitespace)."""
    return _segments(text, [m.start() for m in _BLANK_LINE.finditer(text)])


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
    return _segments(text, cuts)


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


def char_spans(text: str, size: int, overlap: int = 0) -> list[Span]:
    """Windows of at most `size` characters, cut at whitespace where possible."""
    whole = trim_span(text, 0, len(text))
    return [] if whole is None else pack_spans([whole], size, overlap, text=text)


def token_spans(text: str, tokenizer: Any, size: int, overlap: int = 0) -> list[Span]:
    """Windows of at most `size` tokens of a Hugging Face fast tokenizer, cut at token boundaries.

    Characters the tokenizer drops (zero-width or control characters) between two windows go
    with the earlier window, so no character falls between chunks.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("token chunking needs a fast (Rust) tokenizer for its offset mapping")
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"need 0 <= overlap < size, got size={size}, overlap={overlap}")
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = [(s, e) for s, e in encoding["offset_mapping"] if e > s]
    if not offsets:
        return _segments(text, [])
    firsts = list(range(0, max(len(offsets) - overlap, 1), size - overlap))
    spans = []
    for number, first in enumerate(firsts):
        last = min(first + size, len(offsets)) - 1
        start = 0 if number == 0 else offsets[first][0]
        is_final = number == len(firsts) - 1
        end = len(text) if is_final else max(offsets[last][1], offsets[firsts[number + 1]][0])
        span = trim_span(text, start, end)
        if span is not None:
            spans.append(span)
    return spans


def _refine(text: str, spans: Sequence[Span], size: int, splitter: Callable[[str], list[Span]]):
    """Replace each span longer than `size` by the finer units `splitter` finds inside it."""
    refined: list[Span] = []
    for start, end in spans:
        if end - start <= size:
            refined.append((start, end))
            continue
        inner = splitter(text[start:end])
        refined.extend((start + a, start + b) for a, b in inner)
    return refined


def _markdown_chunks(text: str, size: int, overlap: int) -> list[Span]:
    chunks: list[Span] = []
    for section in markdown_section_spans(text):
        if section[1] - section[0] <= size:
            chunks.append(section)
            continue
        units = _refine(text, [section], size, paragraph_spans)
        units = _refine(text, units, size, sentence_spans)
        chunks.extend(pack_spans(units, size, overlap, text=text))
    return chunks


def chunk_document(text: str, params: ChunkParams, tokenizer: Any = None) -> list[Span]:
    """The chunk spans of one document under the configured strategy.

    none: the whole document. chars: windows of `size` characters. tokens: windows of `size`
    tokens of `tokenizer`. sentences / paragraphs: whole units packed into windows of `size`
    characters (a paragraph longer than `size` is packed by its sentences). markdown: one chunk
    per heading section; a section longer than `size` is packed by paragraphs, then sentences,
    never across sections. Overlap is in the unit of `size`.
    """
    size, overlap = params.max_size, params.overlap
    strategy = params.strategy
    if strategy == "none":
        return _segments(text, [])
    if strategy == "chars":
        return char_spans(text, size, overlap)
    if strategy == "tokens":
        if tokenizer is None:
            raise ValueError("chunk.strategy 'tokens' needs the embedding model's tokenizer")
        return token_spans(text, tokenizer, size, overlap)
    if strategy == "sentences":
        return pack_spans(sentence_spans(text), size, overlap, text=text)
    if strategy == "paragraphs":
        units = _refine(text, paragraph_spans(text), size, sentence_spans)
        return pack_spans(units, size, overlap, text=text)
    if strategy == "markdown":
        return _markdown_chunks(text, size, overlap)
    raise ValueError(f"unknown chunk.strategy {strategy!r}")


def chunk_documents(docs: pd.DataFrame, params: ChunkParams, tokenizer: Any = None) -> pd.DataFrame:
    """One row per chunk: chunk_id "<doc_id>#<i>", doc_id, start, end, text, sha256.

    Documents keep their input order; a document's chunks are contiguous and in text order.
    """
    rows: dict[str, list] = {column: [] for column in CHUNK_COLUMNS}
    for doc_id, text in zip(docs["doc_id"], docs["text"], strict=True):
        for number, (start, end) in enumerate(chunk_document(text, params, tokenizer)):
            chunk_text = text[start:end]
            rows["chunk_id"].append(f"{doc_id}#{number}")
            rows["doc_id"].append(doc_id)
            rows["start"].append(start)
            rows["end"].append(end)
            rows["text"].append(chunk_text)
            rows["sha256"].append(hashlib.sha256(chunk_text.encode("utf-8")).hexdigest())
    frame = pd.DataFrame(rows, columns=CHUNK_COLUMNS)
    return frame.astype({"chunk_id": str, "doc_id": str, "start": "int64", "end": "int64"})
