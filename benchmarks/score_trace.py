"""How often scoring builds judgments and views: a trace of `score_inputs` on a project's files.

While `goldenset.scoring.configuration.score_inputs` scores every enabled retriever on every
query set (what the score stage runs, nothing written), a profile hook counts each call into the
modules that build judgments, views and rankings (goldenset.evaluation.views,
goldenset.scoring.prepared, goldenset.evaluation.projection, goldenset.evaluation.ranking) made from
another module: the calls that come back down into them. Built once per query set and view, the
builders' counts do not grow with the retrievers; the table shows the count per function and the
total per module. It also counts the retrievers' `rank` and `fuse` calls: one per retriever and
query set when a set judged per document is ranked once.

Run (on a project whose `dvc repro` has run, e.g. this repository after the main job):

    PYTHONPATH=src python benchmarks/score_trace.py --project .
    PYTHONPATH=src python benchmarks/score_trace.py --project . --baseline REV  # REV's code too
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

TRACED = (
    "goldenset/metrics/views.py",
    "goldenset/scoring/prepared.py",
    "goldenset/scoring/projection.py",
    "goldenset/metrics/ranking.py",
)
RANKING = "goldenset/scoring/retrievers/"  # where each retriever's rank (or fuse) is
RANKS = ("rank", "fuse")


def traced_module(filename: str) -> str | None:
    found = next((name for name in TRACED if filename.endswith(name)), None)
    if found is None and RANKING in filename:
        return RANKING
    return found


def trace_calls(run) -> tuple[object, Counter]:
    """`run()`'s result, and the calls into TRACED modules from another module, by function."""
    counts: Counter = Counter()

    def hook(frame, event, _arg) -> None:
        if event != "call":
            return
        module = traced_module(frame.f_code.co_filename)
        caller = frame.f_back
        if module == RANKING:  # rank and fuse are called from the same package
            if frame.f_code.co_name in RANKS:
                counts[
                    (module, f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}")
                ] += 1
            return
        if module and caller is not None and traced_module(caller.f_code.co_filename) != module:
            counts[(module, frame.f_code.co_name)] += 1

    sys.setprofile(hook)
    try:
        result = run()
    finally:
        sys.setprofile(None)
    return result, counts


def traced_scoring(project: Path) -> None:
    """Score the project's files with the code `import goldenset` loads now, and print the
    counts."""
    from goldenset.params import load_params
    from goldenset.scoring.configuration import read_score_inputs, score_inputs

    params = load_params(project / "params.yaml")
    inputs, _ = read_score_inputs(params.score, params.retrievers, project)
    retrievers = [name for name, section in params.retrievers if getattr(section, "enabled", 0)]
    sets = [name for name, found in inputs.query_sets.items() if len(found)]
    outputs, counts = trace_calls(lambda: score_inputs(inputs, params.score, params.retrievers))
    print(
        f"{project}: {len(sets)} query sets ({', '.join(sets)}), "
        f"{len(retrievers)} retrievers ({', '.join(retrievers)}), "
        f"{len(outputs.results):,} result rows"
    )
    for module in [*TRACED, RANKING]:
        calls = {name: n for (where, name), n in counts.items() if where == module}
        what = "rank and fuse calls" if module == RANKING else "entries from other modules"
        print(f"{module}: {sum(calls.values())} {what}")
        for name, n in sorted(calls.items(), key=lambda item: (-item[1], item[0])):
            print(f"  {name}: {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project", type=Path, default=Path("."))
    parser.add_argument("--baseline", help="a revision: its counts first, then this checkout's")
    args = parser.parse_args()
    if args.baseline:
        import tempfile

        from baseline import ROOT, extract, use_source

        with tempfile.TemporaryDirectory() as tmp:
            for label, src in [
                (args.baseline, extract(args.baseline, Path(tmp)) / "src"),
                ("this checkout", ROOT / "src"),
            ]:
                print(f"--- {label}")
                use_source(src)
                traced_scoring(args.project)
        return
    traced_scoring(args.project)


if __name__ == "__main__":
    main()
