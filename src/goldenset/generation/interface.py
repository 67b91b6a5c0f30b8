"""The one interface every LLM backend implements, so the generation loop never knows which.

Building a provider must be cheap and never fail for a missing key or model: the SDK client (and
its key check) or the model file loads on the first `complete`, so a re-run whose answers all come
from the cache needs no key and loads no model. `identity()` must likewise work without them.

`SdkProvider` is the base of the providers over a vendor SDK (anthropic, openai): the client made
on the first request with generate's retries and timeout, and the context its errors are told in
(goldenset.generation.providers.sdk_errors).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from goldenset.generation.fields import GenerateFields

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
    # what the request cost here, for the run's per-request figures (0 when not measured, and
    # for an answer from the cache)
    evaluated_tokens: int = 0  # prompt tokens evaluated, not restored from a saved state
    steered_tokens: int = 0  # generated tokens a decoding rule chose over the model's pick
    seconds: float = 0.0


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

        A provider whose decoder can obey a query's rules as it writes (the local one) sets
        `steers = True` and takes a keyword `steer` (goldenset.generation.steering.Steer).
        """
        ...


def steers(provider: Provider) -> bool:
    """The provider takes a `steer` (decode-time rules): only a model run in process can."""
    return bool(getattr(provider, "steers", False))


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


@dataclass(frozen=True)
class ServiceContext:
    service: str  # "Anthropic API", "OpenAI-compatible server"
    model: str
    key_variable: str  # ANTHROPIC_API_KEY / OPENAI_API_KEY
    url: str
    url_hint: str  # what to set when the server cannot be reached
    max_retries: int
    timeout: float
    secret: str | None = None  # scrubbed from any message we print


class SdkProvider(LazyClient):
    """A provider over a vendor SDK (anthropic, openai): built cheaply, its client made on the
    first request with generate's retries and timeout, its errors told with SERVICE,
    KEY_VARIABLE and URL_HINT (what to set when the server cannot be reached)."""

    SERVICE = ""
    KEY_VARIABLE = ""
    URL_HINT = ""
    DEFAULT_MODEL = ""

    def __init__(
        self, params: GenerateFields, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        self._params = params
        self._api_key = api_key
        self._base_url = base_url
        self.model = params.model or self.DEFAULT_MODEL
        self.max_tokens = params.max_tokens

    def _key(self) -> str | None:
        """The key given, else the one in the environment (KEY_VARIABLE)."""
        return self._api_key or os.environ.get(self.KEY_VARIABLE)

    def _connect(self, client_class: Any, api_key: str) -> Any:
        """The SDK client, and the context its errors are told in (the key kept only to be
        scrubbed from messages)."""
        params = self._params
        client = client_class(
            api_key=api_key,
            base_url=self._base_url,
            max_retries=params.max_retries,
            timeout=params.request_timeout,
        )
        self._context = ServiceContext(
            service=self.SERVICE,
            model=self.model,
            key_variable=self.KEY_VARIABLE,
            url=str(client.base_url),
            url_hint=self.URL_HINT,
            max_retries=params.max_retries,
            timeout=params.request_timeout,
            secret=api_key,
        )
        return client
