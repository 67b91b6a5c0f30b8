"""params.yaml, validated: one model per stage group, so a typo or a bad value is a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from goldenset.errors import GoldensetError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IngestParams(Section):
    path: str = "data/docs"
    max_file_mb: float = Field(20.0, gt=0)


ChunkStrategy = Literal["none", "chars", "tokens", "sentences", "paragraphs", "markdown"]


class ChunkParams(Section):
    strategy: ChunkStrategy = "sentences"
    # not `size`: DVC's run cache ignores every key named "size" when it hashes params
    max_size: int = Field(1000, gt=0, description="characters, or tokens for strategy 'tokens'")
    overlap: int = Field(0, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkParams:
        if self.overlap >= self.max_size:
            raise ValueError(
                f"chunk.overlap ({self.overlap}) must be below chunk.max_size ({self.max_size})"
            )
        return self


class OpenAIParams(Section):
    base_url: str | None = None


class LocalModelParams(Section):
    model_path: str | None = None
    n_ctx: int = Field(4096, gt=0)
    n_threads: int | None = None


class Price(Section):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")


class GenerateParams(Section):
    provider: Literal["local", "anthropic", "openai"] = "local"
    model: str | None = Field(None, min_length=1)
    max_questions: int = Field(40, ge=0)
    questions_per_passage: int = Field(1, ge=1)
    seed: int = 0
    passage_size: int = Field(700, gt=0, description="characters per passage, whole sentences")
    passage_min_chars: int = Field(200, ge=0)
    concurrency: int = Field(8, ge=1)
    max_attempts: int = Field(3, ge=1, description="tries per question when the answer is invalid")
    max_retries: int = Field(5, ge=0, description="HTTP retries on 429/5xx/timeouts")
    request_timeout: float = Field(60.0, gt=0)
    max_tokens: int = Field(400, gt=0)
    max_echo: float | None = Field(
        None, gt=0, le=1, description="content-word overlap above which a question echoes"
    )
    example_queries: str | list[str] | None = Field(
        None, description="real queries shown as style examples: a BEIR queries.jsonl or texts"
    )
    example_count: int = Field(5, ge=0, description="how many example queries the prompt shows")
    temperature: float = Field(
        0.0, ge=0, description="openai and local only: the anthropic SDK 2.x takes no sampling"
    )
    max_usd: float | None = Field(5.0, ge=0, description="null: no budget")
    prices: dict[str, Price] = Field(
        default_factory=dict, description="USD per million tokens by model (name or prefix)"
    )
    cache_dir: str = "cache/llm"
    openai: OpenAIParams = Field(default_factory=OpenAIParams)
    local: LocalModelParams = Field(default_factory=LocalModelParams)


class EmbedParams(Section):
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    revision: str | None = None
    batch_size: int = Field(64, gt=0)
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    max_seq_length: int | None = Field(None, gt=0)
    cache_dir: str = "cache/embeddings"


class ScoreParams(Section):
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5, 10], min_length=1)
    depth: int = Field(100, gt=0, description="results kept per question")
    min_overlap: float = Field(0.5, gt=0, le=1)
    real_queries: str = "data/queries"

    @model_validator(mode="after")
    def _positive_ks(self) -> ScoreParams:
        if any(k <= 0 for k in self.ks):
            raise ValueError(f"score.ks must be positive integers, got {self.ks}")
        self.ks = sorted(set(self.ks))
        return self


class DenseParams(Section):
    enabled: bool = True


class BM25Params(Section):
    enabled: bool = True
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)


class RetrieversParams(Section):
    dense: DenseParams = Field(default_factory=DenseParams)
    bm25: BM25Params = Field(default_factory=BM25Params)


class Params(Section):
    ingest: IngestParams = Field(default_factory=IngestParams)
    chunk: ChunkParams = Field(default_factory=ChunkParams)
    generate: GenerateParams = Field(default_factory=GenerateParams)
    embed: EmbedParams = Field(default_factory=EmbedParams)
    score: ScoreParams = Field(default_factory=ScoreParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)


def parse_params(raw: dict) -> Params:
    """Validate a params mapping; the error names the first offending param by its dotted path."""
    try:
        return Params.model_validate(raw or {})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "params"
        raise GoldensetError(f"params.yaml: {where}: {first['msg']}") from None


def load_params(path: str | Path = "params.yaml") -> Params:
    path = Path(path)
    if not path.exists():
        raise GoldensetError(f"{path} not found: run the stage from the project root")
    return parse_params(yaml.safe_load(path.read_text(encoding="utf-8")))
