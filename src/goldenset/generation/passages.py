"""Which passages of which documents the LLM is asked about.

Passages are windows of whole sentences cut with generate.* params of their own, so changing
chunk.* never changes them. The sample is ordered by hashes of (seed, document id, passage text)
rather than by one shuffle of everything, so adding a document or editing one passage leaves the
choice of all other passages, and hence their cached answers, untouched.
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
    """Up to ceil(max_questions / questions_per_passage) passages, round-robin across documents.

    documents: (doc_id, text) pairs. The questions add up to at most max_questions: the last
    passage may be asked fewer than questions_per_passage.
    """
    if max_questions <= 0:
        return []
    _check_unique_ids(documents)
    per_document: list[tuple[str, list[Passage]]] = []
    for doc_id, text in documents:
        passages = [
            Passage(doc_id, start, end, text[start:end], questions_per_passage)
            for start, end in document_passages(text, passage_size, min_chars)
        ]
        passages.sort(key=lambda p: _rank(seed, p.doc_id, p.text, p.start))
        if passages:
            per_document.append((_rank(seed, doc_id), passages))
    per_document.sort(key=lambda item: item[0])

    wanted = -(-max_questions // questions_per_passage)
    chosen: list[Passage] = []
    depth = 0
    while len(chosen) < wanted and any(depth < len(ps) for _, ps in per_document):
        for _, passages in per_document:
            if depth < len(passages) and len(chosen) < wanted:
                chosen.append(passages[depth])
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
        passages[-1] = Passage(
            last.doc_id, last.start, last.end, last.text, last.questions - surplus
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
