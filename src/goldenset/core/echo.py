"""How much a question echoes its source: the one measure used for generated and real queries.

Content words are the lowercased `[a-z0-9]+` tokens longer than 2 characters that are not in
scikit-learn's English stop words. A question's overlap with a text is the share of its content
words that also occur in that text.

Echo is overlap measured locally: the highest overlap of the question with any window of
ECHO_WINDOW_WORDS consecutive words of its document (windows start every half window, so any
stretch of up to half a window lies wholly inside one). Measured against a whole document, the
share grows with the document's length (a 740k-character filing holds almost every word, so every
specific question looked like an echo); a window of ~100 words means the same on a 1 kB abstract
and a 1 MB filing. A golden-set question and a real query are measured the same way against their
document: the window that best matches it, which for a question is normally the passage it was
written from.

Rarity: a word's window frequency is the share of the corpus's windows holding it. A question
names its subject specifically when it keeps a rare word of its evidence (see
generation/validation.py); windows, not documents, are counted, so that five long files give as
much signal as five thousand abstracts.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

_TOKEN = re.compile(r"[a-z0-9]+")
MIN_WORD_CHARS = 3
# ~650 characters of English: a passage and its neighbours, never a whole long document
ECHO_WINDOW_WORDS = 100
_STRIDE = ECHO_WINDOW_WORDS // 2


def is_content_word(token: str) -> bool:
    return len(token) >= MIN_WORD_CHARS and token not in ENGLISH_STOP_WORDS


def content_words(text: str) -> set[str]:
    """The distinct content words of a text."""
    return {token for token in _TOKEN.findall(text.lower()) if is_content_word(token)}


def overlap(question: str, source: str | Iterable[str]) -> float:
    """Share of the question's content words found in the source (text, or its content words).

    A question without content words overlaps nothing: 0.0.
    """
    asked = content_words(question)
    if not asked:
        return 0.0
    known = content_words(source) if isinstance(source, str) else set(source)
    return len(asked & known) / len(asked)


@dataclass(frozen=True)
class WindowIndex:
    """Where each content word of one text occurs, by window of ECHO_WINDOW_WORDS words."""

    windows: int
    # word -> sorted indices of the windows holding it
    where: dict[str, np.ndarray]

    @classmethod
    def of(cls, text: str) -> WindowIndex:
        tokens = _TOKEN.findall(text.lower())
        windows = max(1, -(-(len(tokens) - ECHO_WINDOW_WORDS) // _STRIDE) + 1)
        positions: dict[str, list[int]] = {}
        for position, token in enumerate(tokens):
            if is_content_word(token):
                positions.setdefault(token, []).append(position)
        where = {word: _windows_of(np.asarray(at), windows) for word, at in positions.items()}
        return cls(windows, where)

    def presence(self, words: Iterable[str]) -> np.ndarray:
        """How many of `words` each window holds."""
        counts = np.zeros(self.windows, dtype=np.int32)
        for word in words:
            if word in self.where:
                counts[self.where[word]] += 1
        return counts


def _windows_of(positions: np.ndarray, windows: int) -> np.ndarray:
    # window k covers tokens [k * stride, k * stride + 2 * stride): position p lies in windows
    # p // stride - 1 and p // stride (the last window reaches the end of the text)
    last = np.minimum(positions // _STRIDE, windows - 1)
    return np.unique(np.concatenate([last, np.maximum(last - 1, 0)]))


def echo(question: str, document: WindowIndex | str) -> float:
    """The question's highest overlap with one window of its document (0.0 without words)."""
    asked = content_words(question)
    if not asked:
        return 0.0
    index = document if isinstance(document, WindowIndex) else WindowIndex.of(document)
    return float(index.presence(asked).max()) / len(asked)


class WindowFrequency:
    """Share of a corpus's windows that hold each content word: rarity for the specificity
    rule. Built once per corpus from its documents' WindowIndex."""

    def __init__(self, indexes: Iterable[WindowIndex]) -> None:
        self.counts: Counter[str] = Counter()
        self.windows = 0
        for index in indexes:
            self.windows += index.windows
            self.counts.update({word: len(held) for word, held in index.where.items()})

    def share(self, word: str) -> float:
        """0.0 for a word the corpus never uses (as rare as it gets)."""
        return self.counts.get(word, 0) / max(self.windows, 1)

    def is_rare(self, word: str, max_share: float) -> bool:
        """In at most max_share of the windows, or in one place only (the two windows that
        overlap there): in a corpus of a few short documents no share is small enough."""
        return self.counts.get(word, 0) <= max(2, max_share * self.windows)


# --- specificity: does a question name what its evidence is about? ---------------------------

STEM_CHARS = (
    5  # "histone" and "histones", "obesity" and "obese" share a stem: a question may inflect
)
_WRITTEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


def _stem(word: str) -> str:
    return word[:STEM_CHARS]


def marked_terms(question: str) -> set[str]:
    """Words the question writes as names, lowercased: acronyms and mixed case (NK, TNFRIg),
    numbers (216, IL-4), and capitalised words after the first ("Louvre")."""
    marked = set()
    for number, token in enumerate(_WRITTEN.findall(question)):
        if len(token) < 2 or (token.isdigit() and len(token) < 3):
            continue  # "I", and the "24" of "1·24": too common to name anything
        if (
            any(c.isdigit() for c in token)
            or any(c.isupper() for c in token[1:])
            or (number > 0 and token[0].isupper())
        ):
            marked.add(token.lower())
    return marked


def answered_terms(question: str, evidence: str) -> set[str]:
    """The question's words that its evidence also holds (content words by stem, and named
    terms as written): none means the evidence does not speak of what the question asks."""
    evidence_stems = {_stem(word) for word in content_words(evidence)}
    evidence_tokens = {token.lower() for token in _WRITTEN.findall(evidence)}
    shared = {word for word in content_words(question) if _stem(word) in evidence_stems}
    return shared | (marked_terms(question) & evidence_tokens)


def distinctive_words(text: str, rarity: WindowFrequency, max_share: float) -> set[str]:
    """A text's words that could name its subject: content words in at most max_share of the
    corpus's windows, and words written as names (marked_terms)."""
    rare = {word for word in content_words(text) if rarity.is_rare(word, max_share)}
    return rare | marked_terms(text)


def distinctive_terms(
    question: str, evidence: str, rarity: WindowFrequency, max_share: float
) -> set[str]:
    """The question's words that name its evidence's subject: shared with the evidence, and
    either rare in the corpus (WindowFrequency.is_rare) or written as a name."""
    rare_stems = {
        _stem(word) for word in content_words(evidence) if rarity.is_rare(word, max_share)
    }
    evidence_tokens = {token.lower() for token in _WRITTEN.findall(evidence)}
    rare = {word for word in content_words(question) if _stem(word) in rare_stems}
    return rare | (marked_terms(question) & evidence_tokens)


def unknown_names(question: str, document: WindowIndex) -> set[str]:
    """Numbers, acronyms and mixed-case names the question writes (2015, CMV, mTORC1) whose
    words its document never uses, singular or plural: "2015" asked of a document about
    2009-2014 invents a premise. Capitalised words are left out: German capitalises every noun,
    and a question may say a noun its own way."""
    unknown, acronyms = set(), _written_as_acronyms(question)
    for term in marked_terms(question):
        if term.isalpha() and term not in acronyms:
            continue
        words = [word for word in _TOKEN.findall(term) if is_content_word(word)]
        if words and not all(_known(word, document.where) for word in words):
            unknown.add(term)
    return unknown


def _written_as_acronyms(text: str) -> set[str]:
    return {
        token.lower() for token in _WRITTEN.findall(text) if any(c.isupper() for c in token[1:])
    }


def _known(word: str, where: dict[str, np.ndarray]) -> bool:
    return any(form in where for form in (word, word.removesuffix("s"), word + "s"))
