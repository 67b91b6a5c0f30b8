"""params.yaml `generate:`: the question writer, its budget and the rules a question meets."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from goldenset.core.params import Section
from goldenset.core.registered import RegisteredName

# the names registered in goldenset.generation.providers.registry.PROVIDERS
ProviderName = Annotated[
    str, RegisteredName("goldenset.generation.providers.registry:provider_names")
]


ExampleQueries = Annotated[
    str | list[str] | None,
    Field(description="real queries shown as style examples: a BEIR queries.jsonl or texts"),
]


class ExampleQueriesParams(BaseModel):
    """generate.example_queries alone, as ingest reads it (it leaves those queries out of the
    reference): the rest of `generate:` is the generate stage's to validate."""

    model_config = ConfigDict(extra="ignore")
    example_queries: ExampleQueries = None


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
    example_queries: ExampleQueries = None
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
