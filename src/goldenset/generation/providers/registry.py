"""The registry: the one place that knows which backends exist and how to build one.

Building is cheap (no SDK client, key check or model load until the first request), see
goldenset.generation.interface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenset.core.errors import GoldensetError
from goldenset.generation.interface import Provider

if TYPE_CHECKING:
    from goldenset.core.params import GenerateParams


def make_provider(params: GenerateParams) -> Provider:
    """The backend that generate.provider names. SDKs and model files load only in the chosen
    module, and only when it first asks something."""
    if params.provider == "anthropic":
        from goldenset.generation.providers.anthropic import AnthropicProvider

        return AnthropicProvider(params)
    if params.provider == "openai":
        from goldenset.generation.providers.openai import OpenAIProvider

        return OpenAIProvider(params)
    if params.provider == "local":
        try:
            from goldenset.generation.providers.local import LocalProvider
        except ModuleNotFoundError as error:
            if error.name != "llama_cpp":
                raise
            raise GoldensetError(
                "generate.provider is 'local' but llama-cpp-python is not installed: "
                "pip install 'goldenset[local]', or set generate.provider to anthropic or openai"
            ) from None
        return LocalProvider(params)
    raise GoldensetError(f"generate.provider: unknown provider {params.provider!r}")
