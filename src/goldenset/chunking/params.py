"""params.yaml `chunk:`: the chunking under test, and a section per strategy with settings of its
own (goldenset.chunking.base.STRATEGIES)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, create_model, model_validator

from goldenset.chunking.base import STRATEGIES
from goldenset.core.params import Section
from goldenset.core.registered import RegisteredName

ChunkStrategy = Annotated[str, RegisteredName(STRATEGIES)]


class ChunkFields(Section):
    """`chunk:` but the sections of the strategies that have settings of their own."""

    strategy: ChunkStrategy = "sentences"
    # not `size`: DVC's run cache ignores every key named "size" when it hashes params
    max_size: int = Field(600, gt=0, description="characters, or tokens for strategy 'tokens'")
    overlap: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkFields:
        if self.overlap >= self.max_size:
            raise ValueError(
                f"chunk.overlap ({self.overlap}) must be below chunk.max_size ({self.max_size})"
            )
        return self


def chunk_model() -> type[ChunkFields]:
    """`chunk:`, with a section per strategy that has settings of its own, named after it."""
    sections: dict = {
        name: (model, Field(default_factory=model))
        for name, model in STRATEGIES.with_params().items()
    }
    return create_model("ChunkParams", __base__=ChunkFields, **sections)


ChunkParams = chunk_model()
