"""Uncertainty of a mean over questions: bootstrap intervals and a paired randomization test.

Both are vectorised and seeded (numpy Generator), so the same data and seed give the same
numbers on every machine. Conventions follow scipy.stats, which the tests check them against:

- :func:`bootstrap_interval` is ``scipy.stats.bootstrap(method="percentile")`` of the mean: the
  resample indices are drawn in the same blocks from the same generator, so the intervals agree
  exactly for the same seed (and ``batch=BLOCK_ELEMENTS // n``).
- :func:`randomization_test` is ``scipy.stats.permutation_test(permutation_type="samples")`` of
  paired values with the mean difference as statistic, two-sided: every sign flip of the
  per-question differences when there are at most ``EXACT_MAX_N`` of them (p exact), otherwise
  ``permutations`` random sign flips and p = (count + 1) / (permutations + 1).
- :func:`holm_adjusted` is Holm's step-down adjustment (``statsmodels`` ``multipletests(method=
  "holm")``): rejecting where the adjusted p is below alpha keeps the chance of any false
  rejection in the family at most alpha, whatever the dependence between the tests.

And :func:`jaccard`, the similarity of two sets by which near-duplicate documents (their word
shingles) and passages (their content words) are found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Resample indices are drawn this many at a time (32 MiB of int64), which bounds memory for any
# number of questions; below it a single block holds every resample.
BLOCK_ELEMENTS = 1 << 22
# 2**16 sign vectors of 16 values: the exact null distribution costs about 8 MiB.
EXACT_MAX_N = 16


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class TestResult:
    statistic: float  # mean of the differences
    p_value: float
    exact: bool  # every sign flip enumerated


def mean_present(values: np.ndarray) -> float:
    """Mean of the values that are not NaN (NaN when none is). Its sum is exact (math.fsum), so
    the mean is the same to the last digit in whatever order the questions come: score and
    calibrate give a configuration the very same figure."""
    kept = values[~np.isnan(values)]
    return math.fsum(kept) / kept.size if kept.size else float("nan")


def bootstrap_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Mean of each bootstrap resample (questions drawn with replacement), in blocks."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    block = max(1, BLOCK_ELEMENTS // max(n, 1))
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        means[start : start + rows] = values[rng.integers(0, n, (rows, n))].mean(axis=-1)
    return means


def bootstrap_interval(
    values: np.ndarray, resamples: int, confidence: float, seed: int
) -> Interval:
    """Percentile bootstrap interval of the mean; NaN bounds when there are no values."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return Interval(float("nan"), float("nan"))
    means = bootstrap_means(values, resamples, np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return Interval(float(low), float(high))


def randomization_test(a: np.ndarray, b: np.ndarray, permutations: int, seed: int) -> TestResult:
    """Two-sided paired randomization test of mean(b - a) = 0 by sign flips of the differences."""
    differences = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    if differences.size == 0:
        return TestResult(float("nan"), float("nan"), True)
    statistics, p_values, exact = randomization_tests(differences[None, :], permutations, seed)
    return TestResult(float(statistics[0]), float(p_values[0]), exact)


def randomization_tests(
    differences: np.ndarray, permutations: int, seed: int
) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`randomization_test` of each row of paired differences (rows x questions, no NaN),
    all rows flipped by the same signs: (mean differences, two-sided p-values, exact).

    Row by row the result is the one-row test's, since that test draws the same signs from the
    same seed; sharing them turns the null distributions of many pairs into one matrix product."""
    differences = np.asarray(differences, dtype=np.float64)
    rows_count, n = differences.shape
    observed = differences.mean(axis=1)
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_ELEMENTS // max(n, 1))
    exact = n <= EXACT_MAX_N
    below = np.zeros(rows_count, dtype=np.int64)
    above = np.zeros(rows_count, dtype=np.int64)
    total = 2**n if exact else permutations
    # scipy's relative tolerance: null values equal to the observed one up to rounding count
    gamma = np.abs(np.finfo(np.float64).eps * 100 * observed)
    for start in range(0, total, block):
        rows = min(block, total - start)
        if exact:
            bits = (np.arange(start, start + rows, dtype=np.int64)[:, None] >> np.arange(n)) & 1
            signs = (1 - 2 * bits).astype(np.float64)
        else:
            signs = (1 - 2 * rng.integers(0, 2, (rows, n))).astype(np.float64)
        null = signs @ differences.T / n  # (flips x rows)
        below += np.count_nonzero(null <= observed + gamma, axis=0)
        above += np.count_nonzero(null >= observed - gamma, axis=0)
    adjustment = 0 if exact else 1
    p_less = (below + adjustment) / (total + adjustment)
    p_greater = (above + adjustment) / (total + adjustment)
    return observed, np.minimum(1.0, 2.0 * np.minimum(p_less, p_greater)), exact


def holm_adjusted(p_values: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values, in the input order: max over j <= i of (m - j + 1) p_(j), <= 1."""
    p_values = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p_values, kind="stable")
    scaled = (p_values.size - np.arange(p_values.size)) * p_values[order]
    adjusted = np.empty_like(p_values)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def jaccard(a: set[str], b: set[str]) -> float:
    """|a & b| / |a | b|; two empty sets are alike (1.0)."""
    return len(a & b) / len(a | b) if a or b else 1.0
