"""The reference set's own noise: how well does half of it agree with the other half?

With a finite reference set even real queries disagree with each other. Split its questions at
random into two halves of equal size, rank the configurations by each half, and compare: that is
the ceiling a golden set can reach against one half. The golden set is as good as the reference
queries when its agreement with a half reaches the half-against-half agreement.

Split s takes `numpy.random.default_rng(seed).permutation(questions)` (the generator's s-th
permutation); the first half is its first questions // 2 entries, the second half the next as
many (an odd question out sits out). Each tau comes with the central `confidence` range of its
values over the splits: how far one draw of half the reference can move it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.stats import kendalltau

from goldenset.calibrate.agreement import agreeing, config_means, pair_tests
from goldenset.calibrate.params import CalibrateParams


@dataclass(frozen=True)
class NoiseCeiling:
    splits: int
    tau_halves: float  # one reference half's ranking against the other's, mean over the splits
    tau_golden_half: float  # the whole golden set's ranking against one half's (both, every split)
    tau_halves_range: tuple[float, float]  # central `confidence` range over the splits
    tau_golden_half_range: tuple[float, float]
    agreement_splits: int  # the first splits, both ways: of the pairs one half separates...
    agreement_halves: float  # ...the share the other half's means order the same way
    agreement_golden_half: float  # ...the share the golden set's means order the same way


def halves(n_questions: int, splits: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The question columns of each split's two halves."""
    rng = np.random.default_rng(seed)
    half = n_questions // 2
    for _ in range(splits):
        order = rng.permutation(n_questions)
        yield order[:half], order[half : 2 * half]


def tau(first: np.ndarray, second: np.ndarray) -> float:
    """scipy's Kendall tau-b of two rankings (NaN when either is constant)."""
    return float(kendalltau(first, second).statistic)


def noise_ceiling(
    golden: np.ndarray, reference: np.ndarray, settings: CalibrateParams
) -> NoiseCeiling:
    """The half-against-half figures of one view over some configurations: golden and reference
    are (configurations x questions) matrices."""
    golden_means = config_means(golden)
    taus_halves, taus_golden = [], []
    separated = agrees_other = agrees_golden = 0
    splits = halves(reference.shape[1], settings.splits, settings.seed)
    for number, (first, second) in enumerate(splits):
        means = [config_means(reference[:, side]) for side in (first, second)]
        taus_halves.append(tau(*means))
        taus_golden += [tau(golden_means, half) for half in means]
        if number >= settings.agreement_splits:
            continue
        for side, other in [(first, means[1]), (second, means[0])]:
            tests = pair_tests(reference[:, side], settings.permutations, settings.seed)
            by_half, half_agrees = agreeing(other, tests, settings.alpha)
            separated += int(by_half.sum())
            agrees_other += int(half_agrees.sum())
            agrees_golden += int(agreeing(golden_means, tests, settings.alpha)[1].sum())
    return NoiseCeiling(
        settings.splits,
        _mean(taus_halves),
        _mean(taus_golden),
        central_range(taus_halves, settings.confidence),
        central_range(taus_golden, settings.confidence),
        min(settings.agreement_splits, settings.splits),
        agrees_other / separated if separated else math.nan,
        agrees_golden / separated if separated else math.nan,
    )


def central_range(values: list[float], confidence: float) -> tuple[float, float]:
    """The central `confidence` range of the defined values; NaNs when there are none."""
    defined = np.array([value for value in values if not math.isnan(value)])
    if not defined.size:
        return math.nan, math.nan
    low, high = np.percentile(defined, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(low), float(high)


def _mean(values: list[float]) -> float:
    """Mean of the defined values (a constant half ranks nothing); NaN when there are none."""
    defined = [value for value in values if not math.isnan(value)]
    return sum(defined) / len(defined) if defined else math.nan
