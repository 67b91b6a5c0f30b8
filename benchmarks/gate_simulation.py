"""How often the gate of `goldenset compare` fails a change that does nothing, and how often it
catches a real drop: Holm over the gated metrics against each metric at alpha uncorrected.

Each run draws per-question differences of ``--metrics`` metrics on ``--questions`` questions
(60% of questions unchanged, the others normal with the overall sd ``--sd``; the metrics share a
fraction ``--correlation`` of their variance), tests each metric with the very function compare
calls (goldenset.core.stats.randomization_test, ``--permutations`` random sign flips), and fails the
build as compare does: a gated metric whose Holm-adjusted p is below alpha and whose mean dropped.

Run: PYTHONPATH=src python benchmarks/gate_simulation.py [--runs 2000] [--permutations 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from goldenset.core.stats import holm_adjusted, randomization_test

MOVED = 0.4  # share of questions whose metric changes at all between two runs


def draw(rng: np.random.Generator, args: argparse.Namespace, drops: np.ndarray) -> np.ndarray:
    """(metrics, questions) differences with mean -drops[m] and sd args.sd, symmetric at 0."""
    shape = (args.metrics, args.questions)
    mixed = np.sqrt(args.correlation) * rng.standard_normal(args.questions) + np.sqrt(
        1 - args.correlation
    ) * rng.standard_normal(shape)
    moved = rng.random(args.questions) < MOVED
    return (args.sd / np.sqrt(MOVED) * mixed - drops[:, None] / MOVED) * moved


def failure_rates(args: argparse.Namespace, drops: np.ndarray) -> tuple[float, float]:
    """Share of runs that fail the build: Holm-corrected gate, and uncorrected per metric."""
    rng = np.random.default_rng(args.seed)
    zeros = np.zeros(args.questions)
    holm = uncorrected = 0
    for run in range(args.runs):
        differences = draw(rng, args, drops)
        tests = [randomization_test(zeros, d, args.permutations, run) for d in differences]
        p_values = np.array([test.p_value for test in tests])
        dropped = np.array([test.statistic < 0 for test in tests])
        holm += bool(((holm_adjusted(p_values) < args.alpha) & dropped).any())
        uncorrected += bool(((p_values < args.alpha) & dropped).any())
    return holm / args.runs, uncorrected / args.runs


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=2000)
    options.add_argument("--metrics", type=int, default=4)
    options.add_argument("--questions", type=int, default=300)
    options.add_argument("--sd", type=float, default=0.35, help="sd of a per-question difference")
    options.add_argument("--correlation", type=float, default=0.0)
    options.add_argument("--drop", type=float, default=0.05, help="mean drop of a real change")
    options.add_argument("--alpha", type=float, default=0.05)
    options.add_argument("--permutations", type=int, default=2000)
    options.add_argument("--seed", type=int, default=0)
    args = options.parse_args()
    error = np.sqrt(args.alpha * (1 - args.alpha) / args.runs)
    print(
        f"{args.runs} runs, {args.metrics} gated metrics, {args.questions} questions, sd "
        f"{args.sd}, correlation {args.correlation}, alpha {args.alpha} (Monte Carlo se "
        f"{error:.4f} at alpha)"
    )
    one = np.zeros(args.metrics)
    one[0] = args.drop
    scenarios = {
        "no change": np.zeros(args.metrics),
        f"every metric -{args.drop}": np.full(args.metrics, args.drop),
        f"one metric -{args.drop}": one,
    }
    for name, drops in scenarios.items():
        start = time.perf_counter()
        holm, uncorrected = failure_rates(args, drops)
        print(
            f"{name:>22}: fails {holm:.4f} with Holm, {uncorrected:.4f} uncorrected "
            f"({time.perf_counter() - start:.0f} s)"
        )


if __name__ == "__main__":
    main()
