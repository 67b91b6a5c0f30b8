"""Claude through the `anthropic` SDK's Messages API.

Retries are the SDK's own: it honours retry-after on 429 and backs off with jitter on 408, 429,
5xx, 529 and timeouts, up to generate.max_retries. The SDK (2.x) no longer takes sampling
settings, so generate.temperature does not apply here and is not part of the cache identity.

generate.batch sends the requests through the Message Batches API instead (batches.py here).
"""

from __future__ import annotations

import os
from typing import Any

from goldenset.core.errors import GoldensetError
from goldenset.generation.fields import Price
from goldenset.generation.interface import Completion, SdkProvider
from goldenset.generation.providers.registry import PROVIDERS, ProviderEntry
from goldenset.generation.providers.sdk_errors import translate


class AnthropicProvider(SdkProvider):
    """Cheap to build: the key check and the SDK client wait for the first request, so a run
    answered entirely from the cache needs no ANTHROPIC_API_KEY."""

    SERVICE = "Anthropic API"
    KEY_VARIABLE = "ANTHROPIC_API_KEY"
    # what to set when it cannot be reached
    URL_HINT = "ANTHROPIC_BASE_URL (or unset it for api.anthropic.com)"
    DEFAULT_MODEL = "claude-haiku-4-5"

    name = "anthropic"
    paid = True
    max_concurrency = None

    def identity(self) -> dict:
        return {"provider": self.name, "model": self.model, "max_tokens": self.max_tokens}

    def _build_client(self) -> Any:
        api_key = self._key()
        if not api_key and not os.environ.get("ANTHROPIC_AUTH_TOKEN"):
            raise GoldensetError(
                "generate.provider is 'anthropic' but ANTHROPIC_API_KEY is not set: export it, "
                "or set generate.provider to local"
            )
        import anthropic  # here, after the key check: the SDK takes seconds to import

        self._sdk = anthropic
        return self._connect(anthropic.Anthropic, api_key)

    def complete(self, system: str, messages: list[dict[str, str]], *, attempt: int) -> Completion:
        client = self.client()
        try:
            response = client.messages.create(**self.request(system, messages))
        except self._sdk.APIError as error:
            raise translate(self._sdk, error, self._context) from None
        return completion_of(response)

    def request(self, system: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The Messages API request, sent at once or as one request of a batch."""
        return {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": system,
            "messages": messages,
        }


def completion_of(message: Any) -> Completion:
    """A Messages API reply (a synchronous response, or a batch request's result) as an answer."""
    return Completion(
        text="".join(block.text for block in message.content if block.type == "text"),
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
        truncated=message.stop_reason == "max_tokens",
    )


PROVIDERS.register(
    "anthropic",
    ProviderEntry(
        AnthropicProvider,
        # list prices, USD per million tokens; a dated id (claude-haiku-4-5-20251001) matches its
        # prefix
        prices={
            "claude-haiku-4-5": Price(input=1.0, output=5.0),
            "claude-sonnet-4-5": Price(input=3.0, output=15.0),
            "claude-sonnet-4": Price(input=3.0, output=15.0),
            "claude-opus-4-5": Price(input=5.0, output=25.0),
            "claude-opus-4-1": Price(input=15.0, output=75.0),
            "claude-opus-4": Price(input=15.0, output=75.0),
            "claude-3-5-haiku": Price(input=0.8, output=4.0),
            "claude-3-haiku": Price(input=0.25, output=1.25),
        },
        batch=f"{__name__}.batches:run_batches",
    ),
)
