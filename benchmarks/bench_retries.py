"""Retries of the local question writer: one corrected retry against resamples before it.

Baseline: `max_attempts: 2, resamples: 0` (an invalid answer is asked again once, with the reason).
Against it: this checkout's params.yaml (`resamples` sampled tries of the same prompt, then a
correction). Same code, same sample passages, one process, a fresh answer cache each, the model
loaded before the clock starts. Prints kept questions per minute, yield, median echo and the
ratio against the baseline.

    PYTHONPATH=src python benchmarks/bench_retries.py [--questions 30]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import yaml
from bench_writer import ROOT, run_path

BASELINE = {"max_attempts": 2, "resamples": 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    current = yaml.safe_load((ROOT / "params.yaml").read_text())["generate"]
    print(f"load: {os.getloadavg()}", file=sys.stderr)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, generate in [("baseline", {**current, **BASELINE}), ("params.yaml", current)]:
            cache = Path(tmp) / label
            results.append(run_path(label, ROOT / "src", generate, args.questions, cache))
            print(json.dumps(results[-1], ensure_ascii=False), flush=True)
    baseline, ours = results
    ratio = ours["kept_per_min"] / max(baseline["kept_per_min"], 1e-9)
    print(json.dumps({"kept_per_min_ratio": round(ratio, 2), "load_after": os.getloadavg()}))


if __name__ == "__main__":
    main()
