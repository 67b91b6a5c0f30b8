"""Turn an LLM's raw answer into a checked query, or say exactly why not.

Every check is a rule a golden-set query must obey: one natural stand-alone query of the users'
form (prompt.Form: a question ends with its one "?", a claim or a keyword search has none), not a
copy of the passage, not an echo of its document's words (generate.max_echo,
goldenset.core.echo.echo),
answered by its evidence (the sentence the program marked), naming nothing its document never
mentions (a name or number it does not hold adds a premise), and specific enough to find its
document: it keeps a distinctive term of its evidence (generate.distinctive_share). A failed
check names a short reason code (counted in the stage summary) and a sentence the LLM is shown
when it is asked again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from goldenset.core.echo import (
    WindowFrequency,
    WindowIndex,
    answered_terms,
    content_words,
    distinctive_terms,
    echo,
    overlap,
    unknown_names,
)
from goldenset.generation.prompt import CLAIM, KEYWORDS, QUESTION, Form, few_shot_passages

MIN_QUESTION_WORDS = 4  # a question or a claim; a keyword search needs MIN_KEYWORD_WORDS
MIN_KEYWORD_WORDS = 2
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
# the languages the prompt shows examples in (prompt.FEW_SHOT): English and German
_REFERS_TO_SOURCE = re.compile(
    r"\b(?:the|this|that|given|above)\s+"
    r"(?:passage|text|excerpt|paragraph|snippet|document|article|study|paper)\b"
    r"|\b(?:de[mnrs]|die|das|dies(?:e[mnrs]?)?|obigen?|vorliegenden?|genannten?)\s+"
    r"(?:text(?:es)?|abschnitts?|passage|auszugs?|absatz(?:es)?|dokuments?|artikels?|studie|arbeit)\b"
    r"|\b(?:im|laut|gemäß)\s+(?:text|abschnitt|auszug|absatz|dokument|artikel)\b",
    re.IGNORECASE,
)
# Checked against the strict labels (labels/): all 9 of 226 labelled questions that ask why
# failed, none of their evidence sentences giving a cause. "How" is left alone: "How do I turn
# off retries?" is what a team's documentation answers.
_WHY = re.compile(r"^\W*(?:why|warum|weshalb|wieso)\b", re.IGNORECASE)
_GIVES_CAUSE = re.compile(
    r"\b(?:because|due\s+to|owing\s+to|caused\s+by|leads?\s+to|led\s+to|results?\s+in"
    r"|resulting\s+in|thereby|since|so\s+that|in\s+order\s+to|reasons?|explains?"
    r"|weil|daher|dadurch|aufgrund|deshalb|deswegen|führt\s+zu|grund)\b",
    re.IGNORECASE,
)
# "this protein", "these mice", "dieses Protein": a thing only the passage names
_THIS = re.compile(r"\b(?:this|these)\b|\bdies(?:e[mnrs]?)?\b", re.IGNORECASE)
# "those mice" too, but "those who smoke", "jene, die rauchen" name it: the word after decides
_THOSE = re.compile(
    r"\bthose\b(?!\s+(?:who|whom|whose|with|without|that|which|of|in|on|at)\b)"
    r"|\bjene[mnrs]?\b(?!\s*,?\s*(?:die|der|welche[mnrs]?|mit|ohne)\b)",
    re.IGNORECASE,
)
# subject pronouns: "What antibodies did they test for?" asks about people only the passage names
_SUBJECT_PRONOUNS = {"they", "he", "she", "it", "sie", "er", "es"}
# words that open a clause: a pronoun after one, with a noun before it, can refer to that noun
# ("Do mice gain weight when they age?", "Nehmen Mäuse zu, wenn sie altern?")
_CLAUSE_OPENERS = set(
    _WORD.findall(
        "when whenever if because after before while once since until unless although though "
        "whether that so and but or as where than which who whom "
        "wenn weil da falls nachdem bevor während sobald seit seitdem bis obwohl ob dass "
        "damit und aber oder sondern als wo welche welcher welches welchen welchem "
    )
)
# words that are no antecedent: question words, auxiliaries, pronouns, articles
_NOT_ANTECEDENTS = set(
    _WORD.findall(
        "what why how who whom whose which where when do does did is are was were be been can "
        "could will would should shall may might must have has had happens happen happened "
        "i you we they he she it me us them my your our their its the a an there "
        "was warum wieso weshalb wie wer wen wem wessen welche welcher welches welchen wo wann "
        "ist sind war waren wird werden wurde wurden kann können konnte muss müssen soll sollen "
        "hat haben hatte hatten darf dürfen tun tut macht passiert geschieht "
        "ich du wir ihr sie er es man der die das den dem des ein eine einen einem einer "
    )
)
_PERSONAL_PRONOUNS = {"ich", "du", "wir", "ihr", "man", "er", "sie", "es"}
# dummy subjects: "Is it safe to ...", "How long does it take to ...", "Gibt es ...",
# "Ist es sinnvoll, ... zu nehmen?"
_DUMMY_IT = re.compile(
    r"(?:\b(?:is|was|isn't|wasn't)\s+it|\bit\s+be|\bit\s+(?:take|takes|took|costs?|matters?"
    r"|pays?|helps?|hurts?|makes?\s+sense))\b(?=(?:\s+\S+){0,4}?\s+(?:to|that|whether|if|for)\b)",
    re.IGNORECASE,
)
_DUMMY_ES = re.compile(
    r"\b(?:gibt|gab|gäbe|geben|handelt|geht)\s+es\b|\bes\s+(?:gibt|gab)\b|\bes\b(?=[^,?]*,)",
    re.IGNORECASE,
)


# function words that tell the prompt's two languages apart (none is a word of both)
_LANGUAGE_WORDS = {
    "en": set(
        _WORD.findall("the of and to in is are what how does do which why when with for that can")
    ),
    "de": set(
        _WORD.findall(
            "der die das und ist sind nicht wie welche welcher warum wann mit für ein eine kann "
            "können ich man zu um den dem des im auf von"
        )
    ),
}


def language_of(text: str) -> str | None:
    """'en' or 'de' by the function words the text uses most, None when it uses none."""
    words = _words(text)
    counts = {name: sum(w in known for w in words) for name, known in _LANGUAGE_WORDS.items()}
    best = max(counts, key=counts.__getitem__)
    return best if counts[best] > 0 and list(counts.values()).count(counts[best]) == 1 else None


# a claim of two sentences: a sentence end followed by another sentence
_SENTENCE_BREAK = re.compile(r"[.!;]\s+[A-Z\u00c0-\u00de]")


# "Our screen found ...", "We've shown ...": a statement in the authors' voice is no user's query
# (a question may say "we": "How do we restore a backup?" is a team asking)
_AUTHORS = re.compile(r"\b(?:we|we've|our|ours|us|wir|unsere[mnrs]?)\b", re.IGNORECASE)


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

    def __init__(self, code: str, detail: str, at: int | None = None) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.at = at  # where the offending words start in the text checked, when a rule knows


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
    form: Form = QUESTION,
) -> str:
    """Check one raw answer (the query alone, of `form`) about `passage`; InvalidAnswer names the
    first broken rule.

    asked: questions already accepted for the same passage (a repeat is invalid).
    source: the question's document (goldenset.core.echo.WindowIndex); with max_echo, a
    question whose echo (its best overlap with one window of the document) is above max_echo is
    invalid.
    example_queries: real queries shown as style examples; a question that copies one is invalid.
    evidence: the marked sentence; a question it does not answer is invalid, and with
    specificity, one that keeps none of its distinctive terms.
    """
    if truncated:
        raise InvalidAnswer("truncated", "the answer was cut off at the token limit; keep it short")
    question = check_question(text, passage, asked, form)
    if source is not None:
        check_topic(question, source.where.keys())
        check_known_names(question, source)
    if evidence is not None:
        check_answered(question, evidence)
        if form is QUESTION:
            check_why(question, evidence)
        if specificity is not None:
            check_specific(question, evidence, specificity)
    if max_echo is not None and source is not None:
        share = echo(question, source)
        if share > max_echo:
            raise InvalidAnswer("echoes_document", echo_advice(share))
    for example in example_queries:
        if overlap(question, example) >= COPIED_EXAMPLE_SHARE:
            raise InvalidAnswer(
                "copies_example", "it copies one of the example searches; ask about the passage"
            )
    return question


def echo_advice(share: float) -> str:
    """What the LLM is told about a question that reuses too many of its document's words."""
    return (
        f"{share:.0%} of its words are the document's own words; keep the one specific name or "
        "term, and say the rest the way a user who never read it would"
    )


def check_known_names(question: str, source: WindowIndex) -> None:
    """InvalidAnswer when the question names something (a name, a number) its document never
    mentions: it adds a premise no passage of the document can answer."""
    if unknown := sorted(unknown_names(question, source)):
        raise InvalidAnswer(
            "unknown_name",
            f"the document never mentions {', '.join(unknown)}; ask only about what it says",
        )


def check_answered(question: str, evidence: str) -> None:
    """InvalidAnswer when the question shares no word with its evidence sentence: whatever it
    asks, the marked sentence does not speak of it."""
    if not answered_terms(question, evidence):
        raise InvalidAnswer(
            "not_answered",
            "the marked sentence does not answer it; ask about what that sentence says",
        )


def check_why(question: str, evidence: str) -> None:
    """InvalidAnswer when the question asks why and its evidence gives no cause: the sentence
    states a finding, and the question adds a premise about its reason."""
    if _WHY.match(question) and not _GIVES_CAUSE.search(evidence):
        raise InvalidAnswer(
            "unanswered_why", "the marked sentence does not say why; ask about what it states"
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


def unresolved_pronoun(question: str, only: Collection[str] | None = None) -> re.Match | None:
    """The first subject pronoun with nothing in the question to refer to (its match in
    `question`), or None; with `only`, the first such pronoun among those words.

    A pronoun can refer to a noun only from a later clause ("... when they age"): it is resolved
    when a clause opener stands before it with a possible antecedent before that opener.
    """
    undummied = _DUMMY_ES.sub(_unsubject, _DUMMY_IT.sub(_unsubject, question))
    matches = list(_WORD.finditer(undummied))  # the offsets of `question`: dummies keep length
    tokens = [match.group() for match in matches]
    for index, token in enumerate(tokens):
        if (only is not None and token.lower() not in only) or not _is_subject_pronoun(
            tokens, index
        ):
            continue
        before = [t.lower() for t in tokens[:index]]
        openers = [i for i, t in enumerate(before) if t in _CLAUSE_OPENERS]
        candidates = before[: openers[-1]] if openers else []
        if not any(t not in _NOT_ANTECEDENTS | _CLAUSE_OPENERS for t in candidates):
            return matches[index]
    return None


def _unsubject(dummy: re.Match) -> str:
    """The dummy subject's words with its pronoun, which refers to nothing, blanked."""
    return re.sub(r"\b(?:it|es)\b", "  ", dummy.group(), flags=re.IGNORECASE)


def _is_subject_pronoun(tokens: list[str], index: int) -> bool:
    token, word = tokens[index], tokens[index].lower()
    previous = tokens[index - 1] if index else None
    if word not in _SUBJECT_PRONOUNS or (token == "Sie" and index > 0):  # the polite "you"
        return False
    if word == "it":  # the object in "How do I turn it off?"
        return previous is None or previous.lower() in _NOT_ANTECEDENTS | _CLAUSE_OPENERS
    if word in ("sie", "es"):  # the object after a pronoun or a capitalised noun: "Wie behandelt
        # man sie?", "Wie behandeln Ärzte sie?"
        noun = previous is not None and index > 1 and previous[0].isupper()
        return previous is None or not (noun or previous.lower() in _PERSONAL_PRONOUNS)
    return True


def check_question(
    question: str, passage: str, asked: Sequence[str] = (), form: Form = QUESTION
) -> str:
    """The query, stripped, when it is one natural stand-alone query of `form`; else
    InvalidAnswer."""
    question = question.strip()
    if len(question) > 1 and question[0] == question[-1] and question[0] in "\"'":
        question = question[1:-1].strip()
    if "\n" in question:
        raise InvalidAnswer("several_questions", "the question spans several lines; give one")
    check_preamble(question)
    check_shape(question, form)
    asked_in, written_in = language_of(question), language_of(passage)
    if asked_in and written_in and asked_in != written_in:
        raise InvalidAnswer(
            "wrong_language", "the question is not in the passage's language; ask in its language"
        )
    words = _words(question)
    fewest = fewest_words(form)
    if len(words) < fewest:
        raise InvalidAnswer("too_short", f"the {form.noun} has fewer than {fewest} words")
    if len(words) > MAX_QUESTION_WORDS or len(question) > MAX_QUESTION_CHARS:
        raise InvalidAnswer(
            "too_long", f"the {form.noun} is longer than {MAX_QUESTION_WORDS} words"
        )
    check_references(question, form)
    if _shares_run(question, passage, COPIED_RUN_WORDS):
        raise InvalidAnswer(
            "copies_passage", "the question copies the passage word for word; use your own words"
        )
    if any(_words(question) == _words(earlier) for earlier in asked):
        raise InvalidAnswer("repeats_question", "that question was already asked; ask another")
    return question


def fewest_words(form: Form) -> int:
    """The words a query of `form` needs at least (too_short below)."""
    return MIN_KEYWORD_WORDS if form is KEYWORDS else MIN_QUESTION_WORDS


def word_count(text: str) -> int:
    return len(_words(text))


def check_preamble(query: str) -> None:
    """InvalidAnswer when the query opens with a preamble ("Sure", "Question 1:", a bullet)."""
    if broken := preamble(query):
        raise broken


def preamble(text: str, *, prefix: bool = False) -> InvalidAnswer | None:
    """The preamble `text` opens with, or None; with `prefix`, only one that no continuation
    of `text` can take back: one something already follows ("Ok" may become "Okra"), in a text
    not opened by a quote (validation drops a pair of quotes, and only a whole query shows
    whether it is a pair)."""
    query = text.lstrip()
    if prefix and query[:1] in _QUOTES:
        return None
    match = _PREAMBLE.match(query)
    if match is None or (prefix and match.end() >= len(query)):
        return None
    return InvalidAnswer(
        "preamble",
        "the question starts with a preamble; give only the question",
        at=len(text) - len(query),
    )


_QUOTES = "\"'"


@dataclass(frozen=True)
class ReferenceRule:
    """One way a query points into its source instead of naming what it asks about.

    A rule whose match no later text can take back is `prefix_safe` (its pattern looks at
    nothing past what it matches): a match that something already follows breaks it whatever
    is written next, so the decoder (steering.py) forbids it while the query is written. The
    others ("those" before "who", "it" before "to") wait for the whole query."""

    code: str
    pattern: re.Pattern[str]
    detail: str  # {word} is the text matched
    prefix_safe: bool
    statements_only: bool = False  # claims and keyword searches, not questions


REFERENCE_RULES = (
    ReferenceRule(
        "refers_to_passage",
        _REFERS_TO_SOURCE,
        "the question mentions the passage; it must stand on its own",
        prefix_safe=True,
    ),
    ReferenceRule(
        "refers_to_passage",
        _THIS,
        "'{word}' points at something only the passage names; name it instead",
        prefix_safe=True,
    ),
    ReferenceRule(
        "refers_to_passage",
        _THOSE,
        "'{word}' points at something only the passage names; name it instead",
        prefix_safe=False,
    ),
    ReferenceRule(
        "refers_to_passage",
        _AUTHORS,
        "'{word}' speaks as the document's authors; say what was found, or by whom",
        prefix_safe=True,
        statements_only=True,
    ),
    # before the pronoun rule: a person gets the sharper reason
    ReferenceRule(
        "unnamed_person",
        _UNNAMED_PERSON,
        "'he' or 'she' names no one; name the person or their role",
        prefix_safe=True,
    ),
)
# subject pronouns whose resolution the words before them decide ("it" and "es" may turn out
# dummies, "sie" the polite "you" or an object, by what follows)
PREFIX_PRONOUNS = frozenset({"they", "er"})
_PRONOUN_DETAIL = "'{word}' refers to something the question does not name; name it instead"


def check_references(query: str, form: Form = QUESTION) -> None:
    """InvalidAnswer when the query points into its source instead of naming what it asks
    about: "the passage", "this protein", the authors' "we" (claims and keyword searches), an
    unnamed "he" or "she", a pronoun with nothing to refer to."""
    if broken := reference(query, form):
        raise broken


def reference(text: str, form: Form = QUESTION, *, prefix: bool = False) -> InvalidAnswer | None:
    """The first way `text` points into its source (REFERENCE_RULES, then an unresolved
    pronoun), or None. With `prefix`, `text` is the start of a query being written: only the
    prefix-safe rules, and only a match something already follows, which every continuation of
    `text` also breaks (the decoder's test: what it forbids, validation rejects)."""
    for rule in REFERENCE_RULES:
        if (prefix and not rule.prefix_safe) or (rule.statements_only and form is QUESTION):
            continue
        if match := _first_match(rule.pattern, text, decided=prefix):
            # "the passage": the word to take back is the last one, not the article
            last = match.start() + len(match.group().rstrip()) - len(match.group().split()[-1])
            return InvalidAnswer(rule.code, rule.detail.format(word=match.group()), last)
    pronoun = unresolved_pronoun(text, PREFIX_PRONOUNS if prefix else None)
    if pronoun is not None and not (prefix and pronoun.end() >= len(text)):
        return InvalidAnswer(
            "refers_to_passage", _PRONOUN_DETAIL.format(word=pronoun.group()), pronoun.start()
        )
    return None


def _first_match(pattern: re.Pattern[str], text: str, *, decided: bool) -> re.Match | None:
    """The first match of `pattern`; when `decided`, the first that a character follows (a word
    at the very end may still grow: "this" into "thistle")."""
    for match in pattern.finditer(text):
        if not decided or match.end() < len(text):
            return match
    return None


def check_shape(query: str, form: Form) -> None:
    """InvalidAnswer unless the query has its form's shape: a question ends with its one '?'; a
    claim is one statement; a keyword search is neither a question nor a sentence."""
    marks = query.count("?")
    if form is QUESTION:
        if marks == 0:
            raise InvalidAnswer("not_a_question", "the question does not end with a question mark")
        if marks > 1 or not query.endswith("?"):
            raise InvalidAnswer(
                "several_questions", "ask exactly one question, ending with its '?'"
            )
        return
    if marks:
        raise InvalidAnswer(
            "not_a_claim" if form is CLAIM else "not_keywords",
            f"that is a question; write a {form.noun}, with no question mark",
        )
    if _SENTENCE_BREAK.search(query.rstrip(".!")):
        raise InvalidAnswer("several_questions", f"write exactly one {form.noun}, in one sentence")
