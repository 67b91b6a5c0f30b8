"""The gate: which compared rows can fail the build. The gated rows (compare.gate) are
judged together, their p-values Holm-adjusted; a regression is a gated drop that stays
significant and exceeds its metric's budget."""

from __future__ import annotations

from dataclasses import dataclass, replace

from goldenset.compare.params import CompareParams
from goldenset.core.errors import GoldensetError
from goldenset.core.stats import holm_adjusted


@dataclass(frozen=True)
class Row:
    query_set: str
    retriever: str
    metric: str
    n: int  # questions judged in both runs
    mean_a: float
    mean_b: float
    delta: float  # mean of the per-question differences b - a
    low: float  # paired bootstrap interval of delta
    high: float
    p_value: float  # uncorrected
    exact: bool
    worse: int
    better: int
    gated: bool = False  # in the gate: its drop can fail the build
    p_gate: float = float("nan")  # Holm-adjusted over the gated rows; NaN when not gated
    regression: bool = False  # gated, significant after Holm, and beyond the metric's budget
    improvement: bool = False  # significant (Holm-adjusted if gated) and positive

    @property
    def name(self) -> str:
        return f"{self.query_set}.{self.retriever}.{self.metric}"


def apply_gate(rows: list[Row], settings: CompareParams) -> list[Row]:
    """Mark the gated rows, Holm-adjust their p-values, and flag regressions and improvements."""
    missing = sorted(set(settings.gate) - {row.name for row in rows})
    if missing:
        raise GoldensetError(
            f"compare.gate: {', '.join(missing)} not compared (not in both runs' results, or "
            f"not among the metrics compared); the rows are {', '.join(r.name for r in rows)}"
        )
    gated = [i for i, row in enumerate(rows) if row.name in set(settings.gate)]
    adjusted = dict(zip(gated, holm_adjusted([rows[i].p_value for i in gated]), strict=True))
    decided = []
    for i, row in enumerate(rows):
        p = float(adjusted.get(i, row.p_value))
        significant = p < settings.alpha
        decided.append(
            replace(
                row,
                gated=i in adjusted,
                p_gate=p if i in adjusted else float("nan"),
                regression=i in adjusted
                and significant
                and row.delta < -settings.budget(row.metric),
                improvement=significant and row.delta > 0,
            )
        )
    return decided
