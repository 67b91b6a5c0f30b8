"""The `goldenset` command: its subcommands (`goldenset COMMAND --help`) parsed and run.

demo [DIR]                demo documents and their real queries, to try goldenset on
init [DIR] --docs PATH    this pipeline in a folder of your repository (and a CI gate)
estimate [DIR]            the requests, tokens, dollars and minutes the question writer would take
compare [REV_A] [REV_B]   paired comparison of two runs, read through DVC (exit 1: regression)
calibrate                 does the golden set rank configurations as the reference query sets do?
review [DIR]              a person's verdicts on the golden set, in the browser (and its misses)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

import goldenset
from goldenset.compare.paired import (
    DifferentQuestions,
    between_retrievers,
    compare,
    gate_between_retrievers,
    metric_columns,
    pair,
)
from goldenset.compare.params import CompareCommand, CompareParams
from goldenset.compare.regressed import Texts, most_regressed
from goldenset.compare.render import render_markdown, render_text
from goldenset.compare.revisions import label, read_results, read_texts
from goldenset.core.errors import GoldensetError
from goldenset.core.params import load_stage_params

# Exit statuses of `goldenset compare`
NO_REGRESSION, REGRESSION, REFUSED = 0, 1, 2
DESCRIPTION = (
    "Golden sets of (question -> evidence) pairs from your own documents, and retriever scores "
    "on them, as a DVC pipeline in your repository."
)


def _budget(text: str) -> tuple[str | None, float]:
    """`0.01` (every metric) or `ndcg@10=0.01` (one metric); compare.budgets checks the value."""
    metric, _, value = text.rpartition("=")
    try:
        return (metric or None), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="goldenset",
        description=DESCRIPTION,
        epilog="`goldenset COMMAND --help` shows a command's options.",
    )
    main.add_argument(
        "--version",
        action="version",
        version=f"goldenset {goldenset.__version__}",
        help="print goldenset's version and exit",
    )
    commands = main.add_subparsers(
        dest="command", required=True, title="commands", metavar="COMMAND"
    )
    add_demo(commands)
    add_init(commands)
    add_estimate(commands)
    add_compare(commands)
    add_calibrate(commands)
    add_review(commands)
    return main


def _directory(command: argparse.ArgumentParser, default: str, help: str) -> None:
    """The optional folder a command works in, its first argument."""
    command.add_argument(
        "directory", nargs="?", default=Path(default), type=Path, metavar="DIR", help=help
    )


def add_demo(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser(
        "demo",
        help="write demo documents and real queries to start from",
        description="Write SciFact abstracts shipped in the package into DIR, one Markdown file "
        "each (<id>.md; <id>.pdf with --pdf), and the real SciFact claims judged on them in the "
        "BEIR layout "
        "(queries.jsonl, qrels.tsv), which `goldenset init --docs DIR` scores as real queries. "
        "Refuses a DIR that exists and is not empty.",
    )
    _directory(demo, "docs", "the folder to write (default: docs)")
    demo.add_argument(
        "--documents", type=int, default=40, metavar="N", help="how many abstracts (1 to 100)"
    )
    demo.add_argument(
        "--pdf",
        action="store_true",
        help="write each abstract as a PDF of small pages, its page number at the foot (Greek "
        "letters spelled out: the standard PDF fonts have none)",
    )


def add_estimate(commands: argparse._SubParsersAction) -> None:
    est = commands.add_parser(
        "estimate",
        help="what the question writer would take, before it is asked anything",
        description="Log what the generate stage would take with the params of DIR: the "
        "questions not in the answer cache yet, the requests they need (retries counted, at the "
        "writer's measured rate), tokens, dollars and minutes. Asks nothing and needs no key. "
        "Reads DIR/data/documents.parquet: run the ingest stage first.",
    )
    _directory(est, ".", "the pipeline's folder, where its params.yaml is (default: here)")


def add_compare(commands: argparse._SubParsersAction) -> None:
    cmp = commands.add_parser(
        "compare",
        help="compare the per-question results of two revisions, or of two retrievers",
        description="Paired comparison of data/results.parquet at two git revisions, read "
        "through DVC (run `dvc pull` first where the outputs are not local), or of two "
        "retrievers of one revision (--retrievers). Only the metrics of compare.gate in "
        "params.yaml (of --repo, the working tree) can fail it, Holm-corrected; the options below "
        "override that section. Exit status: 0 no significant regression beyond the budget, 1 a "
        "regression, 2 refused or bad input.",
    )
    cmp.add_argument(
        "rev_a",
        nargs="?",
        help="baseline (default: HEAD); with --retrievers, the revision (default: the workspace)",
    )
    cmp.add_argument("rev_b", nargs="?", help="candidate (default: the workspace)")
    cmp.add_argument(
        "--retrievers",
        nargs=2,
        metavar=("BASELINE", "CANDIDATE"),
        help="compare two retrievers of one revision, question by question; the gate's metrics "
        "of the baseline gate the candidate",
    )
    cmp.add_argument(
        "--gate",
        action="append",
        metavar="SET.RETRIEVER.METRIC",
        help="a metric that can fail the build (repeatable; default: compare.gate)",
    )
    cmp.add_argument("--alpha", type=float, help="family-wise error rate (compare.alpha)")
    cmp.add_argument(
        "--budget",
        type=_budget,
        action="append",
        default=[],
        metavar="[METRIC=]DROP",
        help="allowed drop of a mean before a significant one fails, for every metric or one "
        "(repeatable; overrides compare.budgets)",
    )
    cmp.add_argument("--metrics", nargs="+", help="per-question metrics to compare (default: all)")
    cmp.add_argument("--format", choices=["markdown", "text"], default="text")
    cmp.add_argument("--show", type=int, default=3, help="most regressed questions per retriever")
    cmp.add_argument(
        "--intersect",
        action="store_true",
        help="compare the questions both runs share instead of refusing different sets",
    )
    cmp.add_argument("--confidence", type=float, help="(compare.confidence)")
    cmp.add_argument("--resamples", type=int, help="paired bootstrap resamples (compare.resamples)")
    cmp.add_argument(
        "--permutations", type=int, help="sign flips above 16 questions (compare.permutations)"
    )
    cmp.add_argument("--seed", type=int, help="(compare.seed)")
    cmp.add_argument("--repo", default=".", help="the project (default: the current folder)")


def add_calibrate(commands: argparse._SubParsersAction) -> None:
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
    cal.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        help="judge the golden sets of these generate.seed values, each and pooled; the seeds "
        "other than the project's are written by the generate stage into cache/calibrate "
        "(calibrate.seeds; default: the project's golden set)",
    )


def add_review(commands: argparse._SubParsersAction) -> None:
    rev = commands.add_parser(
        "review",
        help="review the golden set in the browser: your verdicts make it golden",
        description="Serve the review page on 127.0.0.1: one question at a time in its "
        "document, the evidence marked, a verdict under the strict rule the page shows a key "
        "(p pass, a, b, x both, n nonsense, s skip, u undo), first a seeded random sample "
        "(review.sample) with its pass share, then the questions the judge is least sure of; "
        "and the questions a retriever missed beside another's top passages. Verdicts go to "
        "review.folder/verdicts.jsonl (git-tracked), one per question and labeller: score "
        "leaves out what was failed (review.disagreement when two people differ), the audit "
        "reports each person's pass share and their agreement. Reads the pipeline's outputs: "
        "run `dvc repro` first. The address it prints carries a token that the page and every "
        "request need.",
    )
    _directory(rev, ".", "the pipeline's folder, where its params.yaml is (default: here)")
    rev.add_argument(
        "--port",
        type=int,
        help="(default: 8765, or a free one when it is taken, printed; 0: any free one)",
    )
    rev.add_argument("--open", action="store_true", help="open the page in the browser")
    rev.add_argument(
        "--labeller", help="your name in the verdict file (default: git config user.name)"
    )
    rev.add_argument(
        "--blind",
        action="store_true",
        help="hide other labellers' verdicts and your agreement with them (a second reviewer's "
        "verdicts are then their own)",
    )
    rev.add_argument(
        "--refit",
        action="store_true",
        help="refit the judge with your verdicts beside the shipped labels (the bundled model "
        "reads each, ~1 s), print the held-out AUC before and after, write review.folder/"
        "judge.json for the audit, then exit",
    )
    rev.add_argument(
        "--load",
        type=Path,
        metavar="FILE",
        help="add the verdicts of a file in the schema of labels/*.jsonl, then exit",
    )
    rev.add_argument(
        "--list",
        action="store_true",
        help="print the address (with its token) of each review server running here, of --port "
        "only when given, then exit",
    )


def add_init(commands: argparse._SubParsersAction) -> None:
    ini = commands.add_parser(
        "init",
        help="write the pipeline into a folder of your git repository",
        description="Write a self-contained goldenset pipeline (dvc.yaml, params.yaml with every "
        "param, .gitignore, goldenset.yaml) into DIR of the git repository you are in; `dvc "
        "repro -P` at the top runs it beside your own stages. Runs `dvc init` when the repository "
        "has no DVC yet. Refuses a DIR that already holds one (--upgrade, --force) or that holds "
        "a file it would write and did not write.",
    )
    ini.add_argument("directory", nargs="?", default="goldenset", type=Path, metavar="DIR")
    ini.add_argument("--docs", type=Path, metavar="PATH", help="the folder of your documents")
    ini.add_argument(
        "--retriever",
        metavar="MODULE:FUNCTION",
        help="your retriever in the repository, e.g. search.retrieve:search (its top folder "
        "becomes a dep of score)",
    )
    ini.add_argument(
        "--ci", choices=["github"], help="also write the pull-request gate: a workflow, gate.sh"
    )
    ini.add_argument(
        "--examples",
        type=Path,
        metavar="FILE",
        help="your users' queries, the writer's style examples: a BEIR queries.jsonl, or a text "
        "file of one query a line (copied to examples/queries.jsonl, generate.example_queries)",
    )
    ini.add_argument(
        "--example",
        action="append",
        default=[],
        metavar="QUERY",
        help="one of your users' queries, as they type it; repeat it for more",
    )
    ini.add_argument(
        "--package",
        metavar="REQUIREMENT",
        help='the pip requirement CI installs, e.g. "goldenset-rag[local] @ git+URL@COMMIT" '
        "(default: this version with the extras params.yaml and the DVC remote need, from the "
        "git commit pip installed it from, else the version's tag in goldenset's repository; "
        "required when it was installed from a local path)",
    )
    mode = ini.add_mutually_exclusive_group()
    mode.add_argument("--force", action="store_true", help="write the files init wrote anew")
    mode.add_argument(
        "--upgrade",
        action="store_true",
        help="after upgrading goldenset: rewrite the generated files, add new params with their "
        "defaults, keep your values",
    )


def run_demo(args: argparse.Namespace) -> int:
    from goldenset.demo import write_demo

    for line in write_demo(args.directory, args.documents, args.pdf):
        print(line)
    return 0


def run_estimate(args: argparse.Namespace) -> int:
    import os

    from goldenset.core.stage import run_stage
    from goldenset.stages.generate import GenerateStage, estimate

    if not (args.directory / "params.yaml").is_file():
        raise GoldensetError(f"{args.directory} holds no params.yaml: name the pipeline's folder")
    os.chdir(args.directory)  # the stage's paths are relative to its folder, as under dvc
    run_stage(estimate, GenerateStage)
    return 0


def run_init(args: argparse.Namespace) -> int:
    from goldenset.init import Options, init

    options = Options(
        args.directory,
        args.docs,
        args.retriever,
        args.ci,
        args.package,
        args.force,
        args.upgrade,
        args.examples,
        args.example,
    )
    for line in init(options):
        print(line)
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from goldenset.calibrate.report import payload, plot_rows, render_markdown
    from goldenset.calibrate.runs import calibrate  # loads the stages and their models
    from goldenset.calibrate.seeded import summary
    from goldenset.compare.revisions import head_commit
    from goldenset.core.files import file_md5, write_json
    from goldenset.core.paths import APPLIED, CALIBRATION_METRICS, CALIBRATION_PLOT

    project = Path(args.repo)
    calibrations = calibrate(project, args.workdir, args.seeds)
    if args.json:
        write_json(args.json, payload(calibrations))
    write_json(project / CALIBRATION_PLOT, plot_rows(calibrations.pooled))
    calibrated = summary(calibrations, head_commit(project), file_md5(project / APPLIED))
    write_json(project / CALIBRATION_METRICS, calibrated)
    sys.stdout.write(render_markdown(calibrations))
    return 0


def run_review(args: argparse.Namespace) -> int:
    from goldenset.review.command import (
        load_verdicts,
        project_at,
        running_lines,
        serve_until_stopped,
    )

    if args.list:
        lines = running_lines(args.port)
        print("\n".join(lines) if lines else "review: no review server running", flush=True)
        return 0 if lines else 1
    project = project_at(args.directory, args.labeller, args.blind)
    if args.load:
        print(load_verdicts(project, args.load))
        return 0
    if args.refit:
        from goldenset.review.command import refit_judge

        sys.stdout.write(refit_judge(project))
        return 0
    serve_until_stopped(project, args.port, args.open)  # None: the default port, else a free one
    return 0


def run_compare(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.retrievers:
        revs, labels, results_a, results_b, settings = _two_retrievers(args, settings)
    else:
        names = (args.rev_a or "HEAD", args.rev_b or "workspace")
        revs = [None if rev == "workspace" else rev for rev in names]
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
    # a gated metric is compared even when --metrics leaves it out: the gate stays the gate
    metrics = list(dict.fromkeys([*metrics, *(name.rsplit(".", 1)[1] for name in settings.gate)]))
    rows = compare(paired, metrics, settings)
    # the first metric the runs have values of (doc_ metrics are empty on real queries alone)
    shown = next((m for m in metrics if paired[f"{m}_b"].notna().any()), metrics[0])
    regressed = most_regressed(paired, shown, args.show) if args.show > 0 else []
    texts = (
        read_texts(
            revs[1],
            args.repo,
            {item.query_set for item in regressed},
            {item.retriever for item in regressed},
        )
        if regressed
        else Texts()
    )
    render = render_markdown if args.format == "markdown" else render_text
    sys.stdout.write(render(rows, regressed, texts, labels, settings))
    return REGRESSION if any(row.regression for row in rows) else NO_REGRESSION


def _two_retrievers(args: argparse.Namespace, settings: CompareParams):
    """(revisions, labels, the baseline's and the candidate's results as two runs, the gate read
    for them) of `--retrievers BASELINE CANDIDATE` at one revision."""
    if args.rev_b is not None:
        raise GoldensetError("--retrievers compares two retrievers of one revision: name one")
    rev = None if args.rev_a in (None, "workspace") else args.rev_a
    baseline, candidate = args.retrievers
    a, b = between_retrievers(read_results(rev, args.repo), baseline, candidate)
    labels = (f"{baseline} @ {label(rev)}", f"{candidate} @ {label(rev)}")
    gate = gate_between_retrievers(settings.gate, baseline, candidate)
    return [rev, rev], labels, a, b, settings.model_copy(update={"gate": gate})


def _compare_params(repo: str) -> CompareParams:
    """The compare section of the working tree's params.yaml: the gate is the policy of the
    checkout that runs it (in CI, the branch under review), whichever revisions it compares."""
    params = load_stage_params(CompareCommand, Path(repo) / "params.yaml").compare
    if params is None:
        raise GoldensetError("params.yaml: compare: missing; add the compare section (its gate)")
    return params


def _settings(args: argparse.Namespace) -> CompareParams:
    """params.yaml's compare section, the command-line values overriding it field by field and
    validated as params.yaml is: a bad value is an error naming its option."""
    params = _compare_params(args.repo)
    fields = ("gate", "alpha", "confidence", "resamples", "permutations", "seed")
    chosen = {name: getattr(args, name) for name in fields if getattr(args, name) is not None}
    budgets = {**params.budgets, **{metric or "default": value for metric, value in args.budget}}
    try:
        return CompareParams.model_validate({**dict(params), **chosen, "budgets": budgets})
    except ValidationError as error:
        first = error.errors()[0]
        option = {"budgets": "budget"}.get(str(first["loc"][0]), str(first["loc"][0]))
        message = first["msg"].removeprefix("Value error, ")
        raise GoldensetError(f"--{option}: {message}") from None


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        run = {
            "calibrate": run_calibrate,
            "compare": run_compare,
            "estimate": run_estimate,
            "demo": run_demo,
            "init": run_init,
            "review": run_review,
        }
        return run[args.command](args)
    except DifferentQuestions as error:
        print(f"error: refused: {error}", file=sys.stderr)
    except GoldensetError as error:
        print(f"error: {error}", file=sys.stderr)
    return REFUSED


if __name__ == "__main__":
    raise SystemExit(main())
