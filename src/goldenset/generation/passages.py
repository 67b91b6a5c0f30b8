"""Which passages of which documents the LLM is asked about.

Passages are windows of whole sentences cut with generate.* params of their own, so changing
chunk.* never changes them. The sample is ordered by hashes of (seed, document id, passage text)
rather than by one shuffle of everything, so adding a document or editing one passage leaves the
choice of all other passages, and hence their cached answers, untouched.

Each question of a passage is about one target sentence that the program picks (the evidence),
by hashes of (seed, passage, sentence) among the sentences that state a finding (long enough, not
the document's title, not an aim, a method or an open question: see `states_a_finding`) and, when
a rarity is given, name something distinctive (a rare word, a name, a number: what a specific
question can keep), so titles, fragments and "This is important." are never asked about and the
choice is the same on every machine.

Long documents get more passages, but not in proportion: a document's share grows with its
passage count to the power generate.length_power (0.5: a 740k-character file is asked about
~4x as often as a 40k one, not 18x). A passage whose content words repeat an already chosen
passage's (Jaccard >= generate.passage_duplicate_jaccard: boilerplate repeated through a filing)
is skipped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from goldenset.core.echo import WindowFrequency, content_words, distinctive_words
from goldenset.core.errors import GoldensetError
from goldenset.core.paths import DOCUMENTS
from goldenset.core.spans import pack_spans, sentence_spans
from goldenset.core.stats import jaccard
from goldenset.generation.params import GenerateParams


@dataclass(frozen=True)
class Passage:
    doc_id: str
    start: int  # character offsets into the document text
    end: int
    text: str  # == document text[start:end]
    n_questions: int  # how many questions to ask about it
    # one (start, end) sentence span per question, offsets into `text`: each question's evidence
    targets: tuple[tuple[int, int], ...] = ()


LONG_SENTENCE_SIZES = 3  # a longer "sentence" is rarely one: a table or a list without full stops
MIN_TARGET_WORDS = 8  # shorter sentences (titles, headings, fragments) rarely state a fact

# A sentence that says what someone set out to do or how, or that something is not known, answers
# no question a searcher asks: of 60 questions a reviewer read, 14 were not answered by their
# evidence, and most of those sentences were aims, methods, titles or open questions. English
# research writing; other sentences and languages pass.
_SECTION_LABEL = re.compile(  # "## Results", and structured abstracts: "OBJECTIVES We ..."
    r"^\s*#|^\W*(?:(?:OBJECTIVE|AIM|GOAL|METHOD|MATERIAL|SETTING|PARTICIPANT|PATIENT|SUBJECT"
    r"|INTERVENTION|MEASUREMENT|(?:MAIN )?OUTCOME MEASURE|DATA SOURCE)(?:S|\(S\))?|PURPOSE"
    r"|METHODOLOGY|(?:STUDY )?DESIGN|POPULATION|DATA (?:EXTRACTION|COLLECTION)|STUDY SELECTION)\b"
)
_AIM_METHOD_OR_UNKNOWN = re.compile(
    r"\b(?:we|i)\s+(?:\w+\s+)?(?:sought|aim(?:s|ed)?|set\s+out|intend(?:s|ed)?|attempt(?:s|ed)"
    r"|hypothesi[sz]ed|evaluated|investigated|examined|assessed|tested|explored|studied|asked"
    r"|analy[sz]ed|compared|estimated|measured|used|performed|conducted|recruited|enrolled"
    r"|collected|searched|surveyed|characteri[sz]ed|reviewed|determined(?!\s+that))\b"
    r"|^\W*(?:to|in\s+order\s+to)\s+(?:determine|assess|evaluate|investigate|examine|explore"
    r"|test|compare|identify|characteri[sz]e|address|understand|clarify|establish)\b"
    r"|\b(?:aim|objective|purpose|goal)s?\s+(?:of|was|were|is|are)\b"
    r"|\b(?:was|were)\s+(?:\w+\s+)?(?:used|employed|applied)\s+to\b"
    r"|\b(?:was|were)\s+(?:measured|assessed|evaluated|characteri[sz]ed|estimated|recorded"
    r"|collected|obtained|recruited|enrolled|randomi[sz]ed|analy[sz]ed)\s+(?:using|by|with|from"
    r"|via|through|at|every|each|before|after|during|among|in|on|for)\b"
    r"|\b(?:assessed|examined|evaluated|investigated|explored)\s+(?:the\s+)?(?:effects?|role"
    r"|impact|association|relationship|whether|if|how)\b"
    r"|\b(?:remains?|remained|is|are|was|were|has\s+been|have\s+been)\s+(?:\w+\s+)?(?:unknown"
    r"|unclear|uncertain|controversial|elusive|poorly\s+understood|not\s+(?:well\s+|fully\s+)?"
    r"(?:understood|known|established|clear))\b|\blittle\s+is\s+known\b",
    re.IGNORECASE,
)


def states_a_finding(sentence: str) -> bool:
    """Whether a sentence can answer a question: at least MIN_TARGET_WORDS words, and not a
    markdown heading, an aim, a method or an open question ("We evaluated whether ...",
    "METHODS We used ...", "... was used to measure ...", "... has remained controversial")."""
    return (
        len(sentence.split()) >= MIN_TARGET_WORDS
        and not _SECTION_LABEL.match(sentence)
        and not _AIM_METHOD_OR_UNKNOWN.search(sentence)
    )


def target_sentences(
    text: str,
    count: int,
    seed: int,
    names_something: Callable[[str], bool] | None = None,
    title: tuple[int, int] | None = None,
) -> tuple[tuple[int, int], ...]:
    """Up to `count` sentences of `text` to ask about, as (start, end) spans in text order.

    Deterministic in (seed, text): the sentences that state a finding (and, with
    names_something, for which it is true) and do not overlap the `title` span, ranked by a
    hash of the seed, the passage and the sentence.
    """
    eligible = [
        (start, end)
        for start, end in sentence_spans(text)
        if states_a_finding(text[start:end])
        and (title is None or end <= title[0] or start >= title[1])
        and (names_something is None or names_something(text[start:end]))
    ]
    eligible.sort(key=lambda span: _rank(seed, text, text[span[0] : span[1]], span[0]))
    return tuple(sorted(eligible[:count]))


def document_passages(text: str, size: int, min_chars: int) -> list[tuple[int, int]]:
    """Whole-sentence windows of at most `size` characters, without those under `min_chars`.

    A sentence longer than `size` (up to LONG_SENTENCE_SIZES times it) is a passage of its own,
    whole: cut to size, its fragment would be a target that states half a fact. Longer runs of
    text without a sentence end (tables, lists) are cut at whitespace."""
    windows: list[tuple[int, int]] = []
    run: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        if size < end - start <= LONG_SENTENCE_SIZES * size:
            windows += pack_spans(run, size, 0, text=text) + [(start, end)]
            run = []
        else:
            run.append((start, end))
    windows += pack_spans(run, size, 0, text=text)
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
    length_power: float = 0.0,
    duplicate_jaccard: float | None = None,
    names_something: Callable[[str], bool] | None = None,
    titles: Mapping[str, str] | None = None,
) -> list[Passage]:
    """Passages spread across documents, until their questions reach max_questions.

    documents: (doc_id, text) pairs. A document with n passages is weighted n ** length_power
    (0: every document alike, round-robin; 1: in proportion to its length); its k-th passage
    (in hash order) comes at (k + offset) / weight, the offset a hash of the seed and doc_id, so
    a document's place never depends on the others. A passage gets questions_per_passage
    questions, or fewer when it has fewer target sentences; the last one may be trimmed to reach
    max_questions exactly. Passages without a sentence worth asking about, and near-duplicates of
    a chosen passage (duplicate_jaccard), are skipped. titles: doc_id -> title; a sentence that
    holds its document's title (a heading, or a title glued to the first sentence) is no target.
    """
    if max_questions <= 0:
        return []
    _check_unique_ids(documents)
    queue: list[tuple[float, str, Passage]] = []
    for doc_id, text in documents:
        passages = []
        title = title_span(text, (titles or {}).get(doc_id, ""))
        for start, end in document_passages(text, passage_size, min_chars):
            targets = target_sentences(
                text[start:end],
                questions_per_passage,
                seed,
                names_something,
                None if title is None else (title[0] - start, title[1] - start),
            )
            if targets:
                passages.append(Passage(doc_id, start, end, text[start:end], len(targets), targets))
        passages.sort(key=lambda p: _rank(seed, p.doc_id, p.text, p.start))
        weight = len(passages) ** length_power
        offset = int(_rank(seed, doc_id)[:12], 16) / 16**12
        queue += [((k + offset) / weight, _rank(seed, doc_id), p) for k, p in enumerate(passages)]
    queue.sort(key=lambda item: item[:2])

    chosen: list[Passage] = []
    words: list[set[str]] = []
    planned = 0
    for _, _, passage in queue:
        if planned >= max_questions:
            break
        if duplicate_jaccard is not None:
            mine = content_words(passage.text)
            if any(jaccard(mine, theirs) >= duplicate_jaccard for theirs in words):
                continue
            words.append(mine)
        chosen.append(passage)
        planned += passage.n_questions
    return _trim_questions(chosen, max_questions)


def title_span(text: str, title: str) -> tuple[int, int] | None:
    """Where the title first occurs in the document text (its heading), or None."""
    at = text.find(title.strip()) if title.strip() else -1
    return None if at < 0 else (at, at + len(title.strip()))


def passages_for(
    documents: Sequence[tuple[str, str]],
    params: GenerateParams,
    rarity: WindowFrequency | None = None,
    titles: Mapping[str, str] | None = None,
) -> list[Passage]:
    """The passages the `generate.*` params ask about; with a rarity and
    generate.distinctive_share, only sentences naming something distinctive are targets; with
    titles (doc_id -> title), a document's title is never one."""
    share = params.distinctive_share
    names_something = (
        None
        if rarity is None or share is None
        else lambda sentence: bool(distinctive_words(sentence, rarity, share))
    )
    return sample_passages(
        documents,
        max_questions=params.max_questions,
        questions_per_passage=params.questions_per_passage,
        passage_size=params.passage_size,
        min_chars=params.passage_min_chars,
        seed=params.seed,
        length_power=params.length_power,
        duplicate_jaccard=params.passage_duplicate_jaccard,
        names_something=names_something,
        titles=titles,
    )


def _trim_questions(passages: list[Passage], max_questions: int) -> list[Passage]:
    surplus = sum(p.n_questions for p in passages) - max_questions
    if surplus > 0 and passages:
        last = passages[-1]
        kept = last.n_questions - surplus
        passages[-1] = Passage(
            last.doc_id, last.start, last.end, last.text, kept, last.targets[:kept]
        )
    return passages


def _check_unique_ids(documents: Sequence[tuple[str, str]]) -> None:
    seen: set[str] = set()
    for doc_id, _ in documents:
        if doc_id in seen:
            raise GoldensetError(
                f"{DOCUMENTS}: doc_id {doc_id!r} appears twice: re-run the ingest stage"
            )
        seen.add(doc_id)
