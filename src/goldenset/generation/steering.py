"""Decoding that writes what validation accepts: the local writer's own token loop.

A request that validation rejects after the fact is paid in full (71% of the bundled model's
requests were). The in-process writer can do better: it sees every next-token score, so it never
picks a token that breaks a rule whatever follows, and it leans away from the passage's words.

- **Shape** (validation.check_shape, check_preamble): no preamble; a question's one '?' comes
  last and only after the words a query needs; a claim or a keyword search has none; the answer
  ends (end of generation, a line break, a question's '?') only when it is a whole query.
- **References** (validation.reference, the very function validation runs): a word that points
  into the source ("the passage", "this protein", an unnamed "he") breaks its rule for good once
  something follows it, when the rule is prefix-safe (validation.ReferenceRule): only those
  steer, so the decoder forbids exactly what validation would reject whatever came next ("Is it"
  may become "Is it safe to ...", "those" "those who ..."; validation judges them whole). Such a
  word is taken back: the decoder rewinds to the token that began it, wherever it sits, forbids
  that token there, and decodes on (at most MAX_REWINDS times an answer; then validation has the
  last word).
- **Echo**: the passage's content words lose `strength` logits, as whole words: a word written
  in one token loses them on that token, a longer one on each piece after its first (the first
  piece, " pro", begins many other words), so the model says the rest in other words. The
  evidence's distinctive terms (what check_specific asks a question to keep: a rare word, a name,
  a number) stay free: penalising them would fight the `vague` rule.

Validation still checks every answer: it is the safety net, and its counts show what the decoder
lets through. Nothing here knows llama.cpp: a `TokenModel` is what the loop needs of a model, so the
loop is tested in memory and run by providers/local.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from goldenset.core.echo import content_words, distinctive_words, marked_terms
from goldenset.generation import validation
from goldenset.generation.prompt import FORMS, QUESTION, Form
from goldenset.generation.validation import (
    InvalidAnswer,
    Specificity,
    fewest_words,
    preamble,
    reference,
    word_count,
)

# bump when the loop below changes what it writes; a rule's pattern or a parameter changes the
# steering key by itself (steering_key)
LOOP_REVISION = 2
MAX_REWINDS = 12  # words taken back per answer
CANDIDATES = 64  # highest-scoring tokens considered at a step: a greedy pick rarely needs more
REPEAT_LAST_N = 64  # llama.cpp's window for the repeat penalty, which this loop reproduces
_CLOSING = "\"')] "  # may follow a question's '?'
_WRITTEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")  # a term as written (goldenset.core.echo)
_STEM_CHARS = 5  # as goldenset.core.echo: "histone" and "histones" are one term


@dataclass(frozen=True)
class Steer:
    """What the decoder holds one answer to: the form's shape and the words to lean away from."""

    form: Form | None  # None: no rule, the answer ends at its first line break
    penalised: frozenset[str] = frozenset()  # content words whose first tokens lose `strength`
    strength: float = 0.0
    boosted: frozenset[str] = frozenset()  # the evidence's distinctive terms, as written
    boost: float = 0.0  # logits their first tokens gain


def steer_for(
    passage: str,
    evidence: str,
    form: Form,
    strength: float,
    specificity: Specificity | None = None,
    boost: float = 0.0,
) -> Steer:
    """The steer of a query about `evidence`, a sentence of `passage`: the passage's content
    words are penalised, but for the evidence's distinctive terms (and words of their stem),
    which gain `boost`: the `vague` rule asks a question to keep one."""
    if specificity is None:
        free = marked_terms(evidence)
    else:
        free = distinctive_words(evidence, specificity.rarity, specificity.max_share)
    free_stems = {word[:_STEM_CHARS] for word in free}
    penalised = {w for w in content_words(passage) if w[:_STEM_CHARS] not in free_stems}
    boosted = {term for term in _WRITTEN.findall(evidence) if term.lower() in free} if boost else ()
    return Steer(
        form,
        frozenset(penalised) if strength else frozenset(),
        strength,
        frozenset(boosted),
        boost,
    )


def shape_allows(text: str, form: Form | None) -> bool:
    """Whether a partial answer can still become a query of `form`."""
    if form is None:
        return True
    query = text.lstrip(_CLOSING)
    marks = query.count("?")
    if form is not QUESTION:
        return marks == 0
    if marks == 0:
        return True
    mark = query.index("?")
    return marks == 1 and not query[mark + 1 :].strip(_CLOSING) and _long_enough(query, form)


def is_whole(text: str, form: Form | None) -> bool:
    """Whether the answer may end here: a query of its form's shape and length (without a
    form, any text)."""
    if form is None:
        return bool(text.strip())
    query = text.strip().strip(_CLOSING)
    if not query or not shape_allows(query, form) or not _long_enough(query, form):
        return False
    return query.endswith("?") if form is QUESTION else True


def _long_enough(query: str, form: Form) -> bool:
    return word_count(query) >= fewest_words(form)


def broken_rule(text: str, form: Form | None) -> InvalidAnswer | None:
    """A rule that `text`, the start of an answer, breaks whatever follows (validation rejects
    every query that starts so), with where its offending word starts; None when every
    continuation is still open."""
    if form is None:
        return None
    return preamble(text, prefix=True) or reference(text, form, prefix=True)


def steering_key() -> str:
    """What the decoder holds an answer to, hashed: the patterns, word lists and parameters of
    the rules it steers by, and its own. It joins the local writer's identity, so editing a rule
    asks again and a refactor that changes none of them does not."""
    rules = [
        (
            rule.code,
            rule.pattern.pattern,
            rule.pattern.flags,
            rule.prefix_safe,
            rule.statements_only,
        )
        for rule in validation.REFERENCE_RULES
    ]
    patterns = [validation._PREAMBLE, validation._DUMMY_IT, validation._DUMMY_ES]
    words = [
        validation.PREFIX_PRONOUNS,
        validation._SUBJECT_PRONOUNS,
        validation._CLAUSE_OPENERS,
        validation._NOT_ANTECEDENTS,
    ]
    described = {
        "rules": rules,
        "patterns": [(pattern.pattern, pattern.flags) for pattern in patterns],
        "words": [sorted(group) for group in words],
        "fewest_words": [fewest_words(form) for form in FORMS.values()],
        "decoder": [LOOP_REVISION, MAX_REWINDS, CANDIDATES, REPEAT_LAST_N, _CLOSING, _STEM_CHARS],
    }
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()[:16]


class TokenModel(Protocol):
    """What the decoder needs of a language model, positioned after the prompt."""

    def logits(self) -> np.ndarray:
        """The next token's scores (float32, one per vocabulary entry)."""
        ...

    def advance(self, token: int) -> None:
        """Evaluate one generated token."""
        ...

    def rewind(self, generated: int) -> None:
        """Forget every generated token after the first `generated`."""
        ...

    def text(self, tokens: Sequence[int]) -> str: ...

    def is_end(self, token: int) -> bool:
        """An end-of-generation token."""
        ...

    def word_tokens(self, word: str) -> Iterable[Sequence[int]]:
        """The token sequences that write `word` (with or without a leading space, capitalised
        or not)."""
        ...


@dataclass(frozen=True)
class Sampling:
    """Greedy at temperature 0, else llama.cpp's top-k, top-p, min-p and temperature."""

    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    seed: int = 0


@dataclass
class Decoded:
    tokens: list[int]
    text: str
    truncated: bool  # stopped by max_tokens or the deadline, not by a whole query
    steered: int = 0  # steps whose chosen token is not the one the scores alone would pick
    rewinds: int = 0


@dataclass
class _Step:
    scores: np.ndarray  # the model's scores before this step's token
    banned: set[int] = field(default_factory=set)  # taken back here: not chosen again


def decode(
    model: TokenModel,
    steer: Steer,
    sampling: Sampling,
    max_tokens: int,
    deadline: float = float("inf"),
) -> Decoded:
    """One answer, token by token, that obeys `steer` (see the module's docstring)."""
    rng = np.random.default_rng(sampling.seed)
    bias = _Bias(model, steer)
    tokens: list[int] = []
    steps: list[_Step] = []
    steered = rewinds = 0
    while len(tokens) < max_tokens and time.monotonic() <= deadline:
        if len(steps) == len(tokens):
            steps.append(_Step(model.logits().copy()))
        step = steps[len(tokens)]
        scores = _repeat_penalised(step.scores, tokens, sampling.repeat_penalty)
        text = model.text(tokens)
        biased = scores + bias.at(tokens)
        token = _choose(model, biased, text, tokens, step.banned, steer.form, sampling, rng)
        if token is None:  # nothing may follow: validation names what is wrong
            return Decoded(tokens, text, True, steered, rewinds)
        steered += token != int(np.argmax(scores))
        ending = _ending(model, tokens, token, text)
        written = [*tokens, token] if ending is None or not model.is_end(token) else tokens
        if ending is None:
            model.advance(token)
            tokens.append(token)
            text = model.text(tokens)
        else:
            text = ending
        # a word is complete once something follows it, or the answer ends
        broken = rewinds < MAX_REWINDS and broken_rule(
            text + " " if ending is not None else text, steer.form
        )
        if broken:
            start = _step_writing(model, written, broken.at or 0)
            steps[start].banned.add(written[start])
            del tokens[start:], steps[start + 1 :]
            model.rewind(start)
            rewinds += 1
            continue
        if ending is not None or (steer.form is QUESTION and text.rstrip(_CLOSING).endswith("?")):
            return Decoded(written, text, False, steered, rewinds)  # the query is whole
    return Decoded(tokens, model.text(tokens), True, steered, rewinds)


def _ending(model: TokenModel, tokens: list[int], token: int, text: str) -> str | None:
    """The answer's whole text when `token` ends it (an end-of-generation token, or one whose
    text holds a line break, "?\n": what comes before the break is the answer's), else None."""
    if model.is_end(token):
        return text
    added = model.text([*tokens, token])[len(text) :]
    return text + added.split("\n", 1)[0] if "\n" in added else None


class _Bias:
    """The logits the steer adds at a step: the passage's words penalised as whole words (a
    one-token word on that token, a longer one on each piece after its first, once the pieces
    before it are written), the evidence's distinctive terms boosted on their first token."""

    def __init__(self, model: TokenModel, steer: Steer) -> None:
        self._static: np.ndarray | float = 0.0
        self._following: dict[tuple[int, ...], set[int]] = {}  # pieces written -> next piece
        self._lengths: list[int] = []
        self._strength = steer.strength
        if not (steer.penalised and steer.strength) and not (steer.boosted and steer.boost):
            return
        static = np.zeros_like(model.logits())
        for word in steer.penalised if steer.strength else ():
            for pieces in model.word_tokens(word):
                if len(pieces) == 1:
                    static[pieces[0]] = -steer.strength
                for end in range(1, len(pieces)):
                    self._following.setdefault(tuple(pieces[:end]), set()).add(pieces[end])
        for term in steer.boosted if steer.boost else ():
            # a term both penalised and boosted is the evidence's
            firsts = {pieces[0] for pieces in model.word_tokens(term)}
            static[[t for t in firsts if len(model.text([t]).strip()) >= 3]] = steer.boost
        self._static = static
        self._lengths = sorted({len(written) for written in self._following})

    def at(self, tokens: list[int]) -> np.ndarray | float:
        if not self._following:
            return self._static
        following = {
            piece
            for length in self._lengths
            if len(tokens) >= length
            for piece in self._following.get(tuple(tokens[-length:]), ())
        }
        if not following:
            return self._static
        bias = np.array(self._static, copy=True)
        bias[list(following)] -= self._strength
        return bias


def _repeat_penalised(scores: np.ndarray, tokens: list[int], penalty: float) -> np.ndarray:
    """llama.cpp's repeat penalty over the last REPEAT_LAST_N generated tokens: a score above 0
    divided by it, one below multiplied."""
    seen = list(set(tokens[-REPEAT_LAST_N:]))
    if penalty == 1.0 or not seen:
        return scores
    scores = scores.copy()
    repeated = scores[seen]
    scores[seen] = np.where(
        repeated > 0, repeated / np.float32(penalty), repeated * np.float32(penalty)
    )
    return scores


def _choose(
    model: TokenModel,
    scores: np.ndarray,
    text: str,
    tokens: list[int],
    banned: set[int],
    form: Form | None,
    sampling: Sampling,
    rng: np.random.Generator,
) -> int | None:
    """The token to write next: the best allowed one, or one sampled among the allowed."""
    width = min(CANDIDATES if sampling.temperature == 0 else sampling.top_k, scores.size - 1)
    top = np.argpartition(-scores, width)[:width]
    top = top[np.argsort(-scores[top], kind="stable")]
    allowed = [
        int(t) for t in top if t not in banned and _allows(model, text, tokens, int(t), form)
    ]
    if not allowed:
        return None
    if sampling.temperature == 0:
        return allowed[0]
    return _sample(scores[allowed], allowed, sampling, rng)


def _allows(model: TokenModel, text: str, tokens: list[int], token: int, form: Form | None) -> bool:
    if model.is_end(token):
        return is_whole(text, form)
    added = model.text([*tokens, token])[len(text) :]
    if "\n" in added:
        return is_whole(text + added.split("\n", 1)[0], form)
    return shape_allows(text + added, form)


def _sample(
    scores: np.ndarray, allowed: list[int], sampling: Sampling, rng: np.random.Generator
) -> int:
    """top-p, min-p and temperature over the allowed tokens (already the top-k, best first)."""
    probs = np.exp((scores - scores.max()) / sampling.temperature)
    probs /= probs.sum()
    keep = max(1, int(np.searchsorted(np.cumsum(probs), sampling.top_p)) + 1)
    probs = probs[:keep]
    probs = np.where(probs >= sampling.min_p * probs[0], probs, 0.0)
    return allowed[int(rng.choice(len(probs), p=probs / probs.sum()))]


def _step_writing(model: TokenModel, tokens: list[int], at: int) -> int:
    """The step whose token writes character `at` of the answer: the one that began the word a
    rule takes back, wherever it sits."""
    for step in range(len(tokens)):
        if len(model.text(tokens[: step + 1])) > at:
            return step
    return max(len(tokens) - 1, 0)
