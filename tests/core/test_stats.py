"""Bootstrap intervals and the paired randomization test, checked against scipy.stats."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from goldenset.core.stats import (
    BLOCK_ELEMENTS,
    EXACT_MAX_N,
    bootstrap_interval,
    mean_present,
    randomization_test,
    randomization_tests,
)


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def scipy_paired_p(a: np.ndarray, b: np.ndarray, n_resamples: float, seed: int = 0) -> float:
    return stats.permutation_test(
        (b, a),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        batch=20_000,
        rng=np.random.default_rng(seed),
    ).pvalue


def metric_like(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values such as MRR or recall take: few distinct levels, many ties."""
    return rng.choice([0.0, 1 / 3, 0.5, 1.0], size=n)


@pytest.mark.parametrize("n", [300, 5000])  # one block of resamples; several blocks
def test_bootstrap_interval_is_scipy_percentile_bootstrap(n):
    values = metric_like(np.random.default_rng(n), n)
    ours = bootstrap_interval(values, 1000, 0.95, seed=7)
    # the same generator draws the same resample indices in the same blocks: same interval
    theirs = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=1000,
        batch=BLOCK_ELEMENTS // n,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, rel=1e-12)
    assert ours.high == pytest.approx(theirs.high, rel=1e-12)
    assert ours.low < values.mean() < ours.high


def test_bootstrap_interval_is_seeded_and_degenerate_cases_are_plain():
    values = np.random.default_rng(0).random(50)
    assert bootstrap_interval(values, 1000, 0.9, 3) == bootstrap_interval(values, 1000, 0.9, 3)
    assert bootstrap_interval(values, 1000, 0.9, 3) != bootstrap_interval(values, 1000, 0.9, 4)
    constant = bootstrap_interval(np.full(8, 0.25), 1000, 0.95, 0)
    assert (constant.low, constant.high) == (0.25, 0.25)
    assert math.isnan(bootstrap_interval(np.array([]), 1000, 0.95, 0).low)


@pytest.mark.parametrize("seed", range(6))
def test_exact_randomization_test_is_scipy_exact_permutation_test(seed):
    rng = np.random.default_rng(seed)
    n = EXACT_MAX_N if seed % 2 else 9
    a = metric_like(rng, n)
    b = np.clip(a + rng.choice([-0.5, 0.0, 0.0, 0.5, 1.0], size=n), 0, 1)
    if seed == 5:  # continuous values, no ties
        a, b = rng.random(n), rng.random(n) + 0.2
    ours = randomization_test(a, b, permutations=10_000, seed=0)
    assert ours.exact
    assert ours.statistic == pytest.approx(np.mean(b - a))
    assert ours.p_value == pytest.approx(scipy_paired_p(a, b, n_resamples=np.inf), abs=1e-12)


def test_identical_runs_have_p_one():
    a = metric_like(np.random.default_rng(1), 40)
    for n in (5, 40):  # exact and Monte Carlo
        result = randomization_test(a[:n], a[:n], permutations=10_000, seed=0)
        assert (result.statistic, result.p_value) == (0.0, 1.0)


@pytest.mark.parametrize("shift", [0.03, 0.08])
def test_monte_carlo_randomization_test_agrees_with_scipy_within_sampling_error(shift):
    rng = np.random.default_rng(11)
    n, permutations = 60, 10_000
    a = rng.random(n)
    b = np.clip(a + rng.normal(shift, 0.25, n), 0, 1)
    ours = randomization_test(a, b, permutations=permutations, seed=0)
    theirs = scipy_paired_p(a, b, n_resamples=permutations, seed=1)
    exact_enough = scipy_paired_p(a, b, n_resamples=400_000, seed=2)
    assert not ours.exact
    assert ours.p_value == randomization_test(a, b, permutations, seed=0).p_value
    # each p is 2 x a proportion q estimated from R draws: standard error 2 sqrt(q(1-q)/R);
    # the difference of two independent estimates within 5 standard errors of it
    q = exact_enough / 2
    tolerance = 5 * math.sqrt(2) * 2 * math.sqrt(q * (1 - q) / permutations) + 2 / permutations
    assert abs(ours.p_value - theirs) < tolerance
    assert abs(ours.p_value - exact_enough) < tolerance
    assert 0.0005 < exact_enough < 0.5  # the data are in the range where the check means much


@pytest.mark.parametrize("n", [24, 60, 200])
def test_monte_carlo_p_counts_the_observed_flip_when_every_difference_has_one_sign(n):
    # only the all-plus flip reaches the observed mean; R = 10**4 draws meet it with probability
    # under R 2**-n (0.06 % at n = 24), so the count is 0 and p = 2 (0 + 1) / (R + 1), never 0
    a = np.random.default_rng(n).random(n) * 0.5
    permutations = 10_000
    for b in (a + 0.25, a - 0.1):
        result = randomization_test(a, b, permutations=permutations, seed=0)
        assert not result.exact
        assert result.p_value == 2 / (permutations + 1)


@pytest.mark.parametrize("n", range(EXACT_MAX_N + 1, EXACT_MAX_N + 5))
def test_monte_carlo_p_just_past_the_exact_limit_is_scipy_exact_p(n):
    rng = np.random.default_rng(2)  # the seed puts p between 0.005 and 0.05 for n = 17..20
    a = rng.random(n)
    b = np.clip(a + rng.normal(0.12, 0.2, n), 0, 1)
    permutations = 100_000
    ours = randomization_test(a, b, permutations=permutations, seed=0)
    exact = scipy_paired_p(a, b, n_resamples=np.inf)
    assert not ours.exact
    # five standard errors of 2 x a proportion from R draws; small next to p itself
    q = exact / 2
    tolerance = 5 * 2 * math.sqrt(q * (1 - q) / permutations)
    assert tolerance < exact / 3
    assert abs(ours.p_value - exact) < tolerance


@pytest.mark.parametrize("n", [9, 75])  # exact; Monte Carlo
def test_many_pairs_at_once_are_each_pair_alone(n):
    # calibrate tests hundreds of configuration pairs per split of the reference: one matrix
    # product of shared sign flips must give every row the p it gets alone, to the last bit
    rng = np.random.default_rng(n)
    a = metric_like(rng, n)
    rows = np.stack([metric_like(rng, n) - a for _ in range(6)] + [np.zeros(n)])
    rows[1] = np.abs(rows[1]) + 0.3  # one sign throughout: a clear difference
    statistics, p_values, exact = randomization_tests(rows, permutations=5000, seed=3)
    assert exact == (n <= EXACT_MAX_N)
    for row, statistic, p_value in zip(rows, statistics, p_values, strict=True):
        alone = randomization_test(np.zeros(n), row, permutations=5000, seed=3)
        assert (statistic, p_value) == pytest.approx((alone.statistic, alone.p_value), abs=1e-15)
        if exact:  # and each is scipy's exact p
            assert p_value == pytest.approx(scipy_paired_p(np.zeros(n), row, np.inf), abs=1e-12)
    assert p_values[1] < 0.05 and p_values[-1] == 1.0


def test_a_mean_is_the_same_to_the_last_digit_in_any_order_of_the_questions():
    values = np.random.default_rng(3).random(997) ** 3
    values[::50] = np.nan
    orders = [np.random.default_rng(seed).permutation(values.size) for seed in range(20)]
    means = {mean_present(values[order]) for order in orders}
    assert len(means) == 1  # numpy's pairwise sum moves with the order; the exact sum does not
    kept = values[~np.isnan(values)]
    assert means.pop() == pytest.approx(kept.mean(), rel=1e-14)
    assert math.isnan(mean_present(np.array([np.nan])))
    assert len({float(np.nanmean(values[order])) for order in orders}) > 1  # the reason
