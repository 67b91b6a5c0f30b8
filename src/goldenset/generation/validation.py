"""Turn an LLM's raw answer into a checked question, or say exactly why not.

Every check is a rule a golden-set question must obey: one natural stand-alone question, not a
copy of the passage, not an echo of its document's words (generate.max_echo). The evidence is the
sentence the program marked, so it needs no check. A failed check names a short reason code
(counted in the stage summary) and a sentence the LLM is shown when it is asked again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from goldenset.echo import content_words, overlap
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
    source_words: Collection[str] | None = None,
    max_echo: float | None = None,
    example_queries: Sequence[str] = (),
) -> str:
    """Check one raw answer (the question alone) about `passage`; InvalidAnswer names the first
    broken rule.

    asked: questions already accepted for the same passage (a repeat is invalid).
    source_words: content words of the question's document; with max_echo, a question whose
    share of them (echo.overlap) is above max_echo echoes its source and is invalid.
    example_queries: real queries shown as style examples; a question that copies one is invalid.
    """
    if truncated:
        raise InvalidAnswer("truncated", "the answer was cut off at the token limit; keep it short")
    question = check_question(text, passage, asked)
    if source_words is not None:
        check_topic(question, source_words)
    if max_echo is not None and source_words is not None:
        share = overlap(question, source_words)
        if share > max_echo:
            raise InvalidAnswer(
                "echoes_document",
                f"{share:.0%} of its words are the document's own words; ask again the way a "
                "user who never read it would, with synonyms and everyday terms",
            )
    for example in example_queries:
        if overlap(question, example) >= COPIED_EXAMPLE_SHARE:
            raise InvalidAnswer(
                "copies_example", "it copies one of the example searches; ask about the passage"
            )
    return question


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
