"""Speed of the bootstrap interval and the paired randomization test against scipy.stats.

Same data, same resample counts, one process: ours (goldenset.core.stats) against
scipy.stats.bootstrap(method="percentile") and scipy.stats.permutation_test(
permutation_type="samples"), and against a plain per-resample Python loop.

Run: PYTHONPATH=src python benchmarks/stats_bench.py [--questions N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from goldenset.core.stats import BLOCK_ELEMENTS, bootstrap_interval, randomization_test


def timed(function, repeats: int = 3) -> tuple[float, object]:
    """Best of a few runs: the first pays for page faults and caches."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def loop_bootstrap(values: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = [values[rng.integers(0, values.size, values.size)].mean() for _ in range(resamples)]
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=2_000)
    parser.add_argument("--permutations", type=int, default=10_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n = args.questions
    a = rng.choice([0.0, 1 / 3, 0.5, 1.0], size=n)
    b = np.clip(a + rng.normal(0.01, 0.3, n), 0, 1)

    ours, interval = timed(lambda: bootstrap_interval(b - a, args.resamples, 0.95, 0))
    scipy_s, theirs = timed(
        lambda: (
            stats.bootstrap(
                (b - a,),
                np.mean,
                n_resamples=args.resamples,
                batch=BLOCK_ELEMENTS // n,
                method="percentile",
                rng=np.random.default_rng(0),
            ).confidence_interval
        )
    )
    loop_s, _ = timed(lambda: loop_bootstrap(b - a, args.resamples, 0))
    print(f"bootstrap, {n:,} questions x {args.resamples:,} resamples:")
    print(f"  ours {ours:.2f} s  {interval}")
    print(f"  scipy.stats.bootstrap {scipy_s:.2f} s ({scipy_s / ours:.1f}x ours)  {theirs}")
    print(f"  per-resample loop {loop_s:.2f} s ({loop_s / ours:.1f}x ours)")

    ours, test = timed(lambda: randomization_test(a, b, args.permutations, 0))
    scipy_s, result = timed(
        lambda: stats.permutation_test(
            (b, a),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=args.permutations,
            batch=BLOCK_ELEMENTS // n,  # the same memory bound as ours
            rng=np.random.default_rng(0),
        )
    )
    print(f"randomization test, {n:,} pairs x {args.permutations:,} sign flips:")
    print(f"  ours {ours:.2f} s  p={test.p_value:.4g}")
    print(
        f"  scipy.stats.permutation_test {scipy_s:.2f} s ({scipy_s / ours:.1f}x ours)  "
        f"p={result.pvalue:.4g}"
    )


if __name__ == "__main__":
    main()
