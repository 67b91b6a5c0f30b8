"""The `goldenset` command. Subcommands:

compare [REV_A] [REV_B]   paired comparison of two runs, read through DVC (exit 1: regression)
calibrate                 does the golden set rank configurations as the reference query sets do?
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from goldenset.compare import (
    DifferentQuestions,
    Settings,
    Texts,
    compare,
    metric_columns,
    most_regressed,
    pair,
    render_markdown,
    render_text,
)
from goldenset.errors import GoldensetError
from goldenset.revisions import label, read_results, read_texts

# Exit statuses of `goldenset compare`
NO_REGRESSION, REGRESSION, REFUSED = 0, 1, 2


def _budget(text: str) -> tuple[str | None, float]:
    """`0.01` (every metric) or `ndcg@10=0.01` (one metric)."""
    metric, _, value = text.rpartition("=")
    try:
        budget = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if budget < 0:
        raise argparse.ArgumentTypeError(f"a budget is an allowed drop, >= 0: {text!r}")
    return (metric or None), budget


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="goldenset", description=__doc__.splitlines()[0])
    commands = main.add_subparsers(dest="command", required=True)
    cmp = commands.add_parser(
        "compare",
        help="compare the per-question results of two revisions",
        description="Paired comparison of data/results.parquet at two git revisions, read "
        "through DVC (run `dvc pull` first where the outputs are not local). Exit status: 0 no "
        "significant regression beyond the budget, 1 a regression, 2 refused or bad input.",
    )
    cmp.add_argument("rev_a", nargs="?", default="HEAD", help="baseline (default: HEAD)")
    cmp.add_argument(
        "rev_b", nargs="?", default="workspace", help="candidate (default: the workspace)"
    )
    cmp.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    cmp.add_argument(
        "--budget",
        type=_budget,
        action="append",
        default=[],
        metavar="[METRIC=]DROP",
        help="allowed drop of a mean before a significant one fails, for every metric or one "
        "(repeatable; default 0)",
    )
    cmp.add_argument("--metrics", nargs="+", help="per-question metrics to compare (default: all)")
    cmp.add_argument("--format", choices=["markdown", "text"], default="text")
    cmp.add_argument("--show", type=int, default=3, help="most regressed questions per retriever")
    cmp.add_argument(
        "--intersect",
        action="store_true",
        help="compare the questions both runs share instead of refusing different sets",
    )
    cmp.add_argument("--confidence", type=float, default=0.95)
    cmp.add_argument("--resamples", type=int, default=2000, help="paired bootstrap resamples")
    cmp.add_argument(
        "--permutations", type=int, default=10000, help="random sign flips above 16 questions"
    )
    cmp.add_argument("--seed", type=int, default=0)
    cmp.add_argument("--repo", default=".", help="the project (default: the current folder)")
    cal = commands.add_parser(
        "calibrate",
        help="rank configurations by the golden set and by reference query sets",
        description="Run every configuration of the `calibrate` params (chunkings x models x "
        "retrievers) through the chunk, embed and score stages in a scratch copy of the project, "
        "then, per view, Kendall tau between the golden set's and a reference set's ranking of "
        "them (with a bootstrap interval) and the decision agreement. Prints a Markdown report.",
    )
    cal.add_argument("--repo", default=".", help="the project (default: the current folder)")
    cal.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    cal.add_argument(
        "--workdir", type=Path, help="scratch folder to run in and keep (default: a temporary one)"
    )
    return main


def run_calibrate(args: argparse.Namespace) -> int:
    from goldenset.calibration_runs import calibrate  # loads the stages and their models

    markdown, figures = calibrate(Path(args.repo), args.workdir)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    sys.stdout.write(markdown)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    settings = _settings(args)
    revs = [None if rev == "workspace" else rev for rev in (args.rev_a, args.rev_b)]
    labels = (label(revs[0]), label(revs[1]))
    results_a, results_b = (read_results(rev, args.repo) for rev in revs)
    paired = pair(results_a, results_b, labels, intersect=args.intersect)
    metrics = [name for name in metric_columns(results_a) if name in set(results_b.columns)]
    if args.metrics:
        unknown = sorted(set(args.metrics) - set(metrics))
        if unknown:
            raise GoldensetError(
                f"--metrics: {', '.join(unknown)} not in both runs' results; they have "
                f"{', '.join(metrics)} (score.headline)"
            )
        metrics = list(args.metrics)
    rows = compare(paired, metrics, settings)
    # the first metric the runs have values of (doc_ metrics are empty on real queries alone)
    shown = next((m for m in metrics if paired[f"{m}_b"].notna().any()), metrics[0])
    regressed = most_regressed(paired, shown, args.show) if args.show > 0 else []
    texts = (
        read_texts(revs[1], args.repo, {item.query_set for item in regressed})
        if regressed
        else Texts()
    )
    render = render_markdown if args.format == "markdown" else render_text
    sys.stdout.write(render(rows, regressed, texts, labels, settings))
    return REGRESSION if any(row.regression for row in rows) else NO_REGRESSION


def _settings(args: argparse.Namespace) -> Settings:
    if not 0 < args.alpha < 1 or not 0 < args.confidence < 1:
        raise GoldensetError("--alpha and --confidence must lie between 0 and 1")
    if args.resamples < 1 or args.permutations < 1:
        raise GoldensetError("--resamples and --permutations must be positive")
    default = 0.0
    budgets = {}
    for metric, value in args.budget:
        if metric is None:
            default = value
        else:
            budgets[metric] = value
    return Settings(
        alpha=args.alpha,
        budgets=budgets,
        default_budget=default,
        confidence=args.confidence,
        resamples=args.resamples,
        permutations=args.permutations,
        seed=args.seed,
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return run_calibrate(args) if args.command == "calibrate" else run_compare(args)
    except DifferentQuestions as error:
        print(f"error: refused: {error}", file=sys.stderr)
    except GoldensetError as error:
        print(f"error: {error}", file=sys.stderr)
    return REFUSED


if __name__ == "__main__":
    raise SystemExit(main())
