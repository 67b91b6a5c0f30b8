"""Turn an LLM's raw answer into a checked question, or say exactly why not.

Every check is a rule a golden-set question must obey: one natural stand-alone question, not a
copy of the passage, not an echo of its document's words (generate.max_echo, goldenset.echo.echo),
answered by its evidence (the sentence the program marked) and specific enough to find its
document: it keeps a distinctive term of its evidence (generate.distinctive_share). A failed
check names a short reason code (counted in the stage summary) and a sentence the LLM is shown
when it is asked again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from goldenset.echo import (
    WindowFrequency,
    WindowIndex,
    answered_terms,
    content_words,
    distinctive_terms,
    echo,
    overlap,
)
from goldenset.generation.prompt import few_shot_passages

MIN_QUESTION_WORDS = 4
MAX_QUESTION_WORDS = 40
MAX_QUESTION_CHARS = 300
COPIED_RUN_WORDS = 8  # a question sharing this many consecutive words with the passage quotes it
# a question sharing this share of an example search's content words copies that example
COPIED_EXAMPLE_SHARE = 0.8
# a small model sometimes asks about a few-shot passage instead of its own
_FEW_SHOT_WORDS = [content_words(passage) for passage in few_shot_passages()]

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
# "this protein", "these mice": a thing only the passage names; "those who smoke" names it
_POINTS_INTO_SOURCE = re.compile(
    r"\b(?:this|these)\b|\bthose\b(?!\s+(?:who|whom|whose|with|without|that|which|of|in|on|at)\b)",
    re.IGNORECASE,
)


# "Which groups did he meet with?": a person only the passage names
_UNNAMED_PERSON = re.compile(r"\b(?:he|she|him|his|her|hers)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Specificity:
    """What a question must keep of its evidence: a word in at most `max_share` of the corpus's
    windows (`rarity`), or a name, number or acronym (generate.distinctive_share)."""

    rarity: WindowFrequency
    max_share: float


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


def validate_question(
    text: str,
    passage: str,
    *,
    truncated: bool = False,
    asked: Sequence[str] = (),
    source: WindowIndex | None = None,
    max_echo: float | None = None,
    example_queries: Sequence[str] = (),
    evidence: str | None = None,
    specificity: Specificity | None = None,
) -> str:
    """Check one raw answer (the question alone) about `passage`; InvalidAnswer names the first
    broken rule.

    asked: questions already accepted for the same passage (a repeat is invalid).
    source: the question's document (goldenset.echo.WindowIndex); with max_echo, a question whose
    echo (its best overlap with one window of the document) is above max_echo is invalid.
    example_queries: real queries shown as style examples; a question that copies one is invalid.
    evidence: the marked sentence; a question it does not answer is invalid, and with
    specificity, one that keeps none of its distinctive terms.
    """
    if truncated:
        raise InvalidAnswer("truncated", "the answer was cut off at the token limit; keep it short")
    question = check_question(text, passage, asked)
    check_unnamed_person(question)
    if source is not None:
        check_topic(question, source.where.keys())
    if evidence is not None:
        check_answered(question, evidence)
        if specificity is not None:
            check_specific(question, evidence, specificity)
    if max_echo is not None and source is not None:
        share = echo(question, source)
        if share > max_echo:
            raise InvalidAnswer(
                "echoes_document",
                f"{share:.0%} of its words are the document's own words; keep the one specific "
                "name or term, and say the rest the way a user who never read it would",
            )
    for example in example_queries:
        if overlap(question, example) >= COPIED_EXAMPLE_SHARE:
            raise InvalidAnswer(
                "copies_example", "it copies one of the example searches; ask about the passage"
            )
    return question


def check_unnamed_person(question: str) -> None:
    """InvalidAnswer when 'he', 'she', 'his' or 'her' stands for a person the question does not
    name: no searcher can say who."""
    if _UNNAMED_PERSON.search(question):
        raise InvalidAnswer(
            "unnamed_person", "'he' or 'she' names no one; name the person or their role"
        )


def check_answered(question: str, evidence: str) -> None:
    """InvalidAnswer when the question shares no word with its evidence sentence: whatever it
    asks, the marked sentence does not speak of it."""
    if not answered_terms(question, evidence):
        raise InvalidAnswer(
            "not_answered",
            "the marked sentence does not answer it; ask about what that sentence says",
        )


def check_specific(question: str, evidence: str, specificity: Specificity) -> None:
    """InvalidAnswer when the question keeps no distinctive term of its evidence (a rare word, a
    name, a number): 'Are high levels of a protein linked to longer life?' fits any document."""
    if not distinctive_terms(question, evidence, specificity.rarity, specificity.max_share):
        raise InvalidAnswer(
            "vague",
            "it could be about any document; keep the specific name or term of the marked "
            "sentence (what it is about) so a searcher could find it",
        )


def check_topic(question: str, source_words: Collection[str]) -> None:
    """InvalidAnswer when the question is not about its document: it shares none of its words,
    or more of a few-shot passage's words than of its own document's."""
    share = overlap(question, source_words)
    if share == 0:
        raise InvalidAnswer(
            "off_topic", "it shares no word with the document; ask about the marked sentence"
        )
    if any(overlap(question, words) > share for words in _FEW_SHOT_WORDS):
        raise InvalidAnswer(
            "off_topic", "it asks about an example passage; ask about the marked sentence"
        )


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
    if _POINTS_INTO_SOURCE.search(question):
        raise InvalidAnswer(
            "refers_to_passage",
            "'this' or 'these' points at something only the passage names; name it instead",
        )
    if _shares_run(question, passage, COPIED_RUN_WORDS):
        raise InvalidAnswer(
            "copies_passage", "the question copies the passage word for word; use your own words"
        )
    if any(_words(question) == _words(earlier) for earlier in asked):
        raise InvalidAnswer("repeats_question", "that question was already asked; ask another")
    return question
