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

from goldenset.core.stats import mean_present, randomization_test, randomization_tests


@dataclass(frozen=True)
class View:
    name: str
    golden: str  # <query set>.<metric>, e.g. synthetic.ndcg@10
    reference: str  # e.g. real.ndcg@10

    def metrics(self) -> list[str]:
        return [metric_of(self.golden), metric_of(self.reference)]


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
    """Mean over the questions with a value, per configuration (row), as score takes it."""
    return np.array([mean_present(row) for row in values], dtype=float)


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


@dataclass(frozen=True)
class PairTests:
    """compare's paired test of every configuration pair (first < second): mean(second - first)
    and its two-sided p over the questions both have."""

    first: np.ndarray
    second: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray


def pair_tests(values: np.ndarray, permutations: int, seed: int) -> PairTests:
    """The paired randomization test of every pair of rows of (configurations x questions),
    vectorised over the pairs; a pair whose rows miss values is tested on the questions both
    have."""
    pairs = np.array(list(itertools.combinations(range(values.shape[0]), 2)), dtype=np.int64)
    first, second = pairs.reshape(-1, 2).T
    if first.size == 0:
        empty = np.zeros(0)
        return PairTests(first, second, empty, empty)
    differences = values[second] - values[first]
    if not np.isnan(differences).any():
        statistic, p_value, _ = randomization_tests(differences, permutations, seed)
        return PairTests(first, second, statistic, p_value)
    tests = [
        randomization_test(values[i, both], values[j, both], permutations, seed)
        for i, j, row in zip(first, second, differences, strict=True)
        for both in [~np.isnan(row)]
    ]
    return PairTests(
        first,
        second,
        np.array([test.statistic for test in tests]),
        np.array([test.p_value for test in tests]),
    )


def agreeing(means: np.ndarray, tests: PairTests, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(separated, agrees): the pairs whose test has p < alpha, and those among them whose means
    order the pair as the test's statistic does (a tie in the means agrees with nothing)."""
    separated = tests.p_value < alpha
    same = np.sign(means[tests.second] - means[tests.first]) == np.sign(tests.statistic)
    return separated, separated & same


def share(agrees: np.ndarray, separated: np.ndarray) -> float:
    count = int(separated.sum())
    return float(agrees.sum()) / count if count else math.nan


@dataclass(frozen=True)
class Decisions:
    """The configuration pairs whose reference values differ significantly (paired randomization
    test on the questions both have, p < alpha), those the golden-set means order the same way
    (a golden tie disagrees), and the golden set's own decision on each: the same paired test on
    its questions separates the pair the reference's way (right), the other way (wrong), or not
    at all (undecided), as `goldenset compare` would tell a user."""

    tests: PairTests
    separated: np.ndarray  # per pair: the reference separates it
    agrees: np.ndarray  # per pair: the golden set's means order it as the reference does
    golden_tests: PairTests  # the golden set's own paired test of every pair
    alpha: float

    @property
    def agreement(self) -> float:
        """The share of separated pairs the golden set orders alike (NaN: none separated)."""
        return share(self.agrees, self.separated)

    @property
    def significant(self) -> int:
        return int(self.separated.sum())

    @property
    def pairs(self) -> int:
        return int(self.tests.first.size)

    def misses(self) -> np.ndarray:
        """The pairs the reference separates and the golden set's means order the other way."""
        return np.flatnonzero(self.separated & ~self.agrees)

    def decided(self) -> np.ndarray:
        """Per pair: the golden set's own test separates it (p < alpha)."""
        return self.golden_tests.p_value < self.alpha

    def right(self) -> np.ndarray:
        """The separated pairs the golden set's test separates the reference's way."""
        return np.flatnonzero(self.separated & self.decided() & self._same_way())

    def wrong(self) -> np.ndarray:
        """The separated pairs the golden set's test separates the other way: a confident
        wrong call, which a user of `goldenset compare` would act on."""
        return np.flatnonzero(self.separated & self.decided() & ~self._same_way())

    def _same_way(self) -> np.ndarray:
        return np.sign(self.golden_tests.statistic) == np.sign(self.tests.statistic)

    def undecided(self) -> np.ndarray:
        """The separated pairs the golden set's test does not separate."""
        return np.flatnonzero(self.separated & ~self.decided())


def decision_agreement(
    golden: np.ndarray, reference: np.ndarray, alpha: float, permutations: int, seed: int
) -> Decisions:
    """Decision agreement of the golden set with the reference over every configuration pair,
    and the golden set's own decision on each."""
    tests = pair_tests(reference, permutations, seed)
    separated, agrees = agreeing(config_means(golden), tests, alpha)
    return Decisions(tests, separated, agrees, pair_tests(golden, permutations, seed), alpha)


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
