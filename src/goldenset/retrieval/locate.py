"""Where a passage that a team's own store returned sits in its document, as a character span.

A store cuts its own chunks (LangChain's RecursiveCharacterTextSplitter, LlamaIndex's
SentenceSplitter, ...), with its own ids; goldenset judges any chunk by the evidence span it
covers (score.min_overlap), so a passage needs only its place in the document to be judged as
fairly as goldenset's own chunks. Each passage is placed, in this order:

1. by its offsets, when the store gives them and the document holds the text there;
2. by its text, exactly (the occurrence nearest the offsets given, else the first): a splitter
   that strips whitespace still returns a substring;
3. tolerantly: its words in order, whatever whitespace, markup or punctuation lies between them
   and in any case (a splitter that rejoins sentences, a store that kept HTML or Markdown).

A passage none of these places is counted, never dropped silently, as is one whose document id
is missing or not in the corpus (:class:`Placement`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

How = Literal["offsets", "exact", "tolerant"]
WORD = re.compile(r"\w+")
TAG = re.compile(r"<[^<>\n]{1,200}>")  # an HTML tag: its name is no word of the text


def words_of(text: str) -> list[re.Match]:
    """The words of a text, HTML tags left out (blanked, so offsets stay those of the text)."""
    return list(WORD.finditer(TAG.sub(lambda tag: " " * len(tag.group()), text)))


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    how: How


@dataclass(frozen=True)
class Words:
    """A text's words, lower-cased, joined by single spaces, and where each word sits in the
    text: a passage's words are searched in this, whatever separates them in either text."""

    joined: str
    word_at: list[int]  # offset in `joined` where each word starts
    starts: list[int]  # ... and where it starts and ends in the text
    ends: list[int]

    @classmethod
    def of(cls, text: str) -> Words:
        matches = words_of(text)
        words = [match.group().lower() for match in matches]
        word_at, at = [], 0
        for word in words:
            word_at.append(at)
            at += len(word) + 1
        return cls(
            " ".join(words),
            word_at,
            [match.start() for match in matches],
            [match.end() for match in matches],
        )


def locate(
    document: str,
    text: str,
    start: int | None = None,
    end: int | None = None,
    words: Words | Callable[[], Words] | None = None,
) -> Span | None:
    """The span of ``text`` in ``document`` (see the module), None when it is not there.

    ``words``: the document's :class:`Words`, or what makes them when first needed, computed
    once for its many passages."""
    if start is not None:
        stop = start + len(text) if end is None else end
        if 0 <= start <= stop <= len(document) and document[start:stop] == text:
            return Span(start, stop, "offsets")
    stripped = text.strip()
    if stripped:
        at = _nearest(document, stripped, start)
        if at is not None:
            return Span(at, at + len(stripped), "exact")
    if callable(words):
        words = words()
    return _tolerant(words or Words.of(document), text, start)


def _nearest(document: str, text: str, near: int | None) -> int | None:
    """The occurrence of text nearest ``near`` (an overlapping splitter repeats text), else the
    first; None when there is none."""
    first = document.find(text)
    if first < 0 or near is None:
        return None if first < 0 else first
    best, at = first, first
    while at >= 0 and at <= near:
        best = at
        at = document.find(text, at + 1)
    if at >= 0 and abs(at - near) < abs(best - near):
        best = at
    return best


def _tolerant(words: Words, text: str, near: int | None) -> Span | None:
    """The passage's words in order in the document's: whole words, else (three words or more)
    with its first word the end of a word and its last the start of one, as a window cut inside
    words leaves them."""
    wanted = [match.group().lower() for match in words_of(text)]
    if not wanted:
        return None
    whole = r"(?<![^ ])" + re.escape(" ".join(wanted)) + r"(?![^ ])"
    spans = _matches(words, whole, wanted, cut=False)
    if not spans and len(wanted) >= 3:
        inner = re.escape(" ".join(wanted[1:-1]))
        edges = rf"(?<![^ ])\w*{re.escape(wanted[0])} {inner} {re.escape(wanted[-1])}\w*(?![^ ])"
        spans = _matches(words, edges, wanted, cut=True)
    if not spans:
        return None
    return spans[0] if near is None else min(spans, key=lambda span: abs(span.start - near))


def _matches(words: Words, pattern: str, wanted: list[str], cut: bool) -> list[Span]:
    spans = []
    for match in re.finditer(pattern, words.joined):
        first = bisect_left(words.word_at, match.start())
        last = first + len(wanted) - 1
        start, end = words.starts[first], words.ends[last]
        if cut:  # the passage holds the first word's end and the last word's start
            start, end = words.ends[first] - len(wanted[0]), words.starts[last] + len(wanted[-1])
        spans.append(Span(start, end, "tolerant"))
    return spans


@dataclass
class Placement:
    """What became of a store's passages: each placed, or counted by why not."""

    spans: list[Span | None] = field(default_factory=list)  # one per passage, in order
    by_how: Counter = field(default_factory=Counter)  # offsets, exact, tolerant
    no_document_id: int = 0
    unknown_documents: Counter = field(default_factory=Counter)  # doc id -> passages
    not_found: int = 0  # in a known document, but none of the three ways places it
    # placed by its text alone where that text occurs more than once: the first occurrence
    ambiguous: int = 0

    @property
    def located(self) -> int:
        return sum(self.by_how.values())

    @property
    def share(self) -> float:
        """The share of passages placed (1.0 for none)."""
        return self.located / len(self.spans) if self.spans else 1.0

    def lines(self, limit: int = 5) -> list[str]:
        """What a person reads: the share placed, and each reason a passage was not."""
        ways = ", ".join(f"{how} {count}" for how, count in sorted(self.by_how.items()))
        lines = [
            f"located {self.located} of {len(self.spans)} passages ({self.share:.1%})"
            + (f": {ways}" if ways else "")
        ]
        if self.no_document_id:
            lines.append(f"{self.no_document_id} passages name no document id")
        if self.unknown_documents:
            named = ", ".join(repr(doc) for doc, _ in self.unknown_documents.most_common(limit))
            more = len(self.unknown_documents) - limit
            lines.append(
                f"{sum(self.unknown_documents.values())} passages of "
                f"{len(self.unknown_documents)} documents not in the corpus: {named}"
                + (f" and {more} more" if more > 0 else "")
            )
        if self.not_found:
            lines.append(f"{self.not_found} passages not found in their document")
        if self.ambiguous:
            lines.append(
                f"{self.ambiguous} passages occur more than once in their document and, without "
                "offsets, were placed at the first occurrence"
            )
        return lines


def _repeated(document: str, span: Span, start: int | None) -> bool:
    """Placed by its exact text alone, which occurs again later in the document."""
    if span.how != "exact" or start is not None:
        return False
    return document.find(document[span.start : span.end], span.start + 1) >= 0


@dataclass(frozen=True)
class Passage:
    """One result of a store: its document id (None when the store gave none), its text and,
    when the store gives them, its offsets in the document."""

    doc_id: str | None
    text: str
    start: int | None = None
    end: int | None = None


def place_passages(documents: Mapping[str, str], passages: Sequence[Passage]) -> Placement:
    """Every passage placed in its document (documents: doc_id -> text), or counted."""
    placement = Placement()
    indexes: dict[str, Words] = {}
    for passage in passages:
        span = None
        if passage.doc_id is None:
            placement.no_document_id += 1
        elif passage.doc_id not in documents:
            placement.unknown_documents[passage.doc_id] += 1
        else:
            document = documents[passage.doc_id]

            def words(doc_id: str = passage.doc_id, text: str = document) -> Words:
                if doc_id not in indexes:  # only for a passage the exact ways do not place
                    indexes[doc_id] = Words.of(text)
                return indexes[doc_id]

            span = locate(document, passage.text, passage.start, passage.end, words)
            if span is None:
                placement.not_found += 1
            else:
                placement.by_how[span.how] += 1
                placement.ambiguous += _repeated(document, span, passage.start)
        placement.spans.append(span)
    return placement
