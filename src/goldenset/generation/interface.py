"""The one interface every LLM backend implements, so the generation loop never knows which.

Building a provider must be cheap and never fail for a missing key or model: the SDK client (and
its key check) or the model file loads on the first `complete`, so a re-run whose answers all come
from the cache needs no key and loads no model. `identity()` must likewise work without them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Protocol

# Attempts after the first sample at this temperature when generate.temperature is 0: a retry that
# asks the same prompt again (generate.resamples) must be able to answer differently.
RETRY_TEMPERATURE = 0.7


def attempt_temperature(temperature: float, attempt: int) -> float:
    """The sampling temperature of an attempt: greedy first, then sampled, unless one is set."""
    return temperature or (RETRY_TEMPERATURE if attempt > 0 else 0.0)


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    truncated: bool  # stopped at max_tokens: such an answer is rejected, never trusted


class Provider(Protocol):
    name: str  # the generate.provider value
    model: str
    max_concurrency: int | None  # requests it can serve at once; None: generate.concurrency
    paid: bool  # calls cost money: generate.max_usd is enforced, so a price must be known

    def identity(self) -> dict:
        """Everything besides the prompt that changes the answer (model, sampling settings).

        It is part of the cache key, and needs no key, client or loaded model."""
        ...

    def complete(self, system: str, messages: list[dict[str, str]], *, attempt: int) -> Completion:
        """One chat completion; messages alternate user/assistant and end with the turn to answer.

        attempt counts from 0; a retry after an invalid answer may sample differently (seeded
        by attempt). The first call builds the client or loads the model.
        """
        ...


def is_paid(provider: Provider) -> bool:
    """A provider that does not declare `paid` (an in-process model) costs nothing."""
    return bool(getattr(provider, "paid", False))


def max_concurrency(provider: Provider) -> int | None:
    return getattr(provider, "max_concurrency", None)


class LazyClient:
    """An SDK client built on the first request, once, even with several worker threads: a run
    answered from the cache never needs the key or the SDK import. Subclasses build it in
    ``_build_client``."""

    _client: Any = None
    _client_lock = threading.Lock()  # shared: building a client is rare and quick

    def _build_client(self) -> Any:
        raise NotImplementedError

    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = self._build_client()
            return self._client
