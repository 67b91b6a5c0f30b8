"""How often scoring builds judgments and views: a trace of `score_inputs` on a project's files.

While `goldenset.scoring.configuration.score_inputs` scores every enabled retriever on every
query set (what the score stage runs, nothing written), a profile hook counts each call into the
modules that build judgments, views and rankings (goldenset.metrics.views,
goldenset.scoring.prepared, goldenset.metrics.ranking) made from another module: the calls that
come back down into them. Built once per query set and view, the counts do not grow with the
retrievers; the table shows the count per function and the total per module.

Run (on a project whose `dvc repro` has run, e.g. this repository after the main job):

    PYTHONPATH=src python benchmarks/score_trace.py --project .
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

TRACED = (
    "goldenset/metrics/views.py",
    "goldenset/scoring/prepared.py",
    "goldenset/metrics/ranking.py",
)


def traced_module(filename: str) -> str | None:
    return next((name for name in TRACED if filename.endswith(name)), None)


def trace_calls(run) -> tuple[object, Counter]:
    """`run()`'s result, and the calls into TRACED modules from another module, by function."""
    counts: Counter = Counter()

    def hook(frame, event, _arg) -> None:
        if event != "call":
            return
        module = traced_module(frame.f_code.co_filename)
        caller = frame.f_back
        if module and caller is not None and traced_module(caller.f_code.co_filename) != module:
            counts[(module, frame.f_code.co_name)] += 1

    sys.setprofile(hook)
    try:
        result = run()
    finally:
        sys.setprofile(None)
    return result, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project", type=Path, default=Path("."))
    args = parser.parse_args()
    from goldenset.params import load_params
    from goldenset.scoring.configuration import read_score_inputs, score_inputs

    params = load_params(args.project / "params.yaml")
    inputs, _ = read_score_inputs(params.score, params.retrievers, params.review, args.project)
    retrievers = [name for name, section in params.retrievers if getattr(section, "enabled", 0)]
    sets = [name for name, found in inputs.query_sets.items() if len(found)]
    outputs, counts = trace_calls(lambda: score_inputs(inputs, params.score, params.retrievers))
    print(
        f"{args.project}: {len(sets)} query sets ({', '.join(sets)}), "
        f"{len(retrievers)} retrievers ({', '.join(retrievers)}), "
        f"{len(outputs.results):,} result rows"
    )
    for module in TRACED:
        calls = {name: n for (where, name), n in counts.items() if where == module}
        print(f"{module}: {sum(calls.values())} entries from other modules")
        for name, n in sorted(calls.items(), key=lambda item: (-item[1], item[0])):
            print(f"  {name}: {n}")


if __name__ == "__main__":
    main()
