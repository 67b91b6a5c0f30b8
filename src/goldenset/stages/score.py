"""score: every retriever on every query set -> metrics, plots, per-question results,
exports (BEIR, TREC runs) and the worst-misses report (the work: goldenset.scoring.run)."""

from __future__ import annotations

from pydantic import Field

from goldenset.core.params import StageParams
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.retriever_params import RetrieversParams
from goldenset.scoring.run import read_score_inputs, score_inputs, write_score_outputs


class ScoreStage(StageParams):
    score: ScoreParams = Field(default_factory=ScoreParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)


def main(params: ScoreStage) -> None:
    outputs = score_inputs(read_score_inputs(), params.score, params.retrievers)
    write_score_outputs(outputs)


if __name__ == "__main__":
    from goldenset.core.stage import run_stage

    run_stage(main, ScoreStage)
