"""What LLM calls cost, and a budget that stops before generate.max_usd would be passed.

Prices are USD per million tokens: the list prices each provider declares in its registry entry
(goldenset.generation.providers.registry), which generate.prices overrides or adds to. A model
name matches its longest listed prefix, so dated ids like claude-haiku-4-5-20251001 work.
"""

from __future__ import annotations

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
TYPICAL_ANSWER_TOKENS = 120  # a question plus one or two sentences of evidence, as JSON


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
