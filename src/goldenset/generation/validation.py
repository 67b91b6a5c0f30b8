"""Turn an LLM's raw answer into a checked (question, evidence span), or say exactly why not.

Every check is a rule a golden-set question must obey: one natural question, not a copy of the
passage, with evidence that really is a piece of the passage. A failed check names a short reason
code (counted in the stage summary) and a sentence the LLM is shown when it is asked again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from goldenset.chunking import sentence_spans

MIN_QUESTION_WORDS = 4
MAX_QUESTION_WORDS = 40
MAX_QUESTION_CHARS = 300
MIN_EVIDENCE_WORDS = 3
COPIED_RUN_WORDS = 8  # a question sharing this many consecutive words with the passage quotes it
# Small models retype the sentence they cite with a word or a dash changed: such a near copy
# is snapped to the passage's own sentences when they match this closely.
NEAR_COPY_RATIO = 0.9
NEAR_COPY_MAX_SENTENCES = 3

_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)\s*```", re.DOTALL)
_WORD = re.compile(r"\w+")
_PREAMBLE = re.compile(
    r"^(?:here(?:'s|\s+is|\s+are)\b|sure\b|okay\b|ok\b|certainly\b|question\s*\d*\s*[:.)-]"
    r"|q\d*\s*[:.)-]|\d+\s*[.)]\s|[-*•]\s)",
    re.IGNORECASE,
)
_REFERS_TO_SOURCE = re.compile(
    r"\b(?:the|this|that|given|above)\s+"
    r"(?:passage|text|excerpt|paragraph|snippet|document|article|study|paper)\b",
    re.IGNORECASE,
)
# Models swap typographic quotes for straight ones; one-for-one so offsets still line up.
_SAME_CHARACTER = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"'})


@dataclass(frozen=True)
class Answer:
    question: str
    evidence_start: int  # character offsets into the passage
    evidence_end: int


class InvalidAnswer(ValueError):
    """An answer that breaks a rule: `code` is for counting, `detail` is shown to the LLM."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


def validate_answer(
    text: str, passage: str, *, truncated: bool = False, asked: Sequence[str] = ()
) -> Answer:
    """Parse and check one raw answer about `passage`; InvalidAnswer names the first broken rule.

    asked: questions already accepted for the same passage (a repeat is invalid).
    """
    if truncated:
        raise InvalidAnswer("truncated", "the answer was cut off at the token limit; keep it short")
    fields = parse_answer_json(text)
    question = check_question(fields["question"], passage, asked)
    start, end = locate_evidence(fields["evidence"], passage)
    return Answer(question, start, end)


def parse_answer_json(text: str) -> dict[str, str]:
    """The {"question", "evidence"} object of an answer; code fences and a lead-in are tolerated."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    opening = body.find("{")
    if opening < 0:
        raise InvalidAnswer("not_json", 'the reply is not a JSON object {"question", "evidence"}')
    try:
        value, stop = json.JSONDecoder().raw_decode(body, opening)
    except json.JSONDecodeError:
        raise InvalidAnswer("not_json", "the reply is not valid JSON") from None
    if "{" in body[stop:] or (fenced and "{" in _FENCE.sub("", text)):
        raise InvalidAnswer("several_answers", "the reply holds more than one JSON object")
    if not isinstance(value, dict):
        raise InvalidAnswer("not_json", 'the reply is not a JSON object {"question", "evidence"}')
    for field in ("question", "evidence"):
        if isinstance(value.get(field), list):
            raise InvalidAnswer("several_questions", f'"{field}" is a list; give exactly one')
        if not isinstance(value.get(field), str) or not value[field].strip():
            raise InvalidAnswer("missing_field", f'the JSON object has no "{field}" text')
    return {"question": value["question"], "evidence": value["evidence"]}


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shares_run(question: str, passage: str, run: int) -> bool:
    asked = _words(question)
    if len(asked) < run:
        return False
    source = _words(passage)
    runs = {tuple(source[i : i + run]) for i in range(len(source) - run + 1)}
    return any(tuple(asked[i : i + run]) in runs for i in range(len(asked) - run + 1))


def check_question(question: str, passage: str, asked: Sequence[str] = ()) -> str:
    """The question, stripped, when it is one natural stand-alone question; else InvalidAnswer."""
    question = question.strip()
    if len(question) > 1 and question[0] == question[-1] and question[0] in "\"'":
        question = question[1:-1].strip()
    if "\n" in question:
        raise InvalidAnswer("several_questions", "the question spans several lines; give one")
    if _PREAMBLE.match(question):
        raise InvalidAnswer(
            "preamble", "the question starts with a preamble; give only the question"
        )
    marks = question.count("?")
    if marks == 0:
        raise InvalidAnswer("not_a_question", "the question does not end with a question mark")
    if marks > 1 or not question.endswith("?"):
        raise InvalidAnswer("several_questions", "ask exactly one question, ending with its '?'")
    words = _words(question)
    if len(words) < MIN_QUESTION_WORDS:
        raise InvalidAnswer("too_short", f"the question has fewer than {MIN_QUESTION_WORDS} words")
    if len(words) > MAX_QUESTION_WORDS or len(question) > MAX_QUESTION_CHARS:
        raise InvalidAnswer("too_long", f"the question is longer than {MAX_QUESTION_WORDS} words")
    if _REFERS_TO_SOURCE.search(question):
        raise InvalidAnswer(
            "refers_to_passage", "the question mentions the passage; it must stand on its own"
        )
    if _shares_run(question, passage, COPIED_RUN_WORDS):
        raise InvalidAnswer(
            "copies_passage", "the question copies the passage word for word; use your own words"
        )
    if any(_words(question) == _words(earlier) for earlier in asked):
        raise InvalidAnswer("repeats_question", "that question was already asked; ask another")
    return question


def _squeeze(text: str) -> tuple[str, list[int]]:
    """text with each whitespace run as one space, and the original index of each kept character."""
    kept: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text.translate(_SAME_CHARACTER)):
        if char.isspace():
            if kept and kept[-1] == " ":
                continue
            char = " "
        kept.append(char)
        where.append(index)
    return "".join(kept), where


def locate_evidence(evidence: str, passage: str) -> tuple[int, int]:
    """(start, end) of `evidence` in `passage`, ignoring differences of whitespace and quotes."""
    needle, _ = _squeeze(evidence.strip())
    if len(_words(needle)) < MIN_EVIDENCE_WORDS:
        raise InvalidAnswer("evidence_too_short", "the evidence must be a whole sentence")
    haystack, where = _squeeze(passage)
    found = haystack.find(needle)
    if found >= 0:
        return where[found], where[found + len(needle) - 1] + 1
    near = closest_sentences(needle, passage)
    if near is None:
        raise InvalidAnswer(
            "evidence_not_found",
            "the evidence is not copied exactly from the passage; copy the sentence verbatim",
        )
    return near


def closest_sentences(evidence: str, passage: str) -> tuple[int, int] | None:
    """The run of consecutive passage sentences that `evidence` nearly copies, if any."""
    spans = sentence_spans(passage)
    best, best_ratio = None, NEAR_COPY_RATIO
    for first in range(len(spans)):
        for last in range(first, min(first + NEAR_COPY_MAX_SENTENCES, len(spans))):
            start, end = spans[first][0], spans[last][1]
            candidate, _ = _squeeze(passage[start:end])
            ratio = SequenceMatcher(None, evidence.lower(), candidate.lower()).ratio()
            if ratio >= best_ratio:
                best, best_ratio = (start, end), ratio
    return best
