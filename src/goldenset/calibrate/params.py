"""params.yaml `calibrate:`: the configurations `goldenset calibrate` scores and its views."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from goldenset.chunking.params import ChunkParams
from goldenset.core.params import EmbedParams, ReviewParams, Section, StageParams
from goldenset.generation.params import GenerateParams
from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.retrievers import RETRIEVERS
from goldenset.scoring.params import ScoreParams

QUALIFIED_METRIC = re.compile(r"[a-z]\w*\.[\w@]+")


class ViewParams(Section):
    golden: str = Field(pattern=QUALIFIED_METRIC.pattern, description="<query set>.<metric>")
    reference: str = Field(pattern=QUALIFIED_METRIC.pattern, description="<query set>.<metric>")


class GroupParams(Section):
    """Close calls: configurations a user chooses among, by model label (as calibrate prints
    it), chunking label and retriever (or variant label); a retriever reading no embedding joins
    every group that names it."""

    models: list[str] | None = Field(None, min_length=1, description="every model when absent")
    chunkings: list[str] | None = Field(
        None, description="chunking labels; every chunking when absent"
    )
    retrievers: list[str] | None = Field(
        None, description="retrievers and variant labels; every calibrate retriever when absent"
    )
    # each pair of the group's configurations: the golden set's per-question difference set
    # against the reference's (as calibrate.bias does for retriever families)
    pairs: bool = False


class VariantParams(BaseModel):
    """A named variant of a retriever: which one, and the settings of its section of
    `retrievers:` that differ."""

    model_config = ConfigDict(extra="allow")
    retriever: str

    @property
    def settings(self) -> dict:
        return dict(self.model_extra or {})


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
    # label -> a retriever with other settings, scored as a configuration of its own at the
    # chunkings of the groups that name it; only those groups show it
    variants: dict[str, VariantParams] = Field(default_factory=dict)
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

    @property
    def calibrated(self) -> list[str]:
        """The retrievers scored and the variants' labels."""
        return [*self.retrievers, *self.variants]

    @model_validator(mode="after")
    def _registered(self) -> CalibrateParams:
        named = [
            *self.retrievers,
            *(variant.retriever for variant in self.variants.values()),
            *(name for pair in self.bias for name in pair if name not in self.variants),
        ]
        unknown = [name for name in dict.fromkeys(named) if name not in RETRIEVERS]
        if unknown:
            raise ValueError(f"retrievers: unknown {unknown}; use some of {list(RETRIEVERS)}")
        for label, variant in self.variants.items():
            _check_variant(label, variant, self.retrievers)
        for name, group in self.groups.items():
            outside = [r for r in group.retrievers or [] if r not in self.calibrated]
            if outside:
                raise ValueError(
                    f"groups.{name}.retrievers: {outside} not calibrated; use some of "
                    f"{self.calibrated}"
                )
        return self


def _check_variant(label: str, variant: VariantParams, retrievers: list[str]) -> None:
    """A variant's label names no other retriever (its own, when not calibrated as it is), and
    its settings are its retriever's."""
    if label in retrievers or (label in RETRIEVERS and label != variant.retriever):
        raise ValueError(f"variants.{label}: a retriever's name; give the variant its own label")
    try:
        RETRIEVERS[variant.retriever].params.model_validate(variant.settings)
    except ValidationError as error:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValueError(f"variants.{label} ({variant.retriever}): {wrong}") from None


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
