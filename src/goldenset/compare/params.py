"""params.yaml `compare:`: which metrics fail the build, and how sure a drop must be."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from goldenset.core.params import Section, StageParams

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


class CompareCommand(StageParams):
    """The one section `goldenset compare` reads: a typo elsewhere in params.yaml is the
    error of the stage that reads it, never the gate's."""

    compare: CompareParams | None = None
