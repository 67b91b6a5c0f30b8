"""params.yaml `score:`: cutoffs, budgets, headline metrics, intervals and chance levels."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from goldenset.core.params import IntervalParams, Section
from goldenset.evaluation.measures import metric_names_hint, parse_metric


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
