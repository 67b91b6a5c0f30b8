"""The whole params.yaml: every stage's section, for the commands that read them all (`goldenset
calibrate`, `goldenset compare`, `goldenset init`) and the tests that keep params.yaml complete."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from goldenset.calibrate.params import CalibrateParams
from goldenset.chunking.params import ChunkParams
from goldenset.compare.params import CompareParams
from goldenset.core.params import (
    AuditParams,
    EmbedParams,
    IngestParams,
    ReviewParams,
    Section,
    read_params_file,
    validate_params,
)
from goldenset.generation.params import GenerateParams
from goldenset.retrieval.params import RetrieversParams
from goldenset.scoring.params import ScoreParams


class Params(Section):
    ingest: IngestParams = Field(default_factory=IngestParams)
    chunk: ChunkParams = Field(default_factory=ChunkParams)
    generate: GenerateParams = Field(default_factory=GenerateParams)
    embed: EmbedParams = Field(default_factory=EmbedParams)
    score: ScoreParams = Field(default_factory=ScoreParams)
    audit: AuditParams = Field(default_factory=AuditParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)
    review: ReviewParams = Field(default_factory=ReviewParams)
    calibrate: CalibrateParams | None = None
    compare: CompareParams | None = None


def parse_params(raw: dict | None) -> Params:
    """Validate a params mapping; the error names the first offending param by its dotted path."""
    return validate_params(Params, raw)


def load_params(path: str | Path = "params.yaml") -> Params:
    return parse_params(read_params_file(path))
