"""The extension points, declared once: which retrievers exist and which metrics are measured.

Retrievers
----------
One entry per retriever in :data:`REGISTRY`, the one place to add one. An entry names its
section of params.yaml `retrievers:` (a pydantic model), how to build it over
a corpus, whether hybrid may fuse its lists, whether it reads embeddings, and any metrics of its
own. Everything else is derived from :data:`REGISTRY`: the params sections and their validation
(goldenset.core.params), the order retrievers rank in, the retrievers `goldenset calibrate` accepts,
and the plot (a colour per retriever scored, whatever its name). The interface every retriever
implements (``Retriever``, ``Corpus``, ``Queries``) and the implementations live in
goldenset.scoring.retrievers; this module imports them only when a retriever is built, so
reading params never loads torch or faiss.

Adding a retriever: write a class with ``rank(queries, depth, earlier)``, then one entry here
(``REGISTRY["name"] = RetrieverEntry(...)``) and its section in params.yaml. goldenset.core.params
derives the `retrievers:` sections when it is imported, so an entry added from outside (a
plugin, a test's toy) is added before that.

Metrics
-------
One :class:`Measure` per metric in :data:`MEASURES`, the one place to add one, declared apart
from the code that computes it (as ir_measures declares its measures apart from its backends):
its name, its parameter (a cutoff k, or a token budget B), whether it has a value per question,
its views (chunk and doc: computed on a ranking by goldenset.scoring.metrics.evaluate; context: by
goldenset.scoring.views.context_view), a one-line definition and its trec_eval reference.
The params validation of `score.headline`, `goldenset compare`'s metric columns, evaluate() and
the README's metric table all read it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class RetrieverSection(BaseModel):
    """A retriever's section of params.yaml `retrievers:`; every one can be switched off."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True


class DenseParams(RetrieverSection):
    pass


class BM25Params(RetrieverSection):
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)


class ANNParams(RetrieverSection):
    index: Literal["hnsw", "ivf"] = "hnsw"
    hnsw_m: int = Field(32, gt=1, description="HNSW links per node")
    ef_construction: int = Field(40, gt=0)
    ef_search: int = Field(16, gt=0, description="raised to the results fetched")
    ivf_nlist: int = Field(100, gt=0, description="IVF clusters (at most one per chunk)")
    ivf_nprobe: int = Field(8, gt=0, description="IVF clusters searched per query")


class ExternalParams(RetrieverSection):
    enabled: bool = False
    callable: str | None = Field(None, pattern=r"^[\w.]+:\w+$", description="module:function")
    run_file: str | None = Field(None, min_length=1, description="a TREC run file")
    folder: str = Field(
        "external",
        min_length=1,
        description="the retriever's files, a dep of score; its module imports from the folder "
        "holding this one",
    )

    @model_validator(mode="after")
    def _one_source(self) -> ExternalParams:
        if self.enabled and (self.callable is None) == (self.run_file is None):
            raise ValueError("set exactly one of callable (module:function) and run_file")
        return self


class HybridParams(RetrieverSection):
    # names checked against the registry by goldenset.core.params (retrievers that can be fused)
    fuse: list[str] = Field(default_factory=lambda: ["dense", "bm25"], min_length=2)
    rrf_k: int = Field(60, gt=0, description="reciprocal rank fusion: 1 / (rrf_k + rank)")


# The built-in retrievers name their functions as "module:function", imported when a retriever
# is built: params.py reads this table, and reading params must not load torch or faiss.
BUILDERS = "goldenset.scoring.retrievers"
# (its params section, a goldenset.scoring.retrievers.Corpus, a torch device) -> a Retriever
Builder = Callable[[Any, Any, Any], Any]
# (its ranked lists, goldenset.scoring.retrievers.RankingContext, ks) -> metric name -> mean
ExtraMetrics = Callable[[Any, Any, Sequence[int]], dict[str, float]]


@dataclass(frozen=True)
class RetrieverEntry:
    params: type[RetrieverSection]  # its section of params.yaml `retrievers:`
    build: Builder | str  # a function, or "module:function"
    # hybrid may fuse its lists; one that fuses others (its params have `fuse`, the names it
    # fuses) is not fusable, and ranks after them
    fusable: bool = True
    model_free: bool = False  # reads no embedding: calibrate scores it with the first model only
    extra_metrics: ExtraMetrics | str | None = None  # metrics of its own, added to its scores

    def builder(self) -> Builder:
        return _resolved(self.build)

    def extra(self) -> ExtraMetrics | None:
        return None if self.extra_metrics is None else _resolved(self.extra_metrics)


def _resolved(function: Callable | str) -> Callable:
    if callable(function):
        return function
    module, _, name = function.partition(":")
    return getattr(importlib.import_module(module), name)


REGISTRY: dict[str, RetrieverEntry] = {
    "dense": RetrieverEntry(DenseParams, f"{BUILDERS}:build_dense"),
    "bm25": RetrieverEntry(BM25Params, f"{BUILDERS}:build_bm25", model_free=True),
    "ann": RetrieverEntry(
        ANNParams, f"{BUILDERS}:build_ann", extra_metrics=f"{BUILDERS}:recall_loss_against_exact"
    ),
    "external": RetrieverEntry(ExternalParams, f"{BUILDERS}:build_external", model_free=True),
    "hybrid": RetrieverEntry(HybridParams, f"{BUILDERS}:build_hybrid", fusable=False),
}


def ranking_order() -> list[str]:
    """Registered names, those hybrid can fuse first: a fusing retriever reads their lists."""
    return fusable() + [name for name, entry in REGISTRY.items() if not entry.fusable]


def fusable() -> list[str]:
    return [name for name, entry in REGISTRY.items() if entry.fusable]


def model_free() -> set[str]:
    return {name for name, entry in REGISTRY.items() if entry.model_free}


def build_retrievers(params: BaseModel, corpus: Any, device: Any = "cpu") -> dict[str, Any]:
    """The enabled retrievers (goldenset.scoring.retrievers.Retriever) of params.yaml
    `retrievers:` over a goldenset.scoring.retrievers.Corpus, by name, in ranking order.

    device: where exact dense scoring runs (score.device, resolved)."""
    built: dict[str, Any] = {}
    for name in ranking_order():
        settings = getattr(params, name)
        if settings.enabled:
            built[name] = REGISTRY[name].builder()(settings, corpus, device)
    return built


def fused_sections(params: BaseModel) -> Mapping[str, list[str]]:
    """The retrievers each fusing retriever fuses (its `fuse` param), enabled or not."""
    return {
        name: list(getattr(params, name).fuse)
        for name, entry in REGISTRY.items()
        if not entry.fusable
    }


# -- metrics ---------------------------------------------------------------------------------

View = Literal["chunk", "doc", "context"]
# the views a ranking measure is computed in: the chunk items, and documents ranked by their
# best chunk (named doc_<name>; on `real` the items already are documents)
RANKING_VIEWS: tuple[View, ...] = ("chunk", "doc")
# (goldenset.scoring.metrics.Judged of a ranking, k or None) -> a value per judged query
Compute = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Measure:
    name: str  # the metric's name before @ (context measures start with context_)
    parameter: Literal["k", "B"] | None  # k: score.ks; B: score.budgets; None: no parameter
    views: tuple[View, ...]
    definition: str  # one line, for the README table
    reference: str = ""  # the trec_eval measure it equals, when there is one
    per_question: bool = True  # a value per question: a per-question column, compared
    # ranking measures: a function, or "module:function", of (Judged, k); context measures are
    # computed by goldenset.scoring.views.context_view
    compute: Compute | str | None = None

    def computed(self) -> Compute:
        assert self.compute is not None, self.name
        return _resolved(self.compute)

    def spelled(self) -> str:
        return f"{self.name}@{self.parameter}" if self.parameter else self.name


METRICS = "goldenset.scoring.metrics"
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
        ),
        Measure(
            "hit",
            "k",
            RANKING_VIEWS,
            "1 when a relevant item is in the top k",
            "success_k",
            compute=f"{METRICS}:hit_measure",
        ),
        Measure(
            "ndcg",
            "k",
            RANKING_VIEWS,
            "DCG of the top k over the ideal DCG, linear gains, log2(rank + 1) discount",
            "ndcg_cut_k",
            compute=f"{METRICS}:ndcg_measure",
        ),
        Measure(
            "precision",
            "k",
            RANKING_VIEWS,
            "relevant items in the top k divided by k",
            "P_k",
            compute=f"{METRICS}:precision_measure",
        ),
        Measure(
            "mrr",
            None,
            RANKING_VIEWS,
            "1 / rank of the first relevant item within `score.depth`; 0 when none",
            "recip_rank",
            compute=f"{METRICS}:mrr_measure",
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
    """The README's metric table, in markdown."""
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
