"""Any OpenAI-compatible chat-completions server through the `openai` SDK: OpenAI itself, Ollama,
vLLM, llama.cpp server (generate.openai.base_url).

Retries are the SDK's own (retry-after on 429, backoff with jitter on 408/429/5xx and timeouts).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from goldenset.core.errors import GoldensetError
from goldenset.core.params import Section
from goldenset.generation.fields import Price
from goldenset.generation.interface import (
    RETRY_TEMPERATURE,
    Completion,
    SdkProvider,
    attempt_temperature,
)
from goldenset.generation.pricing import estimate_tokens
from goldenset.generation.providers.registry import PROVIDERS, ProviderEntry
from goldenset.generation.providers.sdk_errors import translate

if TYPE_CHECKING:
    from goldenset.generation.fields import GenerateFields


class OpenAIProvider(SdkProvider):
    """Cheap to build: the key check and the SDK client wait for the first request, so a run
    answered entirely from the cache needs no OPENAI_API_KEY."""

    SERVICE = "OpenAI-compatible server"
    KEY_VARIABLE = "OPENAI_API_KEY"
    URL_HINT = "generate.openai.base_url"  # what to set when it cannot be reached
    DEFAULT_MODEL = "gpt-4o-mini"

    name = "openai"
    max_concurrency = None

    def __init__(
        self, params: GenerateFields, *, api_key: str | None = None, base_url: str | None = None
    ) -> None:
        base_url = base_url or params.openai.base_url or os.environ.get("OPENAI_BASE_URL")
        super().__init__(params, api_key=api_key, base_url=base_url)
        # Without a base_url the SDK calls api.openai.com: that one needs a key and costs money.
        self.paid = self._base_url is None
        self.temperature = params.temperature
        self.seed = params.seed

    def identity(self) -> dict:
        return {
            "provider": self.name,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "retry_temperature": RETRY_TEMPERATURE,
            "seed": self.seed,
        }

    def _build_client(self) -> Any:
        api_key = self._key()
        if not api_key:
            if self.paid:
                raise GoldensetError(
                    "generate.provider is 'openai' with no generate.openai.base_url, so it would "
                    "call api.openai.com, but OPENAI_API_KEY is not set: export it, or set "
                    "generate.openai.base_url to your server (Ollama, vLLM, llama.cpp)"
                )
            api_key = "not-needed"  # local servers ignore it; the SDK insists on one
        import openai  # here, after the key check: the SDK takes a while to import

        self._sdk = openai
        return self._connect(openai.OpenAI, api_key)

    def complete(self, system: str, messages: list[dict[str, str]], *, attempt: int) -> Completion:
        client = self.client()
        try:
            response = client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, *messages],
                max_tokens=self.max_tokens,
                temperature=attempt_temperature(self.temperature, attempt),
                seed=self.seed + attempt,
            )
        except self._sdk.APIError as error:
            raise translate(self._sdk, error, self._context) from None
        if not response.choices:
            raise GoldensetError(f"{self._context.service} at {self._context.url} sent no choices")
        choice = response.choices[0]
        text = choice.message.content or ""
        usage = response.usage  # some compatible servers leave it out: estimate instead
        return Completion(
            text=text,
            input_tokens=usage.prompt_tokens if usage else estimate_tokens(system + str(messages)),
            output_tokens=usage.completion_tokens if usage else estimate_tokens(text),
            truncated=choice.finish_reason == "length",
        )


class OpenAIParams(Section):
    """generate.openai: where the OpenAI-compatible server is."""

    base_url: str | None = None


PROVIDERS.register(
    "openai",
    ProviderEntry(
        OpenAIProvider,
        params=OpenAIParams,
        # api.openai.com's list prices, USD per million tokens; a free server
        # (generate.openai.base_url) is priced only by generate.prices
        prices={
            "gpt-4o-mini": Price(input=0.15, output=0.6),
            "gpt-4o": Price(input=2.5, output=10.0),
            "gpt-4.1-mini": Price(input=0.4, output=1.6),
            "gpt-4.1": Price(input=2.0, output=8.0),
        },
    ),
)
