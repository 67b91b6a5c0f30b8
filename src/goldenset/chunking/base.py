"""The chunking strategies' interface: what a strategy is (:class:`Strategy`) and the registry
its entries join (:data:`STRATEGIES`): a name there is a value of chunk.strategy.

A strategy is registered by the module that holds its code (goldenset.chunking.strategies for
the built-in ones, or a plugin's module: a ``goldenset.chunking`` entry point):
``STRATEGIES.register("name", Strategy(cut))``. One with settings of its own names its params
model, which becomes the section chunk.<name> of params.yaml.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from goldenset.core.registry import Registry
from goldenset.core.spans import Span

# (text, the chunk params, the embedding model's tokenizer or None) -> the chunk spans, in text
# order; the chunk params are goldenset.chunking.params.ChunkParams (max_size, overlap, and the
# strategy's own section)
Cut = Callable[[str, Any, Any], list[Span]]


@dataclass(frozen=True)
class Strategy:
    """One chunk.strategy: how it cuts a document, whether it counts in tokens of the embedding
    model's tokenizer (the chunk stage loads it only for such a strategy), and its own settings."""

    spans: Cut
    needs_tokenizer: bool = False
    params: type[BaseModel] | None = None  # a section chunk.<name> of params.yaml


STRATEGIES: Registry[Strategy] = Registry(
    "chunking strategy", "chunking", ["goldenset.chunking.strategies"]
)
