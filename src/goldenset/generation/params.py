"""params.yaml `generate:`: goldenset.generation.fields' settings, generate.provider checked
against the registered providers, and a section per provider with settings of its own."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, create_model

from goldenset.core.registered import RegisteredName
from goldenset.generation.fields import GenerateFields, Price
from goldenset.generation.providers.registry import PROVIDERS

ProviderName = Annotated[str, RegisteredName(PROVIDERS)]

__all__ = ["GenerateFields", "GenerateParams", "Price", "ProviderName"]


def generate_model() -> type[GenerateFields]:
    """`generate:`, with a section per provider whose entry declares settings of its own
    (generate.openai, generate.local), named after the provider, in registry order."""
    sections: dict = {
        name: (model, Field(default_factory=model))
        for name, model in PROVIDERS.with_params().items()
    }
    provider = GenerateFields.model_fields["provider"]
    return create_model(
        "GenerateParams", __base__=GenerateFields, provider=(ProviderName, provider), **sections
    )


# the provider modules never import this module (their settings, Price, live beside them)
GenerateParams = generate_model()
