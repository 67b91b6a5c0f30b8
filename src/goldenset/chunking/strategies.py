"""Cut document texts into chunks given as character spans, so every chunk is text[start:end].

The sentences, paragraphs and sections chunks are packed from are goldenset.core.spans'; what is
here is the chunking under test (chunk.* params), which the question writer never uses.

Each strategy is one entry of STRATEGIES: its name (a value of chunk.strategy, which
goldenset.chunking.params reads from here when params are validated) and its span function.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldenset.core.spans import (
    Span,
    markdown_section_spans,
    pack_spans,
    paragraph_spans,
    segments,
    sentence_spans,
    trim_span,
)

if TYPE_CHECKING:
    from goldenset.chunking.params import ChunkParams

CHUNK_COLUMNS = ["chunk_id", "doc_id", "start", "end", "text", "sha256"]


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
        return segments(text, [])
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


def _whole(text: str, size: int, overlap: int, tokenizer: Any) -> list[Span]:
    return segments(text, [])


def _chars(text: str, size: int, overlap: int, tokenizer: Any) -> list[Span]:
    return char_spans(text, size, overlap)


def _tokens(text: str, size: int, overlap: int, tokenizer: Any) -> list[Span]:
    return token_spans(text, tokenizer, size, overlap)


def _sentences(text: str, size: int, overlap: int, tokenizer: Any) -> list[Span]:
    return pack_spans(sentence_spans(text), size, overlap, text=text)


def _paragraphs(text: str, size: int, overlap: int, tokenizer: Any) -> list[Span]:
    units = _refine(text, paragraph_spans(text), size, sentence_spans)
    return pack_spans(units, size, overlap, text=text)


def _markdown(text: str, size: int, overlap: int, tokenizer: Any) -> list[Span]:
    chunks: list[Span] = []
    for section in markdown_section_spans(text):
        if section[1] - section[0] <= size:
            chunks.append(section)
            continue
        units = _refine(text, [section], size, paragraph_spans)
        units = _refine(text, units, size, sentence_spans)
        chunks.extend(pack_spans(units, size, overlap, text=text))
    return chunks


# (text, chunk.max_size, chunk.overlap, the tokenizer or None) -> the chunk spans, in text order
Cut = Callable[[str, int, int, Any], list[Span]]


@dataclass(frozen=True)
class Strategy:
    """One chunk.strategy: how it cuts a document, and whether it counts in tokens of the
    embedding model's tokenizer (the chunk stage loads it only for such a strategy)."""

    spans: Cut
    needs_tokenizer: bool = False


# The chunking strategies, the one place to add one (its name is then a valid chunk.strategy).
# none: the whole document. chars: windows of max_size characters. tokens: windows of max_size
# tokens of the embedding model's tokenizer. sentences / paragraphs: whole units packed into
# windows of max_size characters (a paragraph longer than max_size is packed by its sentences).
# markdown: one chunk per heading section; a section longer than max_size is packed by
# paragraphs, then sentences, never across sections. Overlap is in the unit of max_size.
STRATEGIES: dict[str, Strategy] = {
    "none": Strategy(_whole),
    "chars": Strategy(_chars),
    "tokens": Strategy(_tokens, needs_tokenizer=True),
    "sentences": Strategy(_sentences),
    "paragraphs": Strategy(_paragraphs),
    "markdown": Strategy(_markdown),
}


def strategy_names() -> list[str]:
    """The values chunk.strategy accepts."""
    return list(STRATEGIES)


def chunk_document(text: str, params: ChunkParams, tokenizer: Any = None) -> list[Span]:
    """The chunk spans of one document under the configured strategy (see STRATEGIES)."""
    strategy = STRATEGIES.get(params.strategy)
    if strategy is None:
        raise ValueError(f"unknown chunk.strategy {params.strategy!r}")
    if strategy.needs_tokenizer and tokenizer is None:
        raise ValueError(
            f"chunk.strategy {params.strategy!r} needs the embedding model's tokenizer"
        )
    return strategy.spans(text, params.max_size, params.overlap, tokenizer)


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
