"""The metrics, declared once: one :class:`Measure` per metric in :data:`MEASURES`, the one place
to add one.

A measure is registered beside the code that computes it: its name, its parameter (a cutoff k,
or a token budget B), whether it has a value per question, its views (chunk and doc: computed on
a ranking by goldenset.evaluation.ranking.evaluate; context: by
goldenset.evaluation.context.context_view; exact: an approximate search's ranking against the
exact one, goldenset.evaluation.approximation), a one-line definition, its trec_eval reference,
its compute function and, for a ranking measure, its chance level in closed form when it has
one (else goldenset.evaluation.chance estimates it over random rankings). The params validation
of `score.headline`, `goldenset compare`'s metric columns, evaluate(), the chance levels and the
metric table of docs/reading-results.md all read it.

This module imports no numpy: the registry imports the modules that compute (and plugins,
``goldenset.metrics`` entry points) when a params value is first checked against it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from goldenset.core.registry import Registry

View = Literal["chunk", "doc", "context", "exact"]
# the views a ranking measure is computed in: the chunk items, and documents ranked by their
# best chunk (named doc_<name>; on `real` the items already are documents)
RANKING_VIEWS: tuple[View, ...] = ("chunk", "doc")
Compute = Callable[..., Any]
# (goldenset.evaluation.ranking_measures.RandomRanking, k or None) -> its expected value per query,
# NaN for a query without a relevant item
Chance = Callable[[Any, Any], Any]


@dataclass(frozen=True, kw_only=True)
class Measure:
    name: str  # the metric's name before @ (context measures start with context_)
    parameter: Literal["k", "B"] | None  # k: score.ks; B: score.budgets; None: no parameter
    views: tuple[View, ...]
    definition: str  # one line, for the docs' metric table
    reference: str = ""  # the trec_eval measure it equals, when there is one
    per_question: bool = True  # a value per question: a per-question column, compared
    # a ranking measure: (LabelledRanking, k) -> a value per query; a context measure: (one
    # context's goldenset.evaluation.context.ContextOverlap) -> its value; an exact measure:
    # (approximate ranking, exact ranking, k) -> its mean
    compute: Compute
    # a ranking measure's value under a random ranking in closed form; None: estimated over
    # random rankings (goldenset.evaluation.chance)
    chance: Chance | None = None

    def spelled(self) -> str:
        return f"{self.name}@{self.parameter}" if self.parameter else self.name


# Filled by goldenset.evaluation.ranking_measures (recall, hit, ndcg, precision, mrr), then
# goldenset.evaluation.context (the context measures), goldenset.evaluation.approximation
# (recall_loss), then plugins (goldenset.metrics entry points).
MEASURES: Registry[Measure] = Registry(
    "metric",
    "metrics",
    [
        "goldenset.evaluation.ranking_measures",
        "goldenset.evaluation.context",
        "goldenset.evaluation.approximation",
    ],
)


def ranking_measures() -> list[Measure]:
    """The measures evaluate() computes on a ranking, in the order they are reported."""
    return [m for m in MEASURES.values() if set(m.views) & set(RANKING_VIEWS)]


def context_measures() -> list[Measure]:
    """The measures of the context-budget view, in the order they are reported."""
    return [measure for measure in MEASURES.values() if "context" in measure.views]


def exact_measures() -> list[Measure]:
    """The measures of an approximate search against the exact one it approximates."""
    return [measure for measure in MEASURES.values() if "exact" in measure.views]


def named(measures: Iterable[Measure], ks: Iterable[int]) -> list[tuple[str, Measure, int | None]]:
    """Each measure's metric names with their parameter, in the order they are reported: by k
    (``recall@1``, ``hit@1``, ..., ``recall@3``, ...), then those without one (``mrr``)."""
    measures, ks = list(measures), list(ks)
    by_k = [(f"{m.name}@{k}", m, k) for k in ks for m in measures if m.parameter == "k"]
    return by_k + [(m.name, m, None) for m in measures if m.parameter is None]


def parse_metric(name: str) -> tuple[Measure, int | None] | None:
    """A metric name as it appears in scores and results (``doc_ndcg@10``, ``mrr``,
    ``context_hit@512``) -> its measure and parameter value; None when no measure has it."""
    base, at, value = name.partition("@")
    if at and not value.isdigit():
        return None
    doc = base.startswith("doc_")
    measure = MEASURES.get(base[4:] if doc else base)
    if measure is None or (doc and "doc" not in measure.views):
        return None
    if bool(at) != (measure.parameter is not None):
        return None
    return measure, int(value) if at else None


def is_per_question_metric(name: str) -> bool:
    """A column of results.parquet that holds a metric's value per question."""
    parsed = parse_metric(name)
    return parsed is not None and parsed[0].per_question


def metric_names_hint() -> str:
    """The metric names score.headline accepts, spelled for an error message."""
    ranking = [m.spelled() for m in MEASURES.values() if "doc" in m.views]
    other = [m.spelled() for m in MEASURES.values() if "doc" not in m.views and m.per_question]
    return f"{', '.join(ranking)}, their doc_ forms, or {', '.join(other)}"


def metric_table() -> str:
    """The metric table of docs/reading-results.md, in markdown."""
    lines = [
        "| metric | parameter | views | definition | trec_eval |",
        "|---|---|---|---|---|",
    ]
    for measure in MEASURES.values():
        parameter = {"k": "k in `score.ks`", "B": "B in `score.budgets`", None: ""}[
            measure.parameter
        ]
        reference = f"`{measure.reference}`" if measure.reference else ""
        lines.append(
            f"| `{measure.spelled()}` | {parameter} | {', '.join(measure.views)} "
            f"| {measure.definition} | {reference} |"
        )
    return "\n".join(lines) + "\n"
