"""score: every retriever on every query set -> metrics, plots, per-question results, exports
(BEIR, TREC runs) and the worst-misses report (the work: goldenset.scoring.configuration). The
golden set is the apply stage's: as people left it."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import Field

from goldenset.core.params import StageParams
from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.query_cache import prepare_folder
from goldenset.scoring.configuration import (
    read_score_inputs,
    save_answers,
    score_inputs,
    write_score_outputs,
)
from goldenset.scoring.params import ScoreParams

log = logging.getLogger("goldenset")


class ScoreStage(StageParams):
    score: ScoreParams = Field(default_factory=ScoreParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)


def main(params: ScoreStage) -> None:
    prepare_folder(Path(params.retrievers.external.cache_dir))  # a DVC output
    inputs, review = read_score_inputs(params.score, params.retrievers)
    try:
        outputs = score_inputs(inputs, params.score, params.retrievers)
    finally:  # a retriever that failed half-way keeps the answers it gave
        save_answers(inputs.loaded)
    if review is not None:  # no verdict: metrics/detail.json as before
        outputs.detail["review"] = review
    write_score_outputs(outputs)


if __name__ == "__main__":
    from goldenset.core.stage import run_stage

    run_stage(main, ScoreStage)
