"""Rows of data/goldenset.jsonl and data/goldenset.rejects.jsonl, and the question ids in them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection

from goldenset.generation.passages import Passage
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
    salt = 0
    while True:
        encoded = json.dumps({**content, "salt": salt}, sort_keys=True, ensure_ascii=False)
        qid = QID_PREFIX + hashlib.sha256(encoded.encode("utf-8")).hexdigest()[:16]
        if qid not in taken:
            return qid
        salt += 1


def question_row(
    qid: str, passage: Passage, answer: Answer, *, provider: str, model: str, prompt_sha: str
) -> dict:
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
    }
