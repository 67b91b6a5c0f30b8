"""Which passages of which documents the LLM is asked about.

Passages are windows of whole sentences cut with generate.* params of their own, so changing
chunk.* never changes them. The sample is ordered by hashes of (seed, document id, passage text)
rather than by one shuffle of everything, so adding a document or editing one passage leaves the
choice of all other passages, and hence their cached answers, untouched.

Each question of a passage is about one target sentence that the program picks (the evidence),
by hashes of (seed, passage, sentence) among the sentences long enough to state a fact, so
titles and fragments are never asked about and the choice is the same on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from goldenset.chunking import pack_spans, sentence_spans
from goldenset.errors import GoldensetError
from goldenset.params import GenerateParams


@dataclass(frozen=True)
class Passage:
    doc_id: str
    start: int  # character offsets into the document text
    end: int
    text: str  # == document text[start:end]
    questions: int  # how many questions to ask about it
    # one (start, end) sentence span per question, offsets into `text`: each question's evidence
    targets: tuple[tuple[int, int], ...] = ()


MIN_TARGET_WORDS = 8  # shorter sentences (titles, headings, fragments) rarely state a fact


def target_sentences(text: str, count: int, seed: int) -> tuple[tuple[int, int], ...]:
    """Up to `count` sentences of `text` to ask about, as (start, end) spans in text order.

    Deterministic in (seed, text): the sentences with at least MIN_TARGET_WORDS words, ranked by
    a hash of the seed, the passage and the sentence.
    """
    eligible = [
        (start, end)
        for start, end in sentence_spans(text)
        if len(text[start:end].split()) >= MIN_TARGET_WORDS
    ]
    eligible.sort(key=lambda span: _rank(seed, text, text[span[0] : span[1]], span[0]))
    return tuple(sorted(eligible[:count]))


def document_passages(text: str, size: int, min_chars: int) -> list[tuple[int, int]]:
    """Whole-sentence windows of at most `size` characters, without those under `min_chars`."""
    windows = pack_spans(sentence_spans(text), size, 0, text=text)
    return [(start, end) for start, end in windows if end - start >= max(min_chars, 1)]


def _rank(*parts: object) -> str:
    return hashlib.sha256("\0".join(str(part) for part in parts).encode("utf-8")).hexdigest()


def sample_passages(
    documents: Sequence[tuple[str, str]],
    *,
    max_questions: int,
    questions_per_passage: int,
    passage_size: int,
    min_chars: int,
    seed: int,
) -> list[Passage]:
    """Passages round-robin across documents, until their questions reach max_questions.

    documents: (doc_id, text) pairs. A passage gets questions_per_passage questions, or fewer
    when it has fewer target sentences; the last one may be trimmed to reach max_questions
    exactly. Passages without a sentence worth asking about are skipped.
    """
    if max_questions <= 0:
        return []
    _check_unique_ids(documents)
    per_document: list[tuple[str, list[Passage]]] = []
    for doc_id, text in documents:
        passages = []
        for start, end in document_passages(text, passage_size, min_chars):
            targets = target_sentences(text[start:end], questions_per_passage, seed)
            if targets:
                passages.append(Passage(doc_id, start, end, text[start:end], len(targets), targets))
        passages.sort(key=lambda p: _rank(seed, p.doc_id, p.text, p.start))
        if passages:
            per_document.append((_rank(seed, doc_id), passages))
    per_document.sort(key=lambda item: item[0])

    chosen: list[Passage] = []
    planned = depth = 0
    while planned < max_questions and any(depth < len(ps) for _, ps in per_document):
        for _, passages in per_document:
            if depth < len(passages) and planned < max_questions:
                chosen.append(passages[depth])
                planned += passages[depth].questions
        depth += 1
    return _trim_questions(chosen, max_questions)


def passages_for(documents: Sequence[tuple[str, str]], params: GenerateParams) -> list[Passage]:
    """The passages the `generate.*` params ask about."""
    return sample_passages(
        documents,
        max_questions=params.max_questions,
        questions_per_passage=params.questions_per_passage,
        passage_size=params.passage_size,
        min_chars=params.passage_min_chars,
        seed=params.seed,
    )


def _trim_questions(passages: list[Passage], max_questions: int) -> list[Passage]:
    surplus = sum(p.questions for p in passages) - max_questions
    if surplus > 0 and passages:
        last = passages[-1]
        kept = last.questions - surplus
        passages[-1] = Passage(
            last.doc_id, last.start, last.end, last.text, kept, last.targets[:kept]
        )
    return passages


def _check_unique_ids(documents: Sequence[tuple[str, str]]) -> None:
    seen: set[str] = set()
    for doc_id, _ in documents:
        if doc_id in seen:
            raise GoldensetError(
                f"data/documents.parquet: doc_id {doc_id!r} appears twice: re-run the ingest stage"
            )
        seen.add(doc_id)
