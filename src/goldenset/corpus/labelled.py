"""Human-labelled questions with evidence excerpts: `labelled.jsonl` and SQuAD JSON files.

`labelled.jsonl` at the top of `ingest.path` holds one question a line,
``{"_id", "text", "evidence": [{"doc_id", "text", "start"?, "end"?}]}``; `start`/`end` are
character offsets into the source file. A SQuAD v1.1/v2.0 file (a `.json` whose top level has
`data[].paragraphs[].context/qas`) is read twice: ingest makes each article one document (its
paragraphs joined by a blank line, doc_id `<file path>#<title>`) and its questions become
labelled questions whose answers are the evidence.

An excerpt is located in the ingested text by `locate`: its offsets when they point at its text,
else its text after normalisation (markup and whitespace ignored), the occurrence nearest the
offsets. A question with an excerpt found nowhere is left out, its excerpt named in one line.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl
from goldenset.corpus.queries import LABELLED_COLUMNS, evidence_frame

SQUAD_SEPARATOR = "\n\n"  # between the paragraphs of an article: a paragraph break, as in .md
EXCERPT_SHOWN = 60  # characters of an excerpt named in a "not found" line


# --- locating an excerpt -------------------------------------------------------------------------

# Markup that may stand in one text and not the other: HTML tags (inline HTML in markdown, an
# excerpt copied from page source) and markdown link destinations ("[text](url)" renders "text").
_MARKUP = re.compile(r"<[^<>\n]*>|(?<=\])\([^()\s]*(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Normalised:
    """A text reduced to its letters and digits, casefolded; `positions[i]` is the offset in
    the original text of normalised character i (a character casefolding to two repeats it)."""

    chars: str
    positions: np.ndarray


def normalise(text: str) -> Normalised:
    """Letters and digits only: whitespace, punctuation and markdown emphasis, and what
    ingest turns HTML into, compare equal whatever their spelling."""
    skipped = np.zeros(len(text), dtype=bool)
    for markup in _MARKUP.finditer(text):
        skipped[markup.start() : markup.end()] = True
    chars, positions = [], []
    for offset, char in enumerate(text):
        if skipped[offset] or not char.isalnum():
            continue
        folded = char.casefold()
        chars.append(folded)
        positions.extend([offset] * len(folded))
    return Normalised("".join(chars), np.asarray(positions, dtype=np.int64))


def excerpt_key(excerpt: str) -> str:
    """The normalised characters of an excerpt, entities decoded (it may come from HTML source)."""
    return normalise(html.unescape(excerpt)).chars


def locate(
    document: str,
    normalised: Normalised,
    excerpt: str,
    start: int | None = None,
    end: int | None = None,
) -> tuple[int, int] | None:
    """[start, end) of the excerpt in the document text, or None when it is not there.

    `normalised` is `normalise(document)` (computed once per document). Offsets that point at
    the excerpt's very text win; otherwise the normalised excerpt is searched in the normalised
    document, and of several occurrences the one nearest `start` (the first without offsets).
    """
    exact = start is not None and end is not None and 0 <= start < end <= len(document)
    if exact and document[start:end] == excerpt:
        return start, end
    # entities decoded first (an excerpt copied from HTML source), then as written ("&amp;"
    # written out in a markdown file)
    for key in dict.fromkeys((excerpt_key(excerpt), normalise(excerpt).chars)):
        occurrences = _occurrences(normalised.chars, key)
        if occurrences:
            break
    if not occurrences:
        return None
    hint = start if start is not None else 0
    best = min(occurrences, key=lambda at: (abs(int(normalised.positions[at]) - hint), at))
    first, last = int(normalised.positions[best]), int(normalised.positions[best + len(key) - 1])
    return _with_edges(document, excerpt, first, last + 1)


def _occurrences(text: str, key: str) -> list[int]:
    starts = []
    at = text.find(key) if key else -1
    while at >= 0:
        starts.append(at)
        at = text.find(key, at + 1)
    return starts


def _with_edges(document: str, excerpt: str, start: int, end: int) -> tuple[int, int]:
    """The span widened by the excerpt's leading and trailing punctuation where the document
    has it too ("retry." keeps its full stop): the match itself is letters and digits only."""
    stripped = excerpt.strip()
    lead = next((i for i, char in enumerate(stripped) if char.isalnum()), len(stripped))
    trail = next((i for i, char in enumerate(reversed(stripped)) if char.isalnum()), 0)
    head, tail = stripped[:lead], stripped[len(stripped) - trail :]
    if head and document[max(start - len(head), 0) : start] == head:
        start -= len(head)
    if tail and document[end : end + len(tail)] == tail:
        end += len(tail)
    return start, end


# --- reading the files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Excerpt:
    doc_id: str
    text: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    evidence: tuple[Excerpt, ...]
    source: str  # file (and line) it came from, for messages


@dataclass(frozen=True)
class SquadArticle:
    doc_id: str
    title: str
    text: str
    parsed: list[Question]  # its questions, as read
    unanswerable: int  # v2.0 questions marked is_impossible


@dataclass
class LabelledResult:
    table: pd.DataFrame  # the questions: LABELLED_COLUMNS
    evidence: pd.DataFrame  # EVIDENCE_COLUMNS
    not_found: list[str] = field(default_factory=list)  # one line per excerpt not found
    left_out: int = 0  # questions with an excerpt not found
    unanswerable: int = 0  # SQuAD v2.0 questions without an answer

    def summary(self, sources: str) -> str:
        parts = [
            f"labelled: {len(self.table):,} questions, {len(self.evidence):,} evidence "
            f"spans from {sources}"
        ]
        if self.left_out:
            parts.append(f"left out {self.left_out:,} questions with an excerpt not found")
        if self.unanswerable:
            parts.append(f"left out {self.unanswerable:,} unanswerable (SQuAD v2.0)")
        return "; ".join(parts)


def read_labelled_file(path: Path) -> list[Question]:
    """Questions of a labelled.jsonl; a malformed line is an error naming it."""
    return read_jsonl(
        path,
        lambda record, number: _question(record, f"{path}:{number}"),
        lambda number: (
            f'{path}:{number}: expected {{"_id", "text", "evidence": [{{"doc_id", "text", '
            '"start"?, "end"?}]} with at least one excerpt; fix the line or set '
            "ingest.labelled: false"
        ),
    )


def _question(record: Mapping, where: str) -> Question:
    evidence = tuple(_excerpt(item) for item in record["evidence"])
    question = Question(str(record["_id"]), str(record["text"]), evidence, where)
    if not evidence:
        raise GoldensetError(f"{where}: no evidence excerpt; give at least one")
    return question


def _excerpt(item: Mapping) -> Excerpt:
    start, end = item.get("start"), item.get("end")
    offsets = (None, None) if start is None or end is None else (int(start), int(end))
    text = item["text"]
    if not isinstance(text, str) or not isinstance(item["doc_id"], (str, int)):
        raise TypeError("doc_id and text must be strings")
    return Excerpt(str(item["doc_id"]), text, *offsets)


def squad_data(record: object) -> list | None:
    """The `data` list of a parsed SQuAD file, or None when the JSON is not in that layout."""
    if not isinstance(record, dict) or not isinstance(record.get("data"), list):
        return None
    articles = record["data"]
    if not all(isinstance(a, dict) and isinstance(a.get("paragraphs"), list) for a in articles):
        return None
    return articles


def squad_articles(articles: list, source: str) -> list[SquadArticle]:
    """Each article as one document with its questions; `source` is the file's path under
    ingest.path. doc_id: `<source>#<title>`, `<source>#<number>` (from 1) when the title is
    missing or repeats. Answers are evidence (duplicates dropped); unanswerable ones counted."""
    titles = [str(a.get("title") or "") for a in articles]
    read = []
    for number, (article, title) in enumerate(zip(articles, titles, strict=True), start=1):
        unique = title and titles.count(title) == 1
        doc_id = f"{source}#{title if unique else number}"
        read.append(_squad_article(article, doc_id, title.replace("_", " ") or doc_id, source))
    return read


def _squad_article(article: dict, doc_id: str, title: str, source: str) -> SquadArticle:
    texts, parsed, unanswerable, offset = [], [], 0, 0
    for paragraph in article["paragraphs"]:
        context = str(paragraph.get("context", "")).replace("\r\n", "\n").replace("\r", "\n")
        for qa in paragraph.get("qas", []):
            if qa.get("is_impossible") or not qa.get("answers"):
                unanswerable += 1
                continue
            # several annotators often mark the same span: located spans are deduplicated
            spans = [(offset + int(a["answer_start"]), str(a["text"])) for a in qa["answers"]]
            evidence = tuple(Excerpt(doc_id, text, at, at + len(text)) for at, text in spans)
            parsed.append(Question(str(qa["id"]), str(qa["question"]), evidence, source))
        texts.append(context)
        offset += len(context) + len(SQUAD_SEPARATOR)
    return SquadArticle(doc_id, title, SQUAD_SEPARATOR.join(texts), parsed, unanswerable)


def read_squad_file(path: Path, source: str) -> list[SquadArticle] | None:
    """The articles of a SQuAD JSON file; None when the file is not SQuAD (or not JSON), an
    error when it is laid out as SQuAD but a question is malformed."""
    try:
        record = json.loads(path.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    articles = squad_data(record)
    if articles is None:
        return None
    try:
        return squad_articles(articles, source)
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise GoldensetError(
            f"ingest.path: {path} is laid out as SQuAD but a question or answer is malformed "
            f"({type(error).__name__}: {error}); fix it or leave it out with ingest.exclude"
        ) from None


# --- against the ingested documents --------------------------------------------------------------


def locate_questions(
    parsed: Iterable[Question],
    documents: Mapping[str, str],
    kept_twin: Mapping[str, str],
) -> LabelledResult:
    """The labelled set against the kept documents: questions, evidence spans, what was lost.

    An excerpt in a dropped duplicate is looked for in its kept twin. A question whose
    excerpt is not found anywhere it could be is left out whole: scoring it on the rest of its
    evidence would misstate what answers it.
    """
    normalised: dict[str, Normalised] = {}
    rows, evidence, not_found, seen = [], [], [], set()
    for question in parsed:
        if question.qid in seen:
            raise GoldensetError(
                f"{question.source}: question id {question.qid!r} appears twice in the "
                "labelled questions; every question needs its own _id"
            )
        seen.add(question.qid)
        spans, missing = [], None
        for excerpt in question.evidence:
            doc_id = kept_twin.get(excerpt.doc_id, excerpt.doc_id)
            text = documents.get(doc_id)
            span = None
            if text is not None:
                if doc_id not in normalised:
                    normalised[doc_id] = normalise(text)
                span = locate(text, normalised[doc_id], excerpt.text, excerpt.start, excerpt.end)
            if span is None:
                missing = excerpt
                break
            spans.append((question.qid, doc_id, *span))
        if missing is not None:
            not_found.append(_not_found_line(question, missing, missing.doc_id in documents))
            continue
        rows.append((question.qid, question.text))
        evidence.extend(dict.fromkeys(spans))
    return LabelledResult(
        pd.DataFrame(rows, columns=LABELLED_COLUMNS).astype(str),
        evidence_frame(evidence),
        not_found,
        left_out=len(not_found),
    )


def _not_found_line(question: Question, excerpt: Excerpt, document_known: bool) -> str:
    shown = " ".join(excerpt.text.split())
    shown = shown if len(shown) <= EXCERPT_SHOWN else shown[: EXCERPT_SHOWN - 1] + "…"
    where = "in" if document_known else "(no such ingested document)"
    return (
        f"labelled: left out {question.qid} ({question.source}): excerpt "
        f'"{shown}" not found {where} {excerpt.doc_id}'
    )
