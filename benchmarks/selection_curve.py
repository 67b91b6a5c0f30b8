"""What selection by the judge buys and what it costs: generate.keep_share against the strict
pass share of the questions kept and the main job's minutes.

Strict share: the blind labels of the bundled writer's questions that the judge was never fitted
on (`--labels`; by default labels/steering_curve.jsonl and labels/steered_set.jsonl). Each file's
questions are ranked by the shipped judge's P(pass) and the best `keep_share` of them kept, as the
generate stage keeps the best of what it asked (without its cap per document: a file's questions
are too few per document for it). Printed with a Wilson 95% interval and the gain over keeping
all.

Minutes: the main job at keep_share s asks 1/s as many questions, so the writer's seconds grow by
1/s, and the judge reads every question asked; the other stages do not change. `--generate-s` and
`--rest-s` are a main job's generate seconds and the rest's at keep_share 1 (the log of a
`dvc repro`); the judge's seconds a question are measured here, on these labels. `--slower` also
prints the minutes on a machine that many times slower a request.

    PYTHONPATH=src python benchmarks/selection_curve.py --generate-s 353 --rest-s 203
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.judge.model import load_judge
from goldenset.judge.reader import Reader
from goldenset.judge.referee import load_referee
from goldenset.judge.validate import labelled_features

ROOT = Path(__file__).resolve().parents[1]
LABELS = [ROOT / "labels/steering_curve.jsonl", ROOT / "labels/steered_set.jsonl"]
SHARES = [0.5, 0.6, 0.67, 0.75, 0.9, 1.0]
MAX_QUESTIONS = 180  # the sample's generate.max_questions


def wilson(passes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a pass share."""
    if n == 0:
        return (float("nan"), float("nan"))
    share = passes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def kept_passes(frame: pd.DataFrame, share: float) -> tuple[int, int]:
    """Passes and questions among each file's best `share` by the judge, pooled."""
    passes = kept = 0
    for _, rows in frame.groupby("collection"):
        best = rows.sort_values("judge_pass", ascending=False, kind="stable")
        top = best.head(int(np.ceil(share * len(best))))
        passes += int((top["verdict"] == "pass").sum())
        kept += len(top)
    return passes, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, nargs="*", default=LABELS)
    parser.add_argument("--generate-s", type=float, required=True)
    parser.add_argument("--rest-s", type=float, required=True)
    parser.add_argument("--slower", type=float, default=1.59)  # 1.89 s a request against 1.19
    args = parser.parse_args()

    referee, reader = load_referee(), Reader()
    started = time.perf_counter()
    frame = pd.concat(
        [labelled_features(path, ROOT / "data/docs", referee, reader.read) for path in args.labels]
    )
    judge_s = (time.perf_counter() - started) / len(frame)
    frame["judge_pass"] = load_judge().probabilities(frame)["pass"].to_numpy()
    print(f"{len(frame)} labelled questions; the judge read them at {judge_s:.2f} s a question")

    all_passes, n = kept_passes(frame, 1.0)
    print(
        f"{'keep_share':>10} {'asked':>6} {'kept':>5} {'pass':>5} {'share':>6} {'95% CI':>13} "
        f"{'gain':>6} {'minutes':>8} {'x slower':>9} {'gain/min':>9}"
    )
    base = (args.generate_s + args.rest_s) / 60
    for share in SHARES:
        passes, kept = kept_passes(frame, share)
        low, high = wilson(passes, kept)
        asked = int(np.ceil(MAX_QUESTIONS / share))
        judge_extra = asked * judge_s if share < 1 else 0.0
        minutes = (args.generate_s / share + judge_extra + args.rest_s) / 60
        slower = (args.generate_s * args.slower / share + judge_extra + args.rest_s) / 60
        gain = passes / kept - all_passes / n
        per_minute = gain / (minutes - base) if minutes > base else float("nan")
        interval = f"[{low:.0%}, {high:.0%}]"
        print(
            f"{share:>10.2f} {asked:>6} {kept:>5} {passes:>5} {passes / kept:>6.1%} "
            f"{interval:>13} {gain:>+6.1%} {minutes:>8.1f} {slower:>9.1f} {per_minute:>+9.2%}"
        )


if __name__ == "__main__":
    main()
