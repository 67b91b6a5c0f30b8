"""The question writers, declared once: one entry per provider in :data:`PROVIDERS`.

Each module (or package) of goldenset.generation.providers declares its own entry,
``PROVIDERS.register("name", ProviderEntry(...))``: how to build it, the optional package it
needs and what installs it, its list prices, its batch path if it has one, and its settings.
The registry (goldenset.core.registry) imports the package's modules and the plugins
(``goldenset.providers`` entry points) the first time it is read; importing one loads no SDK and
no model (they load when the provider first asks something), so reading params stays light.
Adding a provider is one new module, here or in a plugin, and its line in params.yaml.

Everything else derives from :data:`PROVIDERS`: the values generate.provider accepts and the
section of a provider's own settings (goldenset.generation.params), the provider the generate
stage builds, the list prices (goldenset.generation.pricing) and generate.batch. An entry added
from outside (a plugin, a test's toy) before params are read is accepted like the package's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from goldenset.core.errors import GoldensetError
from goldenset.core.registry import Registry
from goldenset.core.specs import parse_spec
from goldenset.generation.fields import Price

if TYPE_CHECKING:
    from goldenset.generation.fields import GenerateFields
    from goldenset.generation.interface import Provider

# (the run's Session, its passages, progress) -> None: fills the session's cache ahead of the walk
BatchRun = Callable[[Any, Any, bool], None]


@dataclass(frozen=True)
class ProviderEntry:
    build: Callable[[GenerateFields], Provider]  # cheap: no key check, client or model load
    requires: str | None = None  # an optional module it imports (llama_cpp) ...
    install_hint: str = ""  # ... and what installs it
    prices: Mapping[str, Price] = field(default_factory=dict)  # USD per million tokens by model
    batch: BatchRun | str | None = None  # generate.batch: a function, or "module:function"
    params: type[BaseModel] | None = None  # its own settings: a section generate.<name>

    def batch_run(self) -> BatchRun | None:
        if self.batch is None or callable(self.batch):
            return self.batch
        name = parse_spec(self.batch)
        return getattr(importlib.import_module(name.module), name.function)


PROVIDERS: Registry[ProviderEntry] = Registry(
    "provider", "providers", ["goldenset.generation.providers"]
)


def provider_entry(name: str) -> ProviderEntry:
    try:
        return PROVIDERS.get_entry(name)
    except GoldensetError as error:
        raise GoldensetError(f"generate.provider: {error}") from None


def require_installed(name: str) -> None:
    """A clear error, naming what to install, when the provider's optional module is missing."""
    entry = provider_entry(name)
    if entry.requires is None:
        return
    try:
        importlib.import_module(entry.requires)
    except ImportError:
        raise GoldensetError(
            f"generate.provider {name!r} needs the {entry.requires} module, which is not "
            f"installed: run {entry.install_hint}"
        ) from None


def make_provider(params: GenerateFields) -> Provider:
    """The backend that generate.provider names. SDKs and model files load only when it first
    asks something."""
    require_installed(params.provider)
    return provider_entry(params.provider).build(params)


def listed_prices() -> dict[str, Price]:
    """The list prices every provider declares, by model name or prefix."""
    return {model: price for entry in PROVIDERS.values() for model, price in entry.prices.items()}


def batch_run(provider: Provider) -> BatchRun:
    """generate.batch's path for this provider; a clear error when it has none."""
    entry = PROVIDERS.get(provider.name)
    run = None if entry is None else entry.batch_run()
    if run is None:
        batching = [name for name, other in PROVIDERS.items() if other.batch is not None]
        raise GoldensetError(
            f"generate.batch is for provider {' or '.join(sorted(batching))}, not "
            f"{provider.name!r}: set generate.batch to false"
        )
    return run
