"""score: every retriever on every query set -> metrics, plots, per-question results, exports
(BEIR, TREC runs) and the worst-misses report (the work: goldenset.scoring.configuration). The
golden set's questions a person failed (review.folder's verdicts) are left out."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import Field

from goldenset.core.params import StageParams
from goldenset.review.params import ReviewParams
from goldenset.review.pipeline import left_out, read_review, scored_counts, scored_line
from goldenset.scoring.configuration import read_score_inputs, score_inputs, write_score_outputs
from goldenset.scoring.inputs import save_answers, without_questions
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.query_cache import prepare_folder
from goldenset.scoring.retriever_params import RetrieversParams

log = logging.getLogger("goldenset")


class ScoreStage(StageParams):
    score: ScoreParams = Field(default_factory=ScoreParams)
    retrievers: RetrieversParams = Field(default_factory=RetrieversParams)
    review: ReviewParams = Field(default_factory=ReviewParams)


def main(params: ScoreStage) -> None:
    verdicts = read_review(params.review)
    inputs = read_score_inputs(params.score, params.retrievers)
    [golden] = [found for found in inputs.query_sets.values() if found.entry.golden]
    failed = left_out(verdicts, params.review)
    inputs = without_questions(inputs, failed)
    prepare_folder(Path(params.retrievers.external.cache_dir))  # a DVC output
    try:
        outputs = score_inputs(inputs, params.score, params.retrievers)
    finally:  # a retriever that failed half-way keeps the answers it gave
        save_answers(inputs)
    if verdicts.by_qid:  # no review file: metrics/detail.json as before
        outputs.detail["review"] = scored_counts(golden.qids, verdicts, failed)
        log.info(scored_line(outputs.detail["review"]))
    write_score_outputs(outputs)


if __name__ == "__main__":
    from goldenset.core.stage import run_stage

    run_stage(main, ScoreStage)
