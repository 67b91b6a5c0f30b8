"""A person's fix of a query: their own version of it, placed in its document, and what the
writer's own validation says of that version.

A fix mends a query that failed rule a (its evidence does not answer it) or b (it does not name
its subject), so that reading it ends in a query the team keeps. The checks the writer's answers
must pass are run on it, but only to warn: the person may know better, so a warning can be
overridden and never refuses the fix.
"""

from __future__ import annotations

from goldenset.core.echo import WindowIndex
from goldenset.corpus.verdicts import FIX_FIELDS
from goldenset.generation.prompt import FORMS, QUESTION
from goldenset.generation.validation import InvalidAnswer, validate_question


def fixed_version(text: str, document: str, start: int, end: int) -> dict:
    """The person's version (FIX_FIELDS) of a query: its text, and the evidence at [start, end)
    of its document, whitespace at the span's edges left out; ValueError for an empty text or
    a span outside the document."""
    question = " ".join(text.split())
    if not question:
        raise ValueError("a fix needs the query's text")
    if not 0 <= start < end <= len(document):
        raise ValueError(f"evidence from {start} to {end} is not in the document")
    span = document[start:end]
    start += len(span) - len(span.lstrip())
    end -= len(span) - len(span.rstrip())
    if start >= end:
        raise ValueError("the evidence holds no text")
    return dict(zip(FIX_FIELDS, (question, document[start:end], start, end), strict=True))


def fix_warnings(fix: dict, document: str, form: str | None) -> list[str]:
    """What the writer's validation finds wrong with a fix (its first broken rule, as the writer
    would be told), in the query's form; none when it passes."""
    try:
        validate_question(
            fix["question"],
            fix["evidence"],
            source=WindowIndex.of(document),
            evidence=fix["evidence"],
            form=FORMS.get(form or "", QUESTION),
        )
    except InvalidAnswer as broken:
        return [f"{broken.code.replace('_', ' ')}: {broken.detail}"]
    return []
