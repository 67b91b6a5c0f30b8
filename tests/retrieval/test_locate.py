"""A store's passages placed in their documents: by offsets, exact text, then tolerantly; what is
not placed is counted and named, never dropped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from goldenset.retrieval.locate import Passage, Span, Words, locate, place_passages

DOCUMENT = (
    "Statins lower LDL cholesterol.\n\nIn a trial of 4,000 adults, strokes fell by a fifth.  "
    "Statins lower LDL cholesterol. Muscle pain was the most common side effect."
)


def test_offsets_that_hold_the_text_place_it_there():
    start = DOCUMENT.rindex("Statins")
    text = DOCUMENT[start : start + 30]
    assert locate(DOCUMENT, text, start) == Span(start, start + 30, "offsets")


def test_wrong_offsets_fall_back_to_the_occurrence_nearest_them():
    text = "Statins lower LDL cholesterol."
    second = DOCUMENT.rindex(text)
    assert locate(DOCUMENT, text, second + 3) == Span(second, second + len(text), "exact")
    assert locate(DOCUMENT, text, 2) == Span(0, len(text), "exact")
    assert locate(DOCUMENT, text) == Span(0, len(text), "exact")  # no offsets: the first


def test_a_stripped_passage_is_found_exactly():
    text = "\n  In a trial of 4,000 adults, strokes fell by a fifth.  \n"
    start = DOCUMENT.index("In a trial")
    assert locate(DOCUMENT, text) == Span(start, start + len(text.strip()), "exact")


def test_whitespace_markup_and_case_between_the_words_are_tolerated():
    text = "<p>in a **trial** of 4,000\nadults,   strokes fell</p>"
    start = DOCUMENT.index("In a trial")
    end = DOCUMENT.index("fell") + len("fell")
    assert locate(DOCUMENT, text) == Span(start, end, "tolerant")
    # a character splitter may cut inside the first and the last word, and keep the rest whole
    assert locate(DOCUMENT, "rokes fell by") == Span(62, 75, "exact")
    assert locate(DOCUMENT, "rokes  FELL b") == Span(62, 74, "tolerant")
    assert locate(DOCUMENT, "rokes  FE by") is None  # a word inside is whole, or no match
    assert locate(DOCUMENT, "ROKES fell") is None  # two words: whole words only


def test_a_passage_not_in_the_document_is_not_placed():
    assert locate(DOCUMENT, "Aspirin thins the blood.") is None
    assert locate(DOCUMENT, "   ") is None


def test_overlapping_windows_of_a_splitter_are_each_placed_where_they_were_cut():
    document = " ".join(f"Sentence {i} says something about topic {i % 7}." for i in range(200))
    size, overlap, cuts = 1000, 200, []
    at = 0
    while at < len(document):
        cuts.append((at, min(at + size, len(document))))
        at += size - overlap
    words = Words.of(document)
    for start, end in cuts:
        text = document[start:end]
        # the splitter strips each window; no offsets given
        span = locate(document, text.strip(), words=words)
        assert span is not None and document[span.start : span.end] == text.strip()
        assert span.start >= start and span.end <= end


@given(st.data())
def test_any_substring_is_placed_exactly(data):
    words = data.draw(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=3))
    document = " ".join(words)
    start = data.draw(st.integers(0, len(document) - 1))
    end = data.draw(st.integers(start + 1, len(document)))
    span = locate(document, document[start:end], start)
    assert span == Span(start, end, "offsets")
    found = locate(document, document[start:end])
    if document[start:end].strip():
        assert found is not None
        assert document[found.start : found.end] == document[start:end].strip()
    else:  # blanks alone place nowhere
        assert found is None


def test_every_passage_is_placed_or_counted_by_why_not():
    documents = {"d1": DOCUMENT, "d2": "Aspirin thins the blood."}
    passages = [
        Passage("d1", "Statins lower LDL cholesterol.", 0, 30),
        Passage("d1", "muscle PAIN was the most common"),
        Passage("d2", "Aspirin thins"),
        Passage(None, "no id"),
        Passage("d9", "a document the corpus lacks"),
        Passage("d9", "another"),
        Passage("d1", "a sentence that is nowhere"),
    ]
    placement = place_passages(documents, passages)
    assert [span.how if span else None for span in placement.spans] == [
        "offsets",
        "tolerant",
        "exact",
        None,
        None,
        None,
        None,
    ]
    assert (placement.located, placement.no_document_id, placement.not_found) == (3, 1, 1)
    assert placement.unknown_documents == {"d9": 2}
    assert placement.share == 3 / 7
    assert placement.lines() == [
        "located 3 of 7 passages (42.9%): exact 1, offsets 1, tolerant 1",
        "1 passages name no document id",
        "2 passages of 1 documents not in the corpus: 'd9'",
        "1 passages not found in their document",
    ]
    assert place_passages(documents, []).share == 1.0
