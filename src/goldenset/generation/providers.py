"""The one interface every LLM backend implements, so the generation loop never knows which."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from goldenset.errors import GoldensetError

if TYPE_CHECKING:
    from goldenset.params import GenerateParams


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    truncated: bool  # stopped at max_tokens: such an answer is rejected, never trusted


class Provider(Protocol):
    name: str  # "anthropic" | "openai" | "local"
    model: str

    def identity(self) -> dict:
        """Everything besides the prompt that changes the answer (model, sampling settings).

        It is part of the cache key."""
        ...

    def complete(self, system: str, messages: list[dict[str, str]], *, attempt: int) -> Completion:
        """One chat completion; messages alternate user/assistant and end with the turn to answer.

        attempt counts from 0; a retry after an invalid answer may sample differently (seeded
        by attempt).
        """
        ...


def make_provider(params: GenerateParams) -> Provider:
    """The backend that generate.provider names. SDKs and model files load only here, and only
    the chosen one, so a run with nothing to ask (or a cached rerun's imports) stays light."""
    if params.provider == "anthropic":
        from goldenset.generation.anthropic_provider import AnthropicProvider

        return AnthropicProvider(params)
    if params.provider == "openai":
        from goldenset.generation.openai_provider import OpenAIProvider

        return OpenAIProvider(params)
    if params.provider == "local":
        try:
            from goldenset.generation.local import LocalProvider
        except ModuleNotFoundError as error:
            if error.name != "llama_cpp":
                raise
            raise GoldensetError(
                "generate.provider is 'local' but llama-cpp-python is not installed: "
                "pip install 'goldenset[local]', or set generate.provider to anthropic or openai"
            ) from None
        return LocalProvider(params)
    raise GoldensetError(f"generate.provider: unknown provider {params.provider!r}")
