"""Cut document texts into chunks given as character spans, so every chunk is text[start:end].

The sentences, paragraphs and sections chunks are packed from are goldenset.core.spans'; what is
here is the chunking under test (chunk.* params), which the question writer never uses.

Each strategy is one entry of goldenset.chunking.base.STRATEGIES, registered here: its name (a
value of chunk.strategy) and its span function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from goldenset.chunking.base import STRATEGIES, Strategy
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


def char_spans(text: str, size: int, overlap: int = 0) -> list[Span]:
    """Windows of at most `size` characters, cut at whitespace where possible."""
    whole = trim_span(text, 0, len(text))
    return [] if whole is None else pack_spans([whole], size, overlap, text=text)


def token_spans(text: str, tokenizer: Any, size: int, overlap: int = 0) -> list[Span]:
    """Windows of at most `size` tokens of a Hugging Face fast tokenizer, cut at token boundaries.

    Characters the tokenizer drops (zero-width or control characters) between two windows go
    with the earlier window, so no character falls between chunks. Tokens of one span of text (a
    Hangul syllable BERT's normalizer splits into its letters) count as one: text is cut between
    characters, never inside one.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("token chunking needs a fast (Rust) tokenizer for its offset mapping")
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"need 0 <= overlap < size, got size={size}, overlap={overlap}")
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = sorted({(s, e) for s, e in encoding["offset_mapping"] if e > s})
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


def _whole(text: str, params: ChunkParams, tokenizer: Any) -> list[Span]:
    return segments(text, [])


def _chars(text: str, params: ChunkParams, tokenizer: Any) -> list[Span]:
    return char_spans(text, params.max_size, params.overlap)


def _tokens(text: str, params: ChunkParams, tokenizer: Any) -> list[Span]:
    return token_spans(text, tokenizer, params.max_size, params.overlap)


def _sentences(text: str, params: ChunkParams, tokenizer: Any) -> list[Span]:
    return pack_spans(sentence_spans(text), params.max_size, params.overlap, text=text)


def _paragraphs(text: str, params: ChunkParams, tokenizer: Any) -> list[Span]:
    size = params.max_size
    units = _refine(text, paragraph_spans(text), size, sentence_spans)
    return pack_spans(units, size, params.overlap, text=text)


def _markdown(text: str, params: ChunkParams, tokenizer: Any) -> list[Span]:
    size, overlap = params.max_size, params.overlap
    chunks: list[Span] = []
    for section in markdown_section_spans(text):
        if section[1] - section[0] <= size:
            chunks.append(section)
            continue
        units = _refine(text, [section], size, paragraph_spans)
        units = _refine(text, units, size, sentence_spans)
        chunks.extend(pack_spans(units, size, overlap, text=text))
    return chunks


# none: the whole document. chars: windows of max_size characters. tokens: windows of max_size
# tokens of the embedding model's tokenizer. sentences / paragraphs: whole units packed into
# windows of max_size characters (a paragraph longer than max_size is packed by its sentences).
# markdown: one chunk per heading section; a section longer than max_size is packed by
# paragraphs, then sentences, never across sections. Overlap is in the unit of max_size.
STRATEGIES.register("none", Strategy(_whole))
STRATEGIES.register("chars", Strategy(_chars))
STRATEGIES.register("tokens", Strategy(_tokens, needs_tokenizer=True))
STRATEGIES.register("sentences", Strategy(_sentences))
STRATEGIES.register("paragraphs", Strategy(_paragraphs))
STRATEGIES.register("markdown", Strategy(_markdown))


def chunk_document(text: str, params: ChunkParams, tokenizer: Any = None) -> list[Span]:
    """The chunk spans of one document under the configured strategy (see STRATEGIES)."""
    strategy = STRATEGIES.get(params.strategy)
    if strategy is None:
        raise ValueError(
            f"unknown chunk.strategy {params.strategy!r}; use one of {STRATEGIES.names()}"
        )
    if strategy.needs_tokenizer and tokenizer is None:
        raise ValueError(
            f"chunk.strategy {params.strategy!r} needs the embedding model's tokenizer"
        )
    return strategy.spans(text, params, tokenizer)
