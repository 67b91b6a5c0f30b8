"""params.yaml `chunk:`: the chunking under test."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from goldenset.core.params import Section
from goldenset.core.registered import RegisteredName

# the names registered in goldenset.chunking.strategies.STRATEGIES
ChunkStrategy = Annotated[str, RegisteredName("goldenset.chunking.strategies:strategy_names")]


class ChunkParams(Section):
    strategy: ChunkStrategy = "sentences"
    # not `size`: DVC's run cache ignores every key named "size" when it hashes params
    max_size: int = Field(600, gt=0, description="characters, or tokens for strategy 'tokens'")
    overlap: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkParams:
        if self.overlap >= self.max_size:
            raise ValueError(
                f"chunk.overlap ({self.overlap}) must be below chunk.max_size ({self.max_size})"
            )
        return self
