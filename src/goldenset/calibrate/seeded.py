"""calibrate's figures across seeds: each close call the reference separates counted as right,
wrong or undecided by the golden set's own test, per group, view and generate.seed, for the
report's table and metrics/calibration.json (named with the commit and the calibrated golden
set's md5, which the audit's opening quotes)."""

from __future__ import annotations

import math

from goldenset.calibrate.figures import Calibration, Calibrations, ViewResult

WHOLE_GRID = "whole grid"


def decisions(result: ViewResult) -> dict:
    """Of the pairs the reference separates, what the golden set's own test says of each."""
    return {
        "right": result.right,
        "wrong": len(result.wrong),
        "undecided": result.undecided,
        "wrong_pairs": [list(pair) for pair in result.wrong],
    }


def summary(calibrations: Calibrations, commit: str | None, golden_md5: str) -> dict:
    """metrics/calibration.json: per close-call group (the whole grid too) and view, the pooled
    and each seed's decisions and taus; named with the commit and the calibrated golden set."""
    pooled = calibrations.pooled

    def figures(result: ViewResult) -> dict:
        noise = result.noise
        return {
            "pairs_separated": result.pairs_significant,
            **{k: v for k, v in decisions(result).items() if k != "wrong_pairs"},
            "tau_golden_half": json_number(noise.tau_golden_half),
            "tau_halves": json_number(noise.tau_halves),
        }

    groups = {}
    for name in [WHOLE_GRID, *pooled.groups]:
        groups[name] = {
            view.view.name: {
                "pooled": figures(view),
                "seeds": {
                    str(seed): figures(group_views(seeded, name)[at])
                    for seed, seeded in calibrations.seeds.items()
                },
            }
            for at, view in enumerate(group_views(pooled, name))
        }
    return {
        "commit": commit,
        "golden_set_md5": golden_md5,
        "alpha": pooled.alpha,
        "seeds": {str(seed): count for seed, count in calibrations.question_counts.items()},
        "groups": groups,
    }


def group_views(calibration: Calibration, name: str) -> list[ViewResult]:
    """The views of a close-call group, or of the whole grid."""
    return calibration.views if name == WHOLE_GRID else calibration.groups[name].views


def seed_table(calibrations: Calibrations) -> list[str]:
    """Each close-call group's figures per seed, then pooled: how far its decisions swing with
    the passages drawn."""
    pooled = calibrations.pooled
    names = list(pooled.groups) or [WHOLE_GRID]
    lines = [
        "",
        "#### Across seeds: golden sets that differ only in generate.seed",
        "",
        "| group | view | seed | questions | tau golden vs half | tau half vs half | "
        "separated | right | wrong | undecided |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [
        (str(seed), calibrations.question_counts[seed], seeded)
        for seed, seeded in calibrations.seeds.items()
    ]
    rows.append(("pooled", sum(calibrations.question_counts.values()), pooled))
    for name in names:
        for at, view in enumerate(group_views(pooled, name)):
            for seed, questions, figures in rows:
                result = group_views(figures, name)[at]
                noise = result.noise
                lines.append(
                    f"| {name} | {view.view.name} | {seed} | {questions} | "
                    f"{noise.tau_golden_half:.3f} | {noise.tau_halves:.3f} | "
                    f"{result.pairs_significant} | {result.right} | {len(result.wrong)} | "
                    f"{result.undecided} |"
                )
    return lines


def json_number(value: float) -> float | None:
    """A float for JSON: NaN as null."""
    return None if math.isnan(value) else value
