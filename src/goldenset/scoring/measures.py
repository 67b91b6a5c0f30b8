"""The metrics, declared once: one :class:`Measure` per metric in :data:`MEASURES`, the one place
to add one.

Declared apart from the code that computes it (as ir_measures declares its measures apart from
its backends): its name, its parameter (a cutoff k, or a token budget B), whether it has a value
per question, its views (chunk and doc: computed on a ranking by goldenset.scoring.metrics.evaluate;
context: by goldenset.scoring.views.context_view), a one-line definition, its trec_eval reference
and its chance level (goldenset.scoring.chance: a closed form when it has one, else an estimate
over random rankings). The params validation of `score.headline`, `goldenset compare`'s metric
columns, evaluate(), the chance levels and the metric table of docs/reading-results.md all read it.

Functions are named as "module:function" and imported when first computed: goldenset.scoring.params
reads this module, and reading params must not load numpy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

View = Literal["chunk", "doc", "context"]
# the views a ranking measure is computed in: the chunk items, and documents ranked by their
# best chunk (named doc_<name>; on `real` the items already are documents)
RANKING_VIEWS: tuple[View, ...] = ("chunk", "doc")
# (goldenset.scoring.metrics.Judged of a ranking, k or None) -> a value per judged query
Compute = Callable[[Any, Any], Any]
# (goldenset.scoring.chance.RandomRanking, k or None) -> its expected value per query, NaN for a
# query without a relevant item
Chance = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Measure:
    name: str  # the metric's name before @ (context measures start with context_)
    parameter: Literal["k", "B"] | None  # k: score.ks; B: score.budgets; None: no parameter
    views: tuple[View, ...]
    definition: str  # one line, for the docs' metric table
    reference: str = ""  # the trec_eval measure it equals, when there is one
    per_question: bool = True  # a value per question: a per-question column, compared
    # ranking measures: a function, or "module:function", of (Judged, k); context measures are
    # computed by goldenset.scoring.views.context_view
    compute: Compute | str | None = None
    # ranking measures: its value under a random ranking in closed form, a function or
    # "module:function"; None: estimated over random rankings (goldenset.scoring.chance)
    chance: Chance | str | None = None

    def computed(self) -> Compute:
        assert self.compute is not None, self.name
        return _resolved(self.compute)

    def closed_form(self) -> Chance | None:
        return None if self.chance is None else _resolved(self.chance)

    def spelled(self) -> str:
        return f"{self.name}@{self.parameter}" if self.parameter else self.name


def _resolved(function: Callable | str) -> Callable:
    if callable(function):
        return function
    module, _, name = function.partition(":")
    return getattr(importlib.import_module(module), name)


METRICS = "goldenset.scoring.metrics"
CHANCE = "goldenset.scoring.chance"
MEASURES: dict[str, Measure] = {
    measure.name: measure
    for measure in [
        Measure(
            "recall",
            "k",
            RANKING_VIEWS,
            "share of the question's relevant items in the top k",
            "recall_k",
            compute=f"{METRICS}:recall_measure",
            chance=f"{CHANCE}:recall_chance",
        ),
        Measure(
            "hit",
            "k",
            RANKING_VIEWS,
            "1 when a relevant item is in the top k",
            "success_k",
            compute=f"{METRICS}:hit_measure",
            chance=f"{CHANCE}:hit_chance",
        ),
        Measure(
            "ndcg",
            "k",
            RANKING_VIEWS,
            "DCG of the top k over the ideal DCG, linear gains, log2(rank + 1) discount",
            "ndcg_cut_k",
            compute=f"{METRICS}:ndcg_measure",
            chance=f"{CHANCE}:ndcg_chance",
        ),
        Measure(
            "precision",
            "k",
            RANKING_VIEWS,
            "relevant items in the top k divided by k",
            "P_k",
            compute=f"{METRICS}:precision_measure",
            chance=f"{CHANCE}:precision_chance",
        ),
        Measure(
            "mrr",
            None,
            RANKING_VIEWS,
            "1 / rank of the first relevant item within `score.depth`; 0 when none",
            "recip_rank",
            compute=f"{METRICS}:mrr_measure",
            chance=f"{CHANCE}:mrr_chance",
        ),
        Measure(
            "context_recall",
            "B",
            ("context",),
            "share of the evidence characters in a context of B tokens of ranked chunks",
        ),
        Measure(
            "context_precision",
            "B",
            ("context",),
            "share of the context's characters that are evidence (0 for an empty context)",
        ),
        Measure(
            "context_iou",
            "B",
            ("context",),
            "evidence and context characters: intersection over union",
        ),
        Measure(
            "context_hit",
            "B",
            ("context",),
            "1 when a relevant document has text in the context",
        ),
    ]
}


def ranking_measures() -> list[Measure]:
    """The measures evaluate() computes on a ranking, in the order they are reported."""
    return [measure for measure in MEASURES.values() if measure.compute is not None]


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
    other = [m.spelled() for m in MEASURES.values() if "doc" not in m.views]
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
