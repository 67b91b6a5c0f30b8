"""What the score stage writes: each chunking's scores gathered into :class:`ScoreOutputs`.

`dvc metrics diff` stays readable when metrics/scores.json holds only the headline metrics
(and n_queries); every other k and metric goes to metrics/detail.json, and the bootstrap
interval of each headline mean to metrics/intervals.json.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.params import IntervalParams
from goldenset.core.stats import bootstrap_interval
from goldenset.corpus.queries import FIXED_FROM
from goldenset.corpus.querysets import QuerySet
from goldenset.scoring.params import ScoreParams

Nested = dict[str, dict[str, dict[str, float]]]  # query set -> retriever -> metric -> mean
NO_GOLDEN_QUESTION = "# Worst misses\n\nNo golden-set question was scored.\n"


@dataclass
class ChunkingScores:
    """One chunking scored (goldenset's own, or a store's): what the outputs gather."""

    metrics: Nested = field(default_factory=dict)
    rows: list[pd.DataFrame] = field(default_factory=list)
    exports: dict[Path, str] = field(default_factory=dict)
    chance: dict[str, dict[str, float]] = field(default_factory=dict)
    # the chunking's whole worst-misses report (title, introduction, a section per retriever);
    # empty where it scored no golden set
    misses: str = ""
    placements: dict[str, dict] = field(default_factory=dict)  # what became of a store's passages


@dataclass
class ScoreOutputs:
    """Everything the score stage writes, by the file it goes to (goldenset.core.paths)."""

    results: pd.DataFrame  # data/results.parquet: one row per query set, retriever, question
    scores: dict  # metrics/scores.json: the headline metrics
    detail: dict  # metrics/detail.json: every other metric, and chance levels
    intervals: dict  # metrics/intervals.json
    recall_plot: list[dict]  # plots/recall_at_k.json
    worst_misses: str  # reports/worst_misses.md
    exports: dict[Path, str] = field(default_factory=dict)  # under data/export: BEIR, TREC runs


def gathered(parts: list[ChunkingScores], score: ScoreParams) -> ScoreOutputs:
    """The chunkings' scores as the stage's outputs: one metrics file, one results table."""
    metrics: Nested = {}
    rows, exports, chance, placements = [], {}, {}, {}
    for part in parts:
        for set_name, by_retriever in part.metrics.items():
            metrics.setdefault(set_name, {}).update(by_retriever)
        rows += part.rows
        exports.update(part.exports)
        chance.update(part.chance)
        placements.update(part.placements)
    if not rows:
        raise GoldensetError("retrievers: no enabled retriever ranked any query set")
    frame = pd.concat(rows, ignore_index=True)
    headline, detail = split_metrics(metrics, score.headline)
    return ScoreOutputs(
        results=frame,
        scores=headline,
        detail={**detail, "chance": chance, **({"stores": placements} if placements else {})},
        intervals=headline_intervals(frame, score.headline, score.intervals),
        recall_plot=recall_plot_rows(metrics, score.ks),
        worst_misses=_joined_reports([part.misses for part in parts]),
        exports=exports,
    )


def _joined_reports(reports: list[str]) -> str:
    """One worst-misses report: the first's title and introduction, every part's sections."""
    written = [report for report in reports if report]
    if not written:
        return NO_GOLDEN_QUESTION
    sections = [report.partition("\n## ")[2] for report in written[1:]]
    return "\n## ".join([written[0], *filter(None, sections)])


def split_metrics(metrics: Nested, headline: list[str]) -> tuple[Nested, Nested]:
    """(headline metrics and n_queries, every other metric), both nested set -> retriever."""
    kept = [*headline, "n_queries"]
    head: Nested = {}
    tail: Nested = {}
    for set_name, retrievers in metrics.items():
        for retriever, values in retrievers.items():
            head.setdefault(set_name, {})[retriever] = {
                name: values[name] for name in kept if name in values
            }
            tail.setdefault(set_name, {})[retriever] = {
                name: value for name, value in values.items() if name not in kept
            }
    return head, tail


def headline_intervals(
    results: pd.DataFrame, headline: list[str], params: IntervalParams
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """Bootstrap interval of each headline mean, from the per-question values in results.

    Questions without a relevant item (NaN) are left out, as they are from the means.
    """
    intervals: dict = {}
    for (set_name, retriever), rows in results.groupby(["query_set", "retriever"], sort=False):
        for name in headline:
            values = rows[name].dropna().to_numpy()
            if values.size == 0:  # a metric this set does not have (doc_ on real queries)
                continue
            interval = bootstrap_interval(values, params.resamples, params.confidence, params.seed)
            intervals.setdefault(set_name, {}).setdefault(retriever, {})[name] = {
                "low": interval.low,
                "high": interval.high,
            }
    return intervals


def with_fixed_from(results: pd.DataFrame, golden: QuerySet) -> pd.DataFrame:
    """Results with the original's qid beside each golden question a person fixed (None
    elsewhere); as they were when the golden set holds no fix."""
    if FIXED_FROM not in golden.table:
        return results
    fixed = golden.table.dropna(subset=[FIXED_FROM])
    originals = dict(zip(fixed["qid"], fixed[FIXED_FROM], strict=True))
    named = [
        originals.get(qid) if set_name == golden.name else None
        for set_name, qid in zip(results["query_set"], results["qid"], strict=True)
    ]
    return results.assign(**{FIXED_FROM: pd.Series(named, index=results.index, dtype=object)})


def recall_plot_rows(metrics: dict[str, dict[str, dict[str, float]]], ks: list[int]) -> list[dict]:
    """Rows of plots/recall_at_k.json, one per query set, retriever and k: only what was scored.

    Long rather than one column per retriever, so that the plot template (.dvc/plots) draws any
    query set and retriever without a list of names to keep in step with the params. A store
    without a chunk view (goldenset.scoring.inputs.Chunking.listed) has no recall@k to draw.
    """
    return [
        {"query_set": set_name, "retriever": retriever, "k": k, "recall": values[f"recall@{k}"]}
        for set_name, retrievers in metrics.items()
        for retriever, values in retrievers.items()
        for k in ks
        if f"recall@{k}" in values
    ]
