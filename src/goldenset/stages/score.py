"""score: every enabled retriever on every query set -> metrics, plots, per-question results,
exports (BEIR, TREC runs) and the worst-misses report (the work: goldenset.scoring.run)."""

from __future__ import annotations

from goldenset.core.params import Params
from goldenset.scoring.run import score_configuration, write_score_outputs


def main(params: Params) -> None:
    write_score_outputs(score_configuration(params))


if __name__ == "__main__":
    from goldenset.core.stage import run_stage

    run_stage(main)
