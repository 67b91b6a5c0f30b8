"""One run's questions, asked passage by passage through the answer cache.

A `Session` holds what every request shares (provider, cache, budget, prompt, the documents a
question must not echo) and walks a passage's questions and retries in order, each answered from
the cache when it can be. What happens on a cache miss is the caller's choice, a `MissHandler`:
`Session.ask_now` asks the LLM at once (the synchronous path), the Message Batches path
(providers/anthropic/batches.py) records the request for its next batch, and `ask_nothing` leaves
it for a later run. So both paths walk the same questions with the same validation, and ask for
the same answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from goldenset.core.echo import WindowIndex, echo
from goldenset.corpus.queries import Refused
from goldenset.generation.aim import echo_aim
from goldenset.generation.cache import AnswerCache, answer_key
from goldenset.generation.interface import Completion, Provider, steers
from goldenset.generation.params import GenerateParams
from goldenset.generation.passages import Passage
from goldenset.generation.pricing import BUDGET_CHARS_PER_TOKEN, Budget, estimate_tokens
from goldenset.generation.prompt import (
    FORMS,
    PROMPT_SHA,
    build_messages,
    chosen_form,
    mark_target,
    system_prompt,
)
from goldenset.generation.steering import Steer, steer_for
from goldenset.generation.validation import Answer, InvalidAnswer, Specificity, validate_question

# (cache key, messages, attempt, steer) -> the answer, or None when it is not asked in this walk
MissHandler = Callable[[str, list[dict[str, str]], int, Steer | None], Completion | None]


def ask_nothing(
    key: str, messages: list[dict[str, str]], attempt: int, steer: Steer | None = None
) -> None:
    """A miss left for a later run (after the batches: what they did not answer)."""
    return None


class Candidate(NamedTuple):
    """A valid answer to one query's prompt."""

    query: str
    echo: float  # its window echo in its document (goldenset.core.echo.echo)
    attempt: int


@dataclass
class Outcome:
    """What became of one question of one passage."""

    answer: Answer | None = None
    reasons: list[tuple[str, str]] = field(default_factory=list)  # (code, detail) per rejection
    answers: list[str] = field(default_factory=list)  # the rejected answers' texts
    not_asked: bool = False
    cache_hits: int = 0
    candidates: list[Candidate] = field(default_factory=list)  # the valid answers


def request_text(system: str, messages: list[dict[str, str]]) -> str:
    """The text of a request, as the token estimates count it."""
    return system + json.dumps(messages, ensure_ascii=False)


@dataclass(frozen=True)
class Correction:
    """An invalid answer and what the LLM is told about it."""

    answer: str
    reason: str
    code: str


def shown_corrections(
    corrections: list[Correction], attempt: int, uncorrected: int
) -> list[tuple[str, str]]:
    """The (answer, reason) turns an attempt shows: the first `uncorrected` tries after the
    first ask the same prompt (sampled anew: candidates and resamples), later ones name what was
    wrong."""
    return [
        (correction.answer, correction.reason)
        for index, correction in enumerate(corrections)
        if uncorrected < attempt and uncorrected <= index
    ]


def pick(candidates: Sequence[Candidate], aim: float) -> Candidate:
    """The candidate whose echo is nearest the aim: the first such in sampling order."""
    return min(candidates, key=lambda candidate: abs(candidate.echo - aim))


@dataclass
class Measured:
    """What the requests of this run measured where they ran (Completion's own figures)."""

    requests: int = 0
    evaluated_tokens: int = 0
    output_tokens: int = 0
    steered_tokens: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, completion: Completion) -> None:
        with self.lock:
            self.requests += 1
            self.evaluated_tokens += completion.evaluated_tokens
            self.output_tokens += completion.output_tokens
            self.steered_tokens += completion.steered_tokens
            self.seconds += completion.seconds


class Session:
    """Shared state of one run: provider, cache, budget, and the flag that stops new requests."""

    def __init__(
        self,
        params: GenerateParams,
        provider: Provider,
        cache: AnswerCache,
        budget: Budget,
        sources: Mapping[str, WindowIndex],
        example_queries: Sequence[str] = (),
        specificity: Specificity | None = None,
        aims: np.ndarray | None = None,
        titles: Mapping[str, str] | None = None,
        refused: Refused | None = None,
        users_queries: Sequence[str] = (),
    ) -> None:
        self.params = params
        self.refused = refused or {}  # what a person failed, by (doc_id, evidence sentence)
        self.asked_again: set[tuple[str, str]] = set()  # those of them this run asked
        self.aims = aims  # the example queries' echoes a question's aim is drawn from (aim.py)
        # auto reads every example query the project gives, not only the few the prompt shows
        form, self.form_reason = chosen_form(params.form, users_queries or example_queries)
        self.form = FORMS[form]
        self.system = system_prompt(example_queries, self.form, titled=params.show_title)
        self.titles = titles or {}
        # answers sampled per query: only an echo aim has anything to choose them by (of 241
        # labelled claims, the least echoing candidates passed least often)
        self.candidates = params.candidates if aims is not None else 1
        # tries after the first that ask the same prompt again before any correction is shown
        self.uncorrected = max(params.resamples, self.candidates - 1)
        self.example_queries = list(example_queries)
        self.sources = sources  # doc_id -> the document a question must not echo
        self.specificity = specificity
        self.provider = provider
        self.identity = provider.identity()
        self.cache = cache
        self.budget = budget
        self.stop = threading.Event()
        self.measured = Measured()
        self.failed: dict[str, tuple[str, str]] = {}  # batch requests the API gave up on

    def key(self, messages: list[dict[str, str]], question_index: int, attempt: int) -> str:
        return answer_key(
            self.identity,
            PROMPT_SHA,
            self.system,
            messages,
            question_index=question_index,
            attempt=attempt,
        )

    def ask_passage(self, passage: Passage, on_miss: MissHandler) -> list[Outcome]:
        outcomes: list[Outcome] = []
        asked: list[str] = []
        for question_index in range(passage.n_questions):
            if outcomes and outcomes[-1].not_asked:
                # a later question's prompt lists the earlier ones: asking it now would pay for
                # an answer that the complete run, with a different prompt, never uses
                outcomes.append(Outcome(not_asked=True))
                continue
            outcome = self.ask_question(passage, question_index, asked, on_miss)
            if outcome.answer is not None:
                asked.append(outcome.answer.question)
            outcomes.append(outcome)
        return outcomes

    def first_request(self, passage: Passage) -> tuple[list[dict[str, str]], str]:
        """The messages and cache key of a passage's first question at its first attempt, as
        ask_question builds them."""
        target = passage.targets[0]
        messages = self.messages(passage, target, corrections=self.refused_for(passage, target))
        return messages, self.key(messages, 0, 0)

    def refused_for(self, passage: Passage, target: tuple[int, int]) -> list[tuple[str, str]]:
        """A person's failed queries for this sentence, with why (generate.failed_queries)."""
        sentence = (passage.doc_id, passage.text[slice(*target)].strip())
        if sentence in self.refused:
            self.asked_again.add(sentence)
        return self.refused.get(sentence, [])

    def messages(
        self,
        passage: Passage,
        target: tuple[int, int],
        asked: Sequence[str] = (),
        corrections: Sequence[tuple[str, str]] = (),
    ) -> list[dict[str, str]]:
        """The chat turns that ask for one query about `target`, a sentence of the passage."""
        return build_messages(
            mark_target(passage.text, *target),
            asked,
            corrections,
            title=self.titles.get(passage.doc_id, "") if self.params.show_title else None,
            form=self.form,
        )

    def ask_question(
        self, passage: Passage, question_index: int, asked: list[str], on_miss: MissHandler
    ) -> Outcome:
        """Ask until `self.candidates` answers are in and one is valid, or the tries run out;
        keep the valid one nearest the query's echo aim (the first, without an aim)."""
        outcome = Outcome()
        corrections: list[Correction] = []
        target = passage.targets[question_index]
        source = self.sources[passage.doc_id]
        # a person's failed queries for this sentence: shown as refused from the first ask,
        # and a repeat of one is invalid
        refused = self.refused_for(passage, target)
        steer = self.steer(passage, target)
        valid = outcome.candidates
        for attempt in range(self.params.max_attempts):
            if valid and attempt >= self.candidates:
                break
            shown = refused + shown_corrections(corrections, attempt, self.uncorrected)
            messages = self.messages(passage, target, asked, shown)
            key = self.key(messages, question_index, attempt)
            completion = self.cache.get(key)
            if completion is not None:
                outcome.cache_hits += 1
            elif key in self.failed:  # generate.batch: rejected with the API's reason
                outcome.reasons.append(self.failed[key])
                return outcome
            else:
                completion = on_miss(key, messages, attempt, steer)
                if completion is None:
                    # the candidates still to come ask this same prompt whatever this answer
                    # says: a batch asks for them in the same round
                    for later in range(attempt + 1, self.candidates):
                        on_miss(self.key(messages, question_index, later), messages, later, steer)
                    outcome.not_asked = True
                    return outcome
            try:
                query = self.validate(
                    completion, passage, target, [*asked, *(query for query, _ in refused)]
                )
                valid.append(Candidate(query, echo(query, source), attempt))
            except InvalidAnswer as invalid:
                outcome.reasons.append((invalid.code, invalid.detail))
                outcome.answers.append(completion.text)
                corrections.append(Correction(completion.text, invalid.detail, invalid.code))
        if valid:
            aim = self.aim(passage, question_index)
            chosen = valid[0] if aim is None else pick(valid, aim)
            outcome.answer = Answer(chosen.query, *target)
        return outcome

    def steer(self, passage: Passage, target: tuple[int, int]) -> Steer | None:
        """What the decoder holds a query about `target` to, for a provider that steers."""
        if not steers(self.provider):
            return None
        evidence = passage.text[target[0] : target[1]]
        params = self.params
        return steer_for(
            passage.text,
            evidence,
            self.form,
            params.echo_penalty,
            self.specificity,
            params.subject_boost,
        )

    def validate(
        self, completion: Completion, passage: Passage, target: tuple[int, int], asked: list[str]
    ) -> str:
        """The answer's question, or InvalidAnswer naming the first rule it breaks."""
        return validate_question(
            completion.text,
            passage.text,
            truncated=completion.truncated,
            asked=asked,
            source=self.sources[passage.doc_id],
            max_echo=self.params.max_echo,
            example_queries=self.example_queries,
            evidence=passage.text[target[0] : target[1]],
            specificity=self.specificity,
            form=self.form,
        )

    def aim(self, passage: Passage, question_index: int) -> float | None:
        """The echo this question aims at (generate.aim_echo), or None without an aim."""
        if self.aims is None:
            return None
        return echo_aim(self.aims, self.params.seed, passage.doc_id, passage.start, question_index)

    def reserve(self, messages: list[dict[str, str]], *, wait: bool = True) -> float | None:
        """Book the worst-case cost of one request within generate.max_usd; None when it does
        not fit. wait: block while requests in flight may free room (never for a batch, whose
        reservations are all held until its results are read)."""
        estimate = estimate_tokens(request_text(self.system, messages), BUDGET_CHARS_PER_TOKEN)
        return self.budget.reserve(estimate, self.params.max_tokens, wait=wait)

    def ask_now(
        self,
        key: str,
        messages: list[dict[str, str]],
        attempt: int,
        steer: Steer | None = None,
    ) -> Completion | None:
        """Ask the LLM and cache the answer at once; None when the run must not spend more."""
        if self.stop.is_set():
            return None
        reservation = self.reserve(messages)
        if reservation is None:
            self.stop.set()
            return None
        try:
            extra = {} if steer is None else {"steer": steer}
            completion = self.provider.complete(self.system, messages, attempt=attempt, **extra)
        except BaseException:
            self.budget.release(reservation)
            raise
        self.budget.settle(reservation, completion.input_tokens, completion.output_tokens)
        self.measured.add(completion)
        self.cache.put(key, completion, provider=self.provider.name, model=self.provider.model)
        return completion
