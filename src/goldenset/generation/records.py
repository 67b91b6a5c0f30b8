"""Rows of data/goldenset.jsonl and data/goldenset.rejects.jsonl, the question ids in them, and
how a run's outcomes become those rows."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import NamedTuple

from goldenset.core.ids import content_id
from goldenset.generation.dedupe import repeated_questions
from goldenset.generation.passages import Passage
from goldenset.generation.prompt import PROMPT_SHA
from goldenset.generation.session import Outcome, Session
from goldenset.generation.summary import GenerationStats
from goldenset.generation.validation import Answer

QID_PREFIX = "gs-"


def make_qid(
    passage: Passage,
    question_index: int,
    question: str,
    *,
    prompt_sha: str,
    identity: dict,
    taken: Collection[str] = (),
) -> str:
    """A stable id derived from what the question is about and how it was made.

    It never contains '#', so it can never equal a chunk id (f"{doc_id}#{index}"); `taken` holds
    the document ids (and qids already issued), which it is salted away from on a clash.
    """
    content = {
        "doc_id": passage.doc_id,
        "span": [passage.start, passage.end],
        "passage_sha": hashlib.sha256(passage.text.encode("utf-8")).hexdigest(),
        "question_index": question_index,
        "question": question,
        "prompt_sha": prompt_sha,
        "identity": identity,
    }
    return content_id(QID_PREFIX, content, taken)


def question_row(
    qid: str,
    passage: Passage,
    answer: Answer,
    *,
    provider: str,
    model: str,
    prompt_sha: str,
    form: str,
) -> dict:
    """One golden-set row; "question" holds the query whatever its form (a question, a claim, a
    keyword search), and "form" says which."""
    start = passage.start + answer.evidence_start
    end = passage.start + answer.evidence_end
    return {
        "qid": qid,
        "question": answer.question,
        "doc_id": passage.doc_id,
        "evidence_start": start,
        "evidence_end": end,
        "evidence": passage.text[answer.evidence_start : answer.evidence_end],
        "passage_start": passage.start,
        "passage_end": passage.end,
        "provider": provider,
        "model": model,
        "prompt_sha": prompt_sha,
        "form": form,
    }


def reject_row(
    passage: Passage,
    question_index: int,
    reasons: list[tuple[str, str]],
    answers: list[str],
    *,
    provider: str,
    model: str,
    prompt_sha: str,
    form: str,
) -> dict:
    return {
        "doc_id": passage.doc_id,
        "passage_start": passage.start,
        "passage_end": passage.end,
        "question_index": question_index,
        "reason": reasons[-1][0],
        "reasons": [f"{code}: {detail}" for code, detail in reasons],
        "answers": answers,
        "provider": provider,
        "model": model,
        "prompt_sha": prompt_sha,
        "form": form,
    }


class _Kept(NamedTuple):
    """A question that passed validation, before near-duplicates are dropped."""

    passage: Passage
    question_index: int
    answer: Answer
    qid: str


def collect(
    session: Session,
    passages: list[Passage],
    outcomes: list[list[Outcome]],
    stats: GenerationStats,
    documents: Sequence[tuple[str, str]],
) -> tuple[list[dict], list[dict]]:
    """Rows and reject rows in document order, and the counts of what became of each question.

    A question that repeats an earlier one (generate.duplicate_cosine) is dropped as a reject."""
    provider = session.provider
    labels = {
        "provider": provider.name,
        "model": provider.model,
        "prompt_sha": PROMPT_SHA,
        "form": session.form.name,
    }
    position = {doc_id: i for i, (doc_id, _) in enumerate(documents)}
    taken = set(position)
    order = sorted(
        range(len(passages)), key=lambda i: (position[passages[i].doc_id], passages[i].start)
    )
    kept: list[_Kept] = []
    rejects: list[dict] = []
    for i in order:
        passage = passages[i]
        for question_index, outcome in enumerate(outcomes[i]):
            stats.cache_hits += outcome.cache_hits
            stats.invalid_answers.update(code for code, _ in outcome.reasons)
            if outcome.answer is not None:
                qid = make_qid(
                    passage,
                    question_index,
                    outcome.answer.question,
                    prompt_sha=PROMPT_SHA,
                    identity=session.identity,
                    taken=taken,
                )
                taken.add(qid)
                kept.append(_Kept(passage, question_index, outcome.answer, qid))
            elif outcome.not_asked:
                stats.not_asked += 1
            else:
                stats.rejected[outcome.reasons[-1][0]] += 1
                rejects.append(
                    reject_row(passage, question_index, outcome.reasons, outcome.answers, **labels)
                )
    repeated = repeated_questions(
        [k.answer.question for k in kept], [k.qid for k in kept], session.params.duplicate_cosine
    )
    for i, reason in repeated.items():
        passage, question_index, answer, _ = kept[i]
        rejects.append(reject_row(passage, question_index, [reason], [answer.question], **labels))
    stats.near_duplicates = len(repeated)
    if repeated:
        stats.rejected["near_duplicate"] += len(repeated)
    rows = [
        question_row(k.qid, k.passage, k.answer, **labels)
        for i, k in enumerate(kept)
        if i not in repeated
    ]
    stats.questions_written = len(rows)
    return rows, rejects
