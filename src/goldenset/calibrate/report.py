"""What `goldenset calibrate` shows: the --json document, the Markdown report and the rows of its
plot (golden mean against reference mean, one mark per configuration and view); the figures per
seed and metrics/calibration.json are goldenset.calibrate.seeded's."""

from __future__ import annotations

import math
from dataclasses import asdict

from goldenset.calibrate.bias import Estimate, FamilyBias
from goldenset.calibrate.figures import Calibration, Calibrations, ViewResult
from goldenset.calibrate.seeded import decisions, json_number, seed_table
from goldenset.core.markdown import table_cell


def payload(calibrations: Calibrations) -> dict:
    """The --json document: the pooled figures, and each seed's under `seeds` when there are
    several."""
    document = calibration_payload(calibrations.pooled)
    if len(calibrations.seeds) > 1:
        counts = calibrations.question_counts
        document["seeds"] = {
            str(seed): {"questions": counts[seed], **calibration_payload(figures)}
            for seed, figures in calibrations.seeds.items()
        }
    return document


def calibration_payload(calibration: Calibration) -> dict:
    values = calibration.values
    return {
        "views": {result.view.name: view_payload(result) for result in calibration.views},
        "configurations": [
            {
                **asdict(configuration),
                "values": {k: json_number(v) for k, v in values[configuration.name].items()},
            }
            for configuration in calibration.configurations
        ],
        "groups": {
            name: {
                "configurations": group.members,
                "views": {result.view.name: view_payload(result) for result in group.views},
                **({"pairs": bias_payload(group.pairs)} if group.pairs else {}),
            }
            for name, group in calibration.groups.items()
        },
        "bias": bias_payload(calibration.bias),
    }


def bias_payload(bias: dict[str, list[FamilyBias]]) -> dict:
    return {
        view: [
            {
                "chunking": row.chunking,
                "model": row.model,
                "better": row.better,
                "worse": row.worse,
                "golden": _estimate(row.golden),
                "reference": _estimate(row.reference),
                "outside": row.outside,
                "configurations": list(row.configurations),
            }
            for row in rows
        ]
        for view, rows in bias.items()
    }


def view_payload(result: ViewResult) -> dict:
    noise = result.noise
    return {
        "golden": result.view.golden,
        "reference": result.view.reference,
        "tau": json_number(result.tau),
        "tau_low": json_number(result.tau_low),
        "tau_high": json_number(result.tau_high),
        "agreement": json_number(result.agreement),
        "pairs_significant": result.pairs_significant,
        "pairs": result.pairs,
        "configurations": result.configurations,
        "misses": [list(pair) for pair in result.misses],
        **decisions(result),
        "noise": {
            "splits": noise.splits,
            "tau_halves": json_number(noise.tau_halves),
            "tau_halves_range": [json_number(v) for v in noise.tau_halves_range],
            "tau_golden_half": json_number(noise.tau_golden_half),
            "tau_golden_half_range": [json_number(v) for v in noise.tau_golden_half_range],
            "agreement_splits": noise.agreement_splits,
            "agreement_halves": json_number(noise.agreement_halves),
            "agreement_golden_half": json_number(noise.agreement_golden_half),
        },
    }


def _estimate(estimate: Estimate) -> dict:
    """Its fields, the question count under the key "questions"."""
    fields = {"questions" if k == "n_questions" else k: v for k, v in asdict(estimate).items()}
    return {k: json_number(v) if isinstance(v, float) else v for k, v in fields.items()}


def plot_rows(calibration: Calibration) -> list[dict]:
    """One row per view and configuration: its golden-set and reference means."""
    return [
        {
            "view": result.view.name,
            "configuration": configuration.name,
            "retriever": configuration.retriever,
            "chunking": configuration.chunking,
            "model": configuration.model,
            "reference": json_number(calibration.values[configuration.name][result.view.reference]),
            "golden": json_number(calibration.values[configuration.name][result.view.golden]),
        }
        for result in calibration.views
        for configuration in calibration.configurations
    ]


def render_markdown(calibrations: Calibrations) -> str:
    calibration = calibrations.pooled
    lines = ["### goldenset calibrate", ""]
    lines += verdicts(calibration)
    if len(calibrations.seeds) > 1:
        lines += seed_table(calibrations)
    lines += ["", "#### The whole grid", ""]
    lines += view_table(calibration.views, calibration.confidence, with_metrics=True)
    lines += [f"- {line}" for line in calibration.skipped]
    for name, group in calibration.groups.items():
        lines += ["", f"#### Close calls: {name} ({len(group.members)} configurations)", ""]
        lines += view_table(group.views, calibration.confidence, with_metrics=False)
        lines += misses(group.views)
        for view, rows in group.pairs.items():
            title = f"Each pair of {name}, view {view}"
            lines += bias_table(title, rows, calibration.confidence, level="#####")
    lines += noise_table(calibration)
    for view, rows in calibration.bias.items():
        title = f"Retriever-family bias, view {view}"
        lines += bias_table(title, rows, calibration.confidence)
    lines += configuration_table(calibration)
    lines += ["", footnote(calibration.alpha)]
    return "\n".join(lines) + "\n"


def verdicts(calibration: Calibration) -> list[str]:
    """First what a user about to trust the golden set with a decision asks: per close-call group
    (the whole grid when there is none) and view, does it rank as well as half the reference,
    which decisions does it reverse, and where does it favour a retriever family?"""
    groups = {name: (group.members, group.views) for name, group in calibration.groups.items()}
    every = [c.name for c in calibration.configurations]
    lines = []
    for name, (chosen, views) in (groups or {"whole grid": (every, calibration.views)}).items():
        for result in views:
            noise = result.noise
            reached = "at or above" if noise.tau_golden_half >= noise.tau_halves else "below"
            flagged = [
                row
                for row in calibration.bias.get(result.view.name, [])
                if row.outside and set(row.configurations) <= set(chosen)
            ]
            line = (
                f"- **{name}, {result.view.name}**: tau against a reference half "
                f"{noise.tau_golden_half:.2f}, {reached} the halves' own {noise.tau_halves:.2f}; "
                f"of the {result.pairs_significant} pairs the reference separates, "
                f"{decision_counts(result)} ({len(result.misses)} reversed by the means)"
            )
            if flagged:
                line += f"; family bias outside the reference's interval {len(flagged)} times"
            lines.append(line)
    return lines


def decision_counts(result: ViewResult) -> str:
    return f"{result.right} right, {len(result.wrong)} wrong, {result.undecided} undecided"


def view_table(views: list[ViewResult], confidence: float, *, with_metrics: bool) -> list[str]:
    metric_heads = "golden set | reference | " if with_metrics else ""
    lines = [
        f"| view | {metric_heads}configurations | Kendall tau | {confidence:.0%} interval | "
        "significant pairs | agreement |",
        "|---|" + ("---|---|" if with_metrics else "") + "---:|---:|---:|---:|---:|",
    ]
    for result in views:
        metrics = f"{result.view.golden} | {result.view.reference} | " if with_metrics else ""
        lines.append(
            f"| {result.view.name} | {metrics}{result.configurations} | {result.tau:.3f} | "
            f"[{result.tau_low:.3f}, {result.tau_high:.3f}] | "
            f"{result.pairs_significant} of {result.pairs} | {_share(result.agreement)} |"
        )
    return lines


def misses(views: list[ViewResult]) -> list[str]:
    """The pairs the reference separates and the golden set orders the other way, per view; a
    wrong call (the golden set's own test separates the pair the other way) marked."""
    lines = []
    for result in views:
        if result.misses:
            lines += ["", f"{result.view.name}: the golden set reverses {len(result.misses)}:"]
            lines += [
                f"- {table_cell(winner)} > {table_cell(loser)}"
                + (
                    " (**wrong**: the golden set's test says the opposite)"
                    if (winner, loser) in result.wrong
                    else ""
                )
                for winner, loser in result.misses
            ]
    return lines


def noise_table(calibration: Calibration) -> list[str]:
    lines = [
        "",
        "#### Noise ceiling: the reference against itself",
        "",
        f"| configurations | view | tau half vs half | {calibration.confidence:.0%} range | "
        f"tau golden vs half | {calibration.confidence:.0%} range | "
        "agreement half vs half | agreement golden vs half |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    groups = [("whole grid", calibration.views)] + [
        (name, group.views) for name, group in calibration.groups.items()
    ]
    for name, views in groups:
        for result in views:
            noise = result.noise
            lines.append(
                f"| {name} | {result.view.name} | {noise.tau_halves:.3f} | "
                f"{_range(noise.tau_halves_range)} | {noise.tau_golden_half:.3f} | "
                f"{_range(noise.tau_golden_half_range)} | {_share(noise.agreement_halves)} | "
                f"{_share(noise.agreement_golden_half)} |"
            )
    return lines


def bias_table(
    title: str, rows: list[FamilyBias], confidence: float, level: str = "####"
) -> list[str]:
    lines = [
        "",
        f"{level} {title}: mean per-question difference, {confidence:.0%} interval",
        "",
        "| chunking | model | difference | golden set | reference | golden mean |",
        "|---|---|---|---:|---:|---|",
    ]
    for row in rows:
        verdict = "**outside**" if row.outside else "inside"
        lines.append(
            f"| {row.chunking} | {row.model} | {row.better} − {row.worse} | "
            f"{_signed(row.golden)} | {_signed(row.reference)} | {verdict} |"
        )
    return lines


def configuration_table(calibration: Calibration) -> list[str]:
    values = calibration.values
    columns = list(dict.fromkeys(name for row in values.values() for name in row))
    lines = ["", "| configuration | " + " | ".join(columns) + " |"]
    lines.append("|---|" + "---:|" * len(columns))
    for configuration in calibration.configurations:
        row = values[configuration.name]
        cells = [f"{row[name]:.4f}" if name in row else "-" for name in columns]
        lines.append(f"| {table_cell(configuration.name)} | " + " | ".join(cells) + " |")
    return lines


def footnote(alpha: float) -> str:
    return (
        "<sub>Tau: scipy's Kendall tau-b of the configuration means; interval: percentile "
        "bootstrap, golden-set and reference questions resampled independently. Agreement: of "
        f"the pairs whose reference difference has p < {alpha:g} (paired randomization test of "
        "`goldenset compare`), the share where the golden set's means pick the same winner. "
        "Right, wrong, undecided: of those pairs, the golden set's own paired test separates "
        f"the pair (p < {alpha:g}) the reference's way, the other way, or not at all. Noise "
        "ceiling: the reference questions split at random into halves; when the golden set's "
        "agreement with a half reaches the halves' agreement with each other, it ranks the "
        "configurations as well as half the reference questions do. Family bias: outside when "
        "the golden mean lies outside the reference's interval.</sub>"
    )


def _share(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def _range(bounds: tuple[float, float]) -> str:
    low, high = bounds
    return "-" if math.isnan(low) else f"[{low:.3f}, {high:.3f}]"


def _signed(estimate: Estimate) -> str:
    return f"{estimate.mean:+.3f} [{estimate.low:+.3f}, {estimate.high:+.3f}]"
