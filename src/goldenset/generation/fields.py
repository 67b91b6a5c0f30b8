"""params.yaml `generate:` but the providers' own sections: the question writer, its budget and
the rules a question meets. goldenset.generation.params adds a section per provider that
declares settings of its own."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from goldenset.core.params import ExampleQueries, Section


class Price(Section):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")


class GenerateFields(Section):
    """`generate:` but the sections of the providers that declare settings of their own."""

    provider: str = "local"  # a name of PROVIDERS: checked by goldenset.generation.params
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
    echo_penalty: float = Field(
        3.0,
        ge=0,
        description="local: logits taken off the tokens that begin a passage word, but for "
        "its evidence's distinctive terms",
    )
    subject_boost: float = Field(
        0.0,
        ge=0,
        description="local: logits added to the tokens that begin the evidence's distinctive "
        "terms (the words the vague rule asks a question to keep)",
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
    failed_queries: str | None = Field(
        None,
        description="a verdict file in examples/ (a copy of review/verdicts.jsonl): the sentences "
        "of its failed queries are asked again, each failed query shown as refused; null: off",
    )
    form: Literal["auto", "question", "claim", "keywords"] = Field(
        "auto",
        description="what the writer writes; auto: the form most example queries take "
        "(questions without examples)",
    )
    show_title: bool = Field(False, description="the writer sees the document's title")
    candidates: int = Field(
        1,
        ge=1,
        description="answers sampled from one prompt per query, the valid one nearest its echo "
        "aim kept (generate.aim_echo; without an aim, one answer)",
    )
    keep_share: float = Field(
        1.0,
        gt=0,
        le=1,
        description="ask max_questions / keep_share questions and keep the judge's best "
        "max_questions (1: no selection; over-asking multiplies the requests)",
    )
    judge: str | None = Field(
        None,
        description="a judge file in examples/ (a copy of review/judge.json, which goldenset "
        "review --refit fits on the team's verdicts) that keep_share selects with; null: the "
        "shipped judge",
    )
    aim_echo: bool = Field(
        False, description="each query aims at an echo drawn from the example queries' echoes"
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
