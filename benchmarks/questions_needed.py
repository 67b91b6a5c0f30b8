"""How many golden questions a close call needs: calibrate's decisions on one, two and three
draws of `generate.seed` pooled, i.e. about 180, 360 and 540 questions at the shipped
`generate.max_questions`.

Each draw is a golden set of the same params but its seed (calibrate.seeds writes them); pooling n
draws is n times the questions, each draw's passages drawn as the stage draws them. For each n,
every combination of n draws is assessed, and each close-call group's figures in one view are
printed per combination: questions, Kendall tau golden vs a half of the reference (its ceiling:
two halves), and of the pairs the reference separates, those the golden set's own test gets right,
wrong, or leaves undecided. Variance shrinks as draws are added (undecided falls, tau rises to the
ceiling); a bias does not (wrong stays, or grows).

    python benchmarks/questions_needed.py PROJECT --seeds 0 1 2 [--view document] [--rows FILE]

PROJECT holds a main job's outputs and the calibrate params; the draws other than the project's
own are written (or read back, their answers cached) in cache/calibrate as `goldenset calibrate
--seeds` does. --rows keeps the scored rows, so a second run only assesses.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
from pathlib import Path

from goldenset.calibrate.figures import SeedRows, assess
from goldenset.calibrate.params import CalibrateCommand
from goldenset.calibrate.runs import GridResults, run_configurations, usable_views
from goldenset.core.params import load_stage_params
from goldenset.corpus.querysets import QUERY_SETS

GOLDEN = next(entry.name for entry in QUERY_SETS.values() if entry.golden)


def scored_rows(project: Path, seeds: list[int], rows: Path | None) -> GridResults:
    if rows and rows.exists():
        return pickle.loads(rows.read_bytes())
    params = load_stage_params(CalibrateCommand, project / "params.yaml")
    assert params.calibrate is not None, "params.yaml: calibrate: missing"
    calibrate = params.calibrate.model_copy(update={"seeds": seeds})
    params = params.model_copy(update={"calibrate": calibrate})
    scored = run_configurations(project, params, None, lambda line: print(line, flush=True))
    if rows:
        rows.write_bytes(pickle.dumps(scored))
    return scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--view", default="document")
    parser.add_argument("--rows", type=Path, default=None)
    args = parser.parse_args()
    project = args.project.resolve()
    scored = scored_rows(project, args.seeds, args.rows)
    settings = load_stage_params(CalibrateCommand, project / "params.yaml").calibrate
    assert settings is not None
    views, _ = usable_views(scored.results, settings, scored.refused)
    [view] = [view for view in views if view.name == args.view]
    print(f"view {view.name}: {view.golden} against {view.reference}, alpha {settings.alpha}")
    print(
        "| group | draws | questions | tau golden vs half | ceiling | right | wrong | undecided |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for size in range(1, len(args.seeds) + 1):
        for draws in itertools.combinations(args.seeds, size):
            qids = [qid for seed in draws for qid in scored.seed_qids[seed]]
            rows = SeedRows(GOLDEN, {0: qids}).of(scored.results, 0)
            calibration = assess(rows, scored.configurations, [view], [], settings)
            for name, group in calibration.groups.items():
                [result] = group.views
                print(
                    f"| {name} | {' '.join(map(str, draws))} | {len(qids)} "
                    f"| {result.noise.tau_golden_half:.3f} | {result.noise.tau_halves:.3f} "
                    f"| {result.right} | {len(result.wrong)} | {result.undecided} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
