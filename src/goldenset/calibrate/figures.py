"""A view's figures over some configurations (the whole grid or a close-call group): Kendall
tau and its interval, decision agreement and the pairs the golden set gets wrong, and the
reference's noise ceiling."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from goldenset.calibrate.agreement import (
    PairTests,
    View,
    configuration_values,
    decision_agreement,
    question_matrix,
    tau_interval,
)
from goldenset.calibrate.bias import FamilyBias, family_bias, group_pairs_bias
from goldenset.calibrate.groups import MODEL_FREE, Configuration, members
from goldenset.calibrate.noise import NoiseCeiling, noise_ceiling
from goldenset.calibrate.params import CalibrateParams


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
    misses: list[tuple[str, str]]  # (the reference's winner, its loser) the golden set reverses
    noise: NoiseCeiling
    # of the pairs_significant: the golden set's own test separates them the reference's way
    # (right), the other way (wrong: listed, the reference's winner first), or not (undecided)
    right: int
    wrong: list[tuple[str, str]]
    undecided: int


def calibrate_view(
    results: pd.DataFrame, view: View, configurations: list[str], settings: CalibrateParams
) -> ViewResult:
    golden = question_matrix(results, view.golden, configurations)
    reference = question_matrix(results, view.reference, configurations)
    seed = settings.seed
    tau, low, high = tau_interval(golden, reference, settings.resamples, settings.confidence, seed)
    decisions = decision_agreement(golden, reference, settings.alpha, settings.permutations, seed)
    misses = [winner_first(configurations, decisions.tests, i) for i in decisions.misses()]
    return ViewResult(
        view,
        len(configurations),
        tau,
        low,
        high,
        decisions.agreement,
        decisions.significant,
        decisions.pairs,
        misses,
        noise_ceiling(golden, reference, settings),
        len(decisions.right()),
        [winner_first(configurations, decisions.tests, i) for i in decisions.wrong()],
        len(decisions.undecided()),
    )


def winner_first(configurations: list[str], tests: PairTests, index: int) -> tuple[str, str]:
    """(the reference's winner, the loser) of one tested pair."""
    first, second = configurations[tests.first[index]], configurations[tests.second[index]]
    return (second, first) if tests.statistic[index] > 0 else (first, second)


@dataclass(frozen=True)
class GroupResult:
    members: list[str]
    views: list[ViewResult]
    pairs: dict[str, list[FamilyBias]]  # view name -> each pair's bias (calibrate.groups.*.pairs)


@dataclass(frozen=True)
class Calibration:
    views: list[ViewResult]  # over the whole grid
    skipped: list[str]  # one line per view whose metrics are absent
    configurations: list[Configuration]
    values: dict[str, dict[str, float]]  # configuration -> <query set>.<metric> -> mean
    groups: dict[str, GroupResult]
    bias: dict[str, list[FamilyBias]]  # view name -> rows
    confidence: float
    alpha: float


def assess(
    results: pd.DataFrame,
    configurations: list[Configuration],
    views: list[View],
    skipped: list[str],
    settings: CalibrateParams,
) -> Calibration:
    """Every figure of calibrate from the per-question rows of the configurations: each view
    over the whole grid and over each close-call group, and the family bias of each view."""
    # the whole grid: the variants are shown in the groups that name them
    names = [c.name for c in configurations if c.retriever in settings.retrievers]
    groups = {
        name: members(group, configurations, settings.retrievers)
        for name, group in settings.groups.items()
    }
    grouped = [label for group in settings.groups.values() for label in group.models or []]
    models = list(dict.fromkeys(grouped or [c.model for c in configurations]))
    models = [model for model in models if model != MODEL_FREE]
    shown = [name for view in views for name in (view.golden, view.reference)]
    return Calibration(
        [calibrate_view(results, view, names, settings) for view in views],
        skipped,
        configurations,
        configuration_values(results, list(dict.fromkeys(shown)), [c.name for c in configurations]),
        {
            name: GroupResult(
                chosen,
                [calibrate_view(results, view, chosen, settings) for view in views],
                group_pairs(
                    results, views, configurations, chosen, settings.groups[name].pairs, settings
                ),
            )
            for name, chosen in groups.items()
        },
        {view.name: family_bias(results, view, configurations, models, settings) for view in views},
        settings.confidence,
        settings.alpha,
    )


def group_pairs(
    results: pd.DataFrame,
    views: list[View],
    configurations: list[Configuration],
    chosen: list[str],
    wanted: bool,
    settings: CalibrateParams,
) -> dict[str, list[FamilyBias]]:
    """Each view's pair biases of the chosen configurations, when the group asks for them."""
    if not wanted:
        return {}
    picked = [c for c in configurations if c.name in chosen]
    return {view.name: group_pairs_bias(results, view, picked, settings) for view in views}


@dataclass(frozen=True)
class SeedRows:
    """Which golden questions of the results each calibrated generate.seed wrote."""

    golden_set: str  # the golden set's name in the results' query_set column
    qids: dict[int, list[str]]  # seed -> its questions

    def of(self, results: pd.DataFrame, seed: int) -> pd.DataFrame:
        """The results less the golden questions of the other seeds."""
        other = (results["query_set"] == self.golden_set) & ~results["qid"].isin(self.qids[seed])
        return results[~other]


@dataclass(frozen=True)
class Calibrations:
    """calibrate's figures on the seeds' golden sets pooled (their questions as one set), and on
    each seed's own; with one seed, that seed's figures are the pooled ones."""

    pooled: Calibration
    seeds: dict[int, Calibration]
    question_counts: dict[int, int]  # seed -> its golden questions scored


def assess_seeds(
    results: pd.DataFrame,
    configurations: list[Configuration],
    views: list[View],
    skipped: list[str],
    settings: CalibrateParams,
    seeds: SeedRows,
) -> Calibrations:
    """assess on the pooled rows, and on each seed's when there are several."""
    pooled = assess(results, configurations, views, skipped, settings)
    by_seed = {seed: pooled for seed in seeds.qids}
    if len(seeds.qids) > 1:
        by_seed = {
            seed: assess(seeds.of(results, seed), configurations, views, skipped, settings)
            for seed in seeds.qids
        }
    return Calibrations(pooled, by_seed, {seed: len(qids) for seed, qids in seeds.qids.items()})
