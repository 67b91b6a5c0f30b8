"""Does the golden set rank configurations the way a reference query set does?

Pure functions on per-question results (the rows of data/results.parquet of several
configurations, a `configuration` column added): for a *view* (a golden-set metric against a
reference set's metric) the configurations are ranked by each, and we report Kendall's tau with a
bootstrap interval over questions, and the *decision agreement*: of the configuration pairs whose
reference difference is significant under the paired test of `goldenset compare`, the share where
the golden set's means pick the same winner. Running the configurations lives in
goldenset.calibrate.runs, the command line in goldenset.cli.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from goldenset.core.stats import randomization_test


@dataclass(frozen=True)
class View:
    name: str
    golden: str  # <query set>.<metric>, e.g. synthetic.ndcg@10
    reference: str  # e.g. real.ndcg@10

    def metrics(self) -> list[str]:
        return [metric_of(self.golden), metric_of(self.reference)]


@dataclass(frozen=True)
class ViewResult:
    view: View
    configurations: int
    tau: float
    tau_low: float
    tau_high: float
    agreement: float  # NaN when no pair differs significantly on the reference set
    pairs_significant: int
    pairs: int


def split_metric(qualified: str) -> tuple[str, str]:
    """`synthetic.ndcg@10` -> (`synthetic`, `ndcg@10`)."""
    query_set, _, metric = qualified.partition(".")
    return query_set, metric


def metric_of(qualified: str) -> str:
    return split_metric(qualified)[1]


def question_matrix(results: pd.DataFrame, qualified: str, configurations: list[str]) -> np.ndarray:
    """(configurations x questions) values of one query set's metric, NaN where a question has no
    value (no relevant item) in a configuration; questions in qid order."""
    query_set, metric = split_metric(qualified)
    rows = results[results["query_set"] == query_set]
    table = rows.pivot(index="configuration", columns="qid", values=metric)
    return table.reindex(configurations).to_numpy(dtype=np.float64)


def available(results: pd.DataFrame, qualified: str) -> bool:
    """The results hold a value of this query set's metric."""
    query_set, metric = split_metric(qualified)
    if metric not in results.columns:
        return False
    return bool(results.loc[results["query_set"] == query_set, metric].notna().any())


def config_means(values: np.ndarray) -> np.ndarray:
    """Mean over the questions with a value, per configuration (row)."""
    with np.errstate(invalid="ignore"):
        return np.nanmean(values, axis=1)


def tau_interval(
    golden: np.ndarray, reference: np.ndarray, resamples: int, confidence: float, seed: int
) -> tuple[float, float, float]:
    """Kendall tau (scipy's tau-b) between the configurations' golden and reference means, and
    its percentile bootstrap interval: golden and reference questions are resampled
    independently, with replacement, and both sets of means and tau recomputed."""
    tau = float(kendalltau(config_means(golden), config_means(reference)).statistic)
    rng = np.random.default_rng(seed)
    taus = np.empty(resamples)
    for number in range(resamples):
        golden_rows = rng.integers(0, golden.shape[1], golden.shape[1])
        reference_rows = rng.integers(0, reference.shape[1], reference.shape[1])
        taus[number] = kendalltau(
            config_means(golden[:, golden_rows]), config_means(reference[:, reference_rows])
        ).statistic
    alpha = (1.0 - confidence) / 2.0
    if np.isnan(taus).all():
        return tau, math.nan, math.nan
    low, high = np.nanquantile(taus, [alpha, 1.0 - alpha])
    return tau, float(low), float(high)


def decision_agreement(
    golden: np.ndarray, reference: np.ndarray, alpha: float, permutations: int, seed: int
) -> tuple[float, int, int]:
    """(agreement, significant pairs, pairs): of the configuration pairs whose reference values
    differ significantly (paired randomization test on the questions both have, p < alpha), the
    share where the golden-set means order the pair the same way (a golden tie disagrees)."""
    means = config_means(golden)
    agree = significant = pairs = 0
    for first, second in itertools.combinations(range(reference.shape[0]), 2):
        pairs += 1
        both = ~np.isnan(reference[first]) & ~np.isnan(reference[second])
        test = randomization_test(
            reference[first, both], reference[second, both], permutations, seed
        )
        if not test.p_value < alpha:
            continue
        significant += 1
        agree += bool(np.sign(means[second] - means[first]) == np.sign(test.statistic))
    agreement = agree / significant if significant else math.nan
    return agreement, significant, pairs


def calibrate_view(
    results: pd.DataFrame,
    view: View,
    configurations: list[str],
    resamples: int,
    confidence: float,
    alpha: float,
    permutations: int,
    seed: int,
) -> ViewResult:
    golden = question_matrix(results, view.golden, configurations)
    reference = question_matrix(results, view.reference, configurations)
    tau, low, high = tau_interval(golden, reference, resamples, confidence, seed)
    agreement, significant, pairs = decision_agreement(golden, reference, alpha, permutations, seed)
    return ViewResult(view, len(configurations), tau, low, high, agreement, significant, pairs)


def configuration_values(
    results: pd.DataFrame, qualified: list[str], configurations: list[str]
) -> dict[str, dict[str, float]]:
    """{configuration: {<query set>.<metric>: mean over its questions with a value}}."""
    values: dict[str, dict[str, float]] = {name: {} for name in configurations}
    for name in qualified:
        for configuration, mean in zip(
            configurations,
            config_means(question_matrix(results, name, configurations)),
            strict=True,
        ):
            values[configuration][name] = float(mean)
    return values


def payload(
    views: list[ViewResult], configurations: list[dict], values: dict[str, dict[str, float]]
) -> dict:
    """The --json document."""
    return {
        "views": {
            result.view.name: {
                "golden": result.view.golden,
                "reference": result.view.reference,
                "tau": _number(result.tau),
                "tau_low": _number(result.tau_low),
                "tau_high": _number(result.tau_high),
                "agreement": _number(result.agreement),
                "pairs_significant": result.pairs_significant,
                "pairs": result.pairs,
                "configurations": result.configurations,
            }
            for result in views
        },
        "configurations": [
            {
                **configuration,
                "values": {k: _number(v) for k, v in values[configuration["name"]].items()},
            }
            for configuration in configurations
        ],
    }


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def cell(text: str) -> str:
    """Text for a Markdown table cell: a pipe would end the cell."""
    return text.replace("|", "\\|")


def render_markdown(
    views: list[ViewResult],
    skipped: list[str],
    configurations: list[dict],
    values: dict[str, dict[str, float]],
    confidence: float,
    alpha: float,
) -> str:
    lines = ["### goldenset calibrate", ""]
    lines.append(
        "| view | golden set | reference | configurations | Kendall tau | "
        f"{confidence:.0%} interval | significant pairs | agreement |"
    )
    lines.append("|---|---|---|---:|---:|---:|---:|---:|")
    for result in views:
        agreement = "-" if math.isnan(result.agreement) else f"{result.agreement:.2f}"
        lines.append(
            f"| {result.view.name} | {result.view.golden} | {result.view.reference} | "
            f"{result.configurations} | {result.tau:.3f} | "
            f"[{result.tau_low:.3f}, {result.tau_high:.3f}] | "
            f"{result.pairs_significant} of {result.pairs} | {agreement} |"
        )
    lines += [f"- {line}" for line in skipped]
    columns = list(dict.fromkeys(name for row in values.values() for name in row))
    lines += ["", "| configuration | " + " | ".join(columns) + " |"]
    lines.append("|---|" + "---:|" * len(columns))
    for configuration in configurations:
        row = values[configuration["name"]]
        cells = [f"{row[name]:.4f}" if name in row else "-" for name in columns]
        lines.append(f"| {cell(configuration['name'])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"<sub>Tau: scipy's Kendall tau-b of the configuration means; interval: percentile "
        f"bootstrap, golden-set and reference questions resampled independently. Agreement: of "
        f"the pairs whose reference difference has p < {alpha:g} (paired randomization test of "
        "`goldenset compare`), the share where the golden set picks the same winner.</sub>",
    ]
    return "\n".join(lines) + "\n"
