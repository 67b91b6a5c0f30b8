"""What LLM calls cost, what a run is expected to ask, and a budget that stops before
generate.max_usd would be passed.

Prices are USD per million tokens: the list prices each provider declares in its registry entry
(goldenset.generation.providers.registry), which generate.prices overrides or adds to. A model
name matches its longest listed prefix, so dated ids like claude-haiku-4-5-20251001 work.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from goldenset.core.errors import GoldensetError
from goldenset.generation.fields import Price
from goldenset.generation.interface import Provider, is_paid
from goldenset.generation.providers.registry import listed_prices

if TYPE_CHECKING:
    from goldenset.generation.fields import GenerateFields

BATCH_PRICE_FACTOR = 0.5  # Message Batches requests cost half the synchronous price
CHARS_PER_TOKEN = 4.0  # typical for English text with these tokenizers
BUDGET_CHARS_PER_TOKEN = 3.0  # pessimistic, for the budget guard


def price_for(
    model: str, overrides: dict[str, Price] | None = None, *, list_prices: bool = True
) -> Price | None:
    """The price of `model`: an exact or longest-prefix match in overrides, then in the list
    (list_prices=False: only overrides, for a free server that happens to use a listed name)."""
    for table in (overrides or {}, listed_prices() if list_prices else {}):
        if model in table:
            return table[model]
        prefixes = [name for name in table if model.startswith(name)]
        if prefixes:
            return table[max(prefixes, key=len)]
    return None


def run_price(provider: Provider, params: GenerateFields) -> Price | None:
    """The price a run pays per token (generate.batch: the batch price); None: not tracked."""
    # a free backend (in-process model, local server) is priced only when generate.prices says so
    price = price_for(provider.model, params.prices, list_prices=is_paid(provider))
    if price is None and is_paid(provider) and params.max_usd is not None:
        raise GoldensetError(
            f"no price known for model {provider.model!r}, so generate.max_usd cannot be "
            f"enforced: add generate.prices.{provider.model} with input/output USD per million "
            "tokens, or set generate.max_usd to null"
        )
    if price is None or not params.batch:
        return price
    return Price(input=price.input * BATCH_PRICE_FACTOR, output=price.output * BATCH_PRICE_FACTOR)


def cost_usd(price: Price | None, input_tokens: int, output_tokens: int) -> float:
    if price is None:
        return 0.0
    return (input_tokens * price.input + output_tokens * price.output) / 1_000_000


def estimate_tokens(text: str, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    return int(len(text) / chars_per_token) + 1


@dataclass(frozen=True)
class WriterRecord:
    """What a run of one writer (provider and model) measured, for the next run's estimate."""

    n_questions: int  # asked: kept or rejected (the history file's key "questions")
    answers: int  # every answer those questions used, cached or new
    requests: int  # the new ones, which the tokens and seconds are of
    input_tokens: int
    output_tokens: int
    seconds_per_request: float | None = None  # one request alone; None: not timed (a batch)


# The bundled local model on the shipped sample, a fresh clone on 2 cores: 180 claims asked
# (147 kept, 33 rejected: data/generate_stats.json) with 347 requests, 275,310 input + 6,305
# output tokens, in 884.5 s (docs/question-writer.md, docs/benchmarks.md). No API writer has been
# measured in this repository, so a first run of one is estimated at this model's rate too: a
# stronger model has fewer answers rejected, so the guess errs high.
BUNDLED_MODEL_RUN = WriterRecord(180, 347, 347, 275_310, 6_305, 884.5 / 347)
# Assumed for an API request: a second for the round trip and the prompt, then this many output
# tokens a second (models of the Haiku class stream faster, so the guess errs long).
API_FIRST_TOKEN_S = 1.0
API_OUTPUT_TOKENS_PER_S = 50.0


@dataclass(frozen=True)
class Limits:
    """What the params allow a question and a run."""

    fewest: int  # answers a question takes at least (its candidates)
    most: int  # generate.max_attempts
    max_tokens: int  # generate.max_tokens: the longest answer
    workers: int  # requests at once


@dataclass(frozen=True)
class Estimate:
    """What asking the missing questions is expected to take, and where each rate comes from."""

    n_questions: int
    requests: int
    per_question: float  # requests a question, within the limits
    input_tokens: int
    output_tokens: int
    seconds_per_request: float
    workers: int
    rate_from: str  # where per_question comes from, for the log line
    time_from: str  # where seconds_per_request comes from

    @property
    def seconds(self) -> float:
        return self.requests * self.seconds_per_request / self.workers


def within_limits(per_question: float, limits: Limits) -> float:
    """Answers a question takes, as the params allow: at least its candidates, at most
    generate.max_attempts (a question still invalid then is rejected, not asked again)."""
    return min(max(per_question, min(limits.fewest, limits.most)), float(limits.most))


def expected_requests(n_questions: int, per_question: float, limits: Limits) -> int:
    """Requests for `n_questions` new questions when a question takes `per_question` answers
    (a past run's answers / questions asked: invalid answers are asked again)."""
    # rounded first: float noise (100 x 1.1 = 110.00000000000001) must not add a request
    return math.ceil(round(n_questions * within_limits(per_question, limits), 6))


def estimate_run(
    n_questions: int,
    prompt_tokens: float,
    limits: Limits,
    last: WriterRecord | None,
    *,
    in_process: bool,
) -> Estimate:
    """The requests, tokens and time of `n_questions` new questions whose first prompts average
    `prompt_tokens` tokens: at the rates of this writer's last run (`last`) where it measured
    them, else at priors (BUNDLED_MODEL_RUN; an API's time assumed).

    in_process: the bundled local model's kind, whose measured run is the prior for all."""
    per_question, rate_from = _rate(last, in_process)
    requests = expected_requests(n_questions, per_question, limits)
    input_each, output_each = _tokens_each(last, prompt_tokens, limits, in_process)
    seconds_each, time_from = _seconds_each(last, output_each, in_process)
    return Estimate(
        n_questions=n_questions,
        requests=requests,
        per_question=within_limits(per_question, limits),
        input_tokens=round(requests * input_each),
        output_tokens=round(requests * output_each),
        seconds_per_request=seconds_each,
        workers=max(1, limits.workers),
        rate_from=rate_from,
        time_from=time_from,
    )


def _rate(last: WriterRecord | None, in_process: bool) -> tuple[float, str]:
    if last is not None and last.n_questions > 0 and last.answers > 0:
        return last.answers / last.n_questions, "as the last run of this writer"
    prior = BUNDLED_MODEL_RUN.answers / BUNDLED_MODEL_RUN.n_questions
    if in_process:
        return prior, "as the bundled model on the shipped sample"
    return prior, "the bundled local model's rate, as this writer has no run yet: likely fewer"


def _tokens_each(
    last: WriterRecord | None, prompt_tokens: float, limits: Limits, in_process: bool
) -> tuple[float, float]:
    if last is not None and last.requests > 0:
        return last.input_tokens / last.requests, last.output_tokens / last.requests
    if in_process:
        return prompt_tokens, BUNDLED_MODEL_RUN.output_tokens / BUNDLED_MODEL_RUN.requests
    return prompt_tokens, float(limits.max_tokens)  # the longest answer: a bound, not a guess


def _seconds_each(
    last: WriterRecord | None, output_tokens: float, in_process: bool
) -> tuple[float, str]:
    if last is not None and last.seconds_per_request is not None:
        return last.seconds_per_request, "as the last run"
    if in_process:
        return BUNDLED_MODEL_RUN.seconds_per_request or 0.0, "as the bundled model on 2 cores"
    return API_FIRST_TOKEN_S + output_tokens / API_OUTPUT_TOKENS_PER_S, "assumed"


@dataclass
class Spending:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0


class Budget:
    """Thread-safe running total: a request may start only if what is spent, plus the worst case
    of every request in flight including this one, stays within the limit. When only the requests
    in flight stand in the way, it waits for them to settle rather than stopping early."""

    def __init__(self, limit_usd: float | None, price: Price | None) -> None:
        self.limit_usd = limit_usd if price is not None else None
        self.price = price
        self.spent = Spending()
        self._reserved = 0.0
        self._in_flight = 0
        self._changed = threading.Condition()
        # the worst-case cost of a request refused on its own (nothing spent or in flight
        # could free room): generate.max_usd is below the cost of one request
        self.refused_alone: float | None = None

    def reserve(
        self, input_tokens: int, max_output_tokens: int, *, wait: bool = True
    ) -> float | None:
        """Book the worst-case cost of one request; None when it would pass the limit.

        wait=False: None at once where it would wait for requests in flight to settle."""
        worst = cost_usd(self.price, input_tokens, max_output_tokens)
        with self._changed:
            while self.limit_usd is not None:
                if self.spent.usd + self._reserved + worst <= self.limit_usd:
                    break
                if not wait or not self._in_flight:
                    if worst > self.limit_usd:
                        self.refused_alone = max(worst, self.refused_alone or 0.0)
                    return None
                self._changed.wait()
            self._reserved += worst
            self._in_flight += 1
            return worst

    def settle(self, reservation: float, input_tokens: int, output_tokens: int) -> None:
        with self._changed:
            self.spent.requests += 1
            self.spent.input_tokens += input_tokens
            self.spent.output_tokens += output_tokens
            self.spent.usd += cost_usd(self.price, input_tokens, output_tokens)
            self._free(reservation)

    def charge(self, input_tokens: int, output_tokens: int) -> None:
        """Record a request that was never reserved (a batch a killed run had submitted)."""
        with self._changed:
            self.spent.requests += 1
            self.spent.input_tokens += input_tokens
            self.spent.output_tokens += output_tokens
            self.spent.usd += cost_usd(self.price, input_tokens, output_tokens)
            self._changed.notify_all()

    def release(self, reservation: float) -> None:
        with self._changed:
            self._free(reservation)

    def _free(self, reservation: float) -> None:
        self._reserved -= reservation
        self._in_flight -= 1
        self._changed.notify_all()

    def snapshot(self) -> Spending:
        with self._changed:
            return Spending(**vars(self.spent))
