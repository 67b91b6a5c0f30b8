"""Paired comparison of two runs, question by question: deltas, intervals, p-values, regressions.

Pure functions on the per-question results (data/results.parquet) of two revisions; reading the
revisions through DVC lives in goldenset.compare.revisions, the command line in goldenset.cli.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.params import CompareParams
from goldenset.core.paths import RESULT_KEYS
from goldenset.core.stats import EXACT_MAX_N, bootstrap_interval, holm_adjusted, randomization_test
from goldenset.corpus.querysets import document_judged
from goldenset.scoring.measures import is_per_question_metric


class DifferentQuestions(GoldensetError):
    """The two runs were scored on different questions: their means are not comparable."""


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


def metric_columns(results: pd.DataFrame) -> list[str]:
    """The per-question metric columns of results.parquet (goldenset.scoring.measures.MEASURES)."""
    return [name for name in results.columns if is_per_question_metric(str(name))]


def shared_questions(a: pd.DataFrame, b: pd.DataFrame, labels: tuple[str, str]) -> list[str]:
    """Complaints, one per query set, whose questions differ between the runs (empty: same)."""
    problems = []
    for set_name in sorted(set(a["query_set"]) | set(b["query_set"])):
        qids_a = set(a.loc[a["query_set"] == set_name, "qid"])
        qids_b = set(b.loc[b["query_set"] == set_name, "qid"])
        if qids_a != qids_b:
            problems.append(
                f"{set_name}: {len(qids_a - qids_b)} only in {labels[0]}, "
                f"{len(qids_b - qids_a)} only in {labels[1]}, {len(qids_a & qids_b)} shared"
            )
    return problems


def pair(
    a: pd.DataFrame, b: pd.DataFrame, labels: tuple[str, str], intersect: bool = False
) -> pd.DataFrame:
    """One row per (query_set, retriever, qid) scored in both runs, columns suffixed _a and _b.

    Different question sets are refused unless ``intersect``: then only shared ones are kept.
    """
    problems = shared_questions(a, b, labels)
    if problems and not intersect:
        raise DifferentQuestions(
            "the two runs were scored on different questions ("
            + "; ".join(problems)
            + "); compare runs of the same golden set and queries, or pass --intersect "
            "to compare the shared questions only"
        )
    metrics = [name for name in metric_columns(a) if name in set(metric_columns(b))]
    if not metrics:
        raise GoldensetError(
            f"no per-question metric is in the results of both {labels[0]} and {labels[1]}; "
            "results written before per-question metrics existed need `dvc repro` there"
        )
    return a.merge(b, on=RESULT_KEYS, suffixes=("_a", "_b"), validate="one_to_one")


def compare(paired: pd.DataFrame, metrics: list[str], settings: CompareParams) -> list[Row]:
    """A row per query set, retriever and metric, in the order they first appear; the gated
    ones (``settings.gate``) judged together, Holm-corrected, the others shown uncorrected."""
    rows = []
    for (set_name, retriever), group in paired.groupby(["query_set", "retriever"], sort=False):
        for metric in metrics:
            if f"{metric}_a" not in paired.columns:  # gated, but not scored: judge() says so
                continue
            values = group[[f"{metric}_a", f"{metric}_b"]].dropna().to_numpy(dtype=np.float64)
            if not len(values):  # a metric this query set does not have (doc_ on real queries)
                continue
            rows.append(
                _compare_one(set_name, retriever, metric, values[:, 0], values[:, 1], settings)
            )
    return judge(rows, settings)


def judge(rows: list[Row], settings: CompareParams) -> list[Row]:
    """Mark the gated rows, Holm-adjust their p-values, and flag regressions and improvements."""
    missing = sorted(set(settings.gate) - {row.name for row in rows})
    if missing:
        raise GoldensetError(
            f"compare.gate: {', '.join(missing)} not compared (not in both runs' results, or "
            f"not among the metrics compared); the rows are {', '.join(r.name for r in rows)}"
        )
    gated = [i for i, row in enumerate(rows) if row.name in set(settings.gate)]
    adjusted = dict(zip(gated, holm_adjusted([rows[i].p_value for i in gated]), strict=True))
    judged = []
    for i, row in enumerate(rows):
        p = float(adjusted.get(i, row.p_value))
        significant = p < settings.alpha
        judged.append(
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
    return judged


def _compare_one(
    set_name: str,
    retriever: str,
    metric: str,
    a: np.ndarray,
    b: np.ndarray,
    settings: CompareParams,
) -> Row:
    differences = b - a
    interval = bootstrap_interval(
        differences, settings.resamples, settings.confidence, settings.seed
    )
    test = randomization_test(a, b, settings.permutations, settings.seed)
    return Row(
        query_set=set_name,
        retriever=retriever,
        metric=metric,
        n=int(a.size),
        mean_a=float(a.mean()) if a.size else float("nan"),
        mean_b=float(b.mean()) if b.size else float("nan"),
        delta=test.statistic,
        low=interval.low,
        high=interval.high,
        p_value=test.p_value,
        exact=test.exact,
        worse=int((differences < 0).sum()),
        better=int((differences > 0).sum()),
    )


@dataclass(frozen=True)
class Regressed:
    """A question that lost most on the headline metric, and what now ranks above its evidence."""

    query_set: str
    retriever: str
    qid: str
    metric: str
    value_a: float
    value_b: float
    rank_a: int | None  # rank of the first relevant item; None: beyond the depth kept
    rank_b: int | None
    above: list[str]  # ids ranked above the first relevant item in run b (all shown, if none)


def most_regressed(
    paired: pd.DataFrame, metric: str, count: int, outranking: int = 2
) -> list[Regressed]:
    """Per query set and retriever, the ``count`` questions whose ``metric`` dropped most."""
    found = []
    delta = paired[f"{metric}_b"] - paired[f"{metric}_a"]
    dropped = paired[delta < 0].assign(_delta=delta[delta < 0])
    for (set_name, retriever), group in dropped.groupby(["query_set", "retriever"], sort=False):
        for row in group.sort_values(["_delta", "qid"]).head(count).to_dict("records"):
            rank_b = _rank(row["first_relevant_rank_b"])
            top = [str(item) for item in row["top_ids_b"]]
            found.append(
                Regressed(
                    query_set=set_name,
                    retriever=retriever,
                    qid=str(row["qid"]),
                    metric=metric,
                    value_a=float(row[f"{metric}_a"]),
                    value_b=float(row[f"{metric}_b"]),
                    rank_a=_rank(row["first_relevant_rank_a"]),
                    rank_b=rank_b,
                    above=top[: rank_b - 1 if rank_b else len(top)][:outranking],
                )
            )
    return found


def _rank(value: object) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


@dataclass(frozen=True)
class Texts:
    """What a reader needs to recognise a question and the items that outranked its evidence."""

    questions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # set -> qid -> text
    # set -> qid -> evidence text (sets judged by spans; the first excerpt)
    evidence: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    chunks: Mapping[str, str] = field(default_factory=dict)  # chunk_id -> text
    documents: Mapping[str, str] = field(default_factory=dict)  # doc_id -> title and text

    def item(self, set_name: str, item_id: str) -> str:
        # a set judged by document qrels ranks documents; every other set ranks chunks
        by_document = set_name in document_judged()
        return (self.documents if by_document else self.chunks).get(item_id, "")


HEADER = [
    "query set", "retriever", "metric", "A", "B", "Δ", "CI of Δ",
    "p", "gate p", "worse/better/n", "",
]  # fmt: skip


def verdict(rows: list[Row], settings: CompareParams) -> str:
    regressions = [row for row in rows if row.regression]
    gated = sum(row.gated for row in rows)
    family = (
        f"alpha {settings.alpha:g} Holm-corrected over {gated} gated metric(s), "
        f"{_budgets(settings)}; {len(rows) - gated} other row(s) not gated"
    )
    if not regressions:
        return f"No significant regression ({family})."
    named = ", ".join(
        f"{row.query_set}.{row.retriever}.{row.metric} {row.delta:+.4f}" for row in regressions
    )
    return f"{len(regressions)} significant regression(s) beyond budget ({family}): {named}."


def _budgets(settings: CompareParams) -> str:
    named = "".join(
        f", {metric} {value:g}" for metric, value in settings.budgets.items() if metric != "default"
    )
    return f"budget {settings.budget('default'):g}{named}"


def _cells(row: Row, alpha: float) -> list[str]:
    status = ""
    if row.regression:
        status = "REGRESSION"
    elif row.improvement:
        status = "improved"
    elif row.gated and row.p_gate < alpha and row.delta < 0:
        status = "worse, within budget"
    elif not row.gated and row.p_value < alpha and row.delta < 0:
        status = "worse, not gated"  # uncorrected: one of many rows, information only
    return [
        row.query_set,
        row.retriever,
        row.metric,
        f"{row.mean_a:.4f}",
        f"{row.mean_b:.4f}",
        f"{row.delta:+.4f}",
        f"[{row.low:+.4f}, {row.high:+.4f}]",
        f"{row.p_value:.3g}",
        f"{row.p_gate:.3g}" if row.gated else "not gated",
        f"{row.worse}/{row.better}/{row.n}",
        status,
    ]


def _shorten(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _regressed_lines(regressed: list[Regressed], texts: Texts, code: str) -> list[str]:
    lines = []
    for item in regressed:
        question = texts.questions.get(item.query_set, {}).get(item.qid, "")
        ranks = f"{item.rank_a or '-'} → {item.rank_b or '-'}"
        line = (
            f"- {item.query_set}/{item.retriever} {code}{item.qid}{code} "
            f'"{_shorten(question)}": {item.metric} {item.value_a:.3f} → {item.value_b:.3f}, '
            f"first relevant at rank {ranks}"
        )
        evidence = texts.evidence.get(item.query_set, {}).get(item.qid)
        if evidence:
            line += f'; evidence "{_shorten(evidence, 70)}"'
        if item.above:
            above = ", ".join(
                f'{code}{other}{code} "{_shorten(texts.item(item.query_set, other), 60)}"'
                for other in item.above
            )
            line += f"; outranked by {above}"
        lines.append(line)
    return lines


def _method(settings: CompareParams) -> str:
    return (
        f"Δ = B − A, mean over paired questions; CI: {settings.confidence:.0%} paired bootstrap "
        f"({settings.resamples:,} resamples); p: paired randomization test, two-sided (every "
        f"sign flip up to {EXACT_MAX_N} questions, else {settings.permutations:,}), uncorrected; "
        "gate p: Holm-adjusted over the gated metrics (compare.gate), the only ones that fail "
        f"the build; seed {settings.seed}."
    )


def render_markdown(
    rows: list[Row],
    regressed: list[Regressed],
    texts: Texts,
    labels: tuple[str, str],
    settings: CompareParams,
) -> str:
    """A pull-request comment: one table, the verdict, the most regressed questions folded."""
    lines = [f"### goldenset compare: A = `{labels[0]}`, B = `{labels[1]}`", ""]
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "|".join(["---"] * 3 + ["---:"] * 7 + ["---"]) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_cells(row, settings.alpha)) + " |")
    lines += ["", f"**{verdict(rows, settings)}**", ""]
    if regressed:
        lines += [
            f"<details><summary>Most regressed questions ({regressed[0].metric})</summary>",
            "",
            *_regressed_lines(regressed, texts, "`"),
            "",
            "</details>",
            "",
        ]
    lines.append(f"<sub>{_method(settings)}</sub>")
    return "\n".join(lines) + "\n"


def render_text(
    rows: list[Row],
    regressed: list[Regressed],
    texts: Texts,
    labels: tuple[str, str],
    settings: CompareParams,
) -> str:
    """The same report as aligned columns, for a terminal."""
    table = [HEADER, *(_cells(row, settings.alpha) for row in rows)]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(HEADER))]
    lines = [f"A = {labels[0]}, B = {labels[1]}", ""]
    for cells in table:
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()
        )
    lines += ["", verdict(rows, settings)]
    if regressed:
        lines += ["", f"Most regressed questions ({regressed[0].metric}):"]
        lines += _regressed_lines(regressed, texts, "")
    lines += ["", _method(settings)]
    return "\n".join(lines) + "\n"
