"""The figures of `goldenset calibrate` on a grid the size of the shipped one, timed against a
per-pair loop.

Baseline: the paired randomization test run pair by pair (goldenset.core.stats.randomization_test,
as decision agreement ran before its sign flips were shared by all pairs). Measured: the same
p-values from one matrix product per block of shared sign flips (calibrate.agreement.pair_tests),
and the whole noise ceiling of one view (`--splits` halves, `--agreement-splits` of them tested
both ways). Synthetic (configurations x questions) values; one process, so machine noise cancels.

    python benchmarks/calibrate_bench.py --configurations 45 --questions 300
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import yaml

from goldenset.calibrate.agreement import pair_tests
from goldenset.calibrate.noise import noise_ceiling
from goldenset.calibrate.params import CalibrateParams
from goldenset.core.stats import randomization_test

ROOT = Path(__file__).resolve().parents[1]  # the repository: its params.yaml gives the grid


def timed(work):
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configurations", type=int, default=45)
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--agreement-splits", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    levels = np.linspace(0.5, 0.8, args.configurations)[:, None]
    values = np.clip(levels + rng.normal(0, 0.3, (args.configurations, args.questions)), 0, 1)
    golden = np.clip(levels + rng.normal(0, 0.3, (args.configurations, 135)), 0, 1)

    def loop() -> np.ndarray:
        pairs = itertools.combinations(range(args.configurations), 2)
        return np.array(
            [
                randomization_test(values[i], values[j], args.permutations, 0).p_value
                for i, j in pairs
            ]
        )

    expected, baseline = timed(loop)
    tests, shared = timed(lambda: pair_tests(values, args.permutations, 0))
    assert np.allclose(tests.p_value, expected, atol=1e-12), "the shared flips changed a p-value"
    pairs = len(expected)
    print(f"{pairs} pairs x {args.questions} questions x {args.permutations} sign flips")
    print(f"  per-pair loop (baseline): {baseline:7.2f} s")
    print(f"  shared sign flips:        {shared:7.2f} s   ({baseline / shared:.1f}x faster)")
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())["calibrate"]
    settings = CalibrateParams.model_validate(
        {
            **raw,
            "permutations": args.permutations,
            "splits": args.splits,
            "agreement_splits": args.agreement_splits,
        }
    )
    _, ceiling = timed(lambda: noise_ceiling(golden, values, settings))
    print(
        f"  noise ceiling of one view ({args.splits} splits, {args.agreement_splits} tested "
        f"both ways): {ceiling:.2f} s"
    )


if __name__ == "__main__":
    main()
