"""params.yaml `calibrate:`: the configurations `goldenset calibrate` scores and its views."""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from goldenset.chunking.params import ChunkParams
from goldenset.core.params import EmbedParams, ReviewParams, Section, StageParams
from goldenset.generation.params import GenerateParams
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.retriever_params import RetrieversParams
from goldenset.scoring.retrievers import RETRIEVERS

QUALIFIED_METRIC = re.compile(r"[a-z]\w*\.[\w@]+")


class ViewParams(Section):
    golden: str = Field(pattern=QUALIFIED_METRIC.pattern, description="<query set>.<metric>")
    reference: str = Field(pattern=QUALIFIED_METRIC.pattern, description="<query set>.<metric>")


class GroupParams(Section):
    """Close calls: configurations a user chooses among, by model label (as calibrate prints
    it), chunking label and retriever; a retriever reading no embedding joins every group."""

    models: list[str] = Field(min_length=1)
    chunkings: list[str] | None = Field(
        None, description="chunking labels; every chunking when absent"
    )
    retrievers: list[str] | None = Field(None, description="every calibrate retriever when absent")


class CalibrateParams(Section):
    """`goldenset calibrate`: configurations scored by the chunk, embed and score stages, and the
    views in which the golden set's ranking of them is set against a reference set's."""

    # each entry overrides the fields it names in `chunk` (resp. `embed`)
    chunkings: list[ChunkParams] = Field(min_length=1)
    models: list[EmbedParams] = Field(min_length=1)
    retrievers: list[str] = Field(min_length=1, description="names in params.yaml `retrievers:`")
    views: dict[str, ViewParams] = Field(min_length=1)
    resamples: int = Field(1000, ge=1, description="bootstrap resamples of the tau interval")
    confidence: float = Field(0.95, gt=0, lt=1)
    alpha: float = Field(0.05, gt=0, lt=1, description="significance of a reference difference")
    permutations: int = Field(10000, ge=1, description="random sign flips of the paired test")
    seed: int = 0
    # golden sets that differ only in generate.seed (the passages drawn): each judged on its own
    # and pooled; null: the project's golden set only
    seeds: list[int] | None = Field(None, min_length=1)
    groups: dict[str, GroupParams] = Field(default_factory=dict)
    splits: int = Field(200, ge=1, description="random halves of the reference: its noise ceiling")
    agreement_splits: int = Field(
        20, ge=0, description="the first splits that also give decision agreement's ceiling"
    )
    # retriever pairs (better, worse) whose per-question difference is compared, per chunking
    # and model; a pair the grid does not score is left out
    bias: list[tuple[str, str]] = Field(
        default_factory=lambda: [("dense", "bm25"), ("hybrid", "dense")]
    )

    @model_validator(mode="after")
    def _registered(self) -> CalibrateParams:
        named = [*self.retrievers, *(name for pair in self.bias for name in pair)]
        unknown = [name for name in dict.fromkeys(named) if name not in RETRIEVERS]
        if unknown:
            raise ValueError(f"retrievers: unknown {unknown}; use some of {list(RETRIEVERS)}")
        for name, group in self.groups.items():
            outside = [r for r in group.retrievers or [] if r not in self.retrievers]
            if outside:
                raise ValueError(
                    f"groups.{name}.retrievers: {outside} not calibrated; use some of "
                    f"{self.retrievers}"
                )
        return self


class CalibrateCommand(StageParams):
    """The sections `goldenset calibrate` reads: the configurations it varies (chunk, embed) and
    scores (score, retrievers), and its own."""

    chunk: ChunkParams = Field(default_factory=ChunkParams)
    generate: GenerateParams = Field(default_factory=GenerateParams)  # its seed: the project's draw
    embed: EmbedParams = Field(default_factory=EmbedParams)
    score: ScoreParams = Field(default_factory=ScoreParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)
    review: ReviewParams = Field(default_factory=ReviewParams)  # what people failed: left out
    calibrate: CalibrateParams | None = None
