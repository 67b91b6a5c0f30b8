"""apply: the written golden set and people's verdicts -> the golden set as people left it
(goldenset.scoring.reviewed.apply_verdicts), the set embed, score and calibrate read.

A verdict, a fix or a fail re-runs this stage and what reads its output, never generate: the
writer's answers stand, and only a fixed question's new text is embedded."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import Field

from goldenset.core.files import read_jsonl, write_json, write_jsonl
from goldenset.core.params import ReviewParams, StageParams
from goldenset.core.paths import APPLIED, APPLIED_STATS, DOCUMENTS, GOLDENSET
from goldenset.core.stage import run_stage
from goldenset.corpus.places import read_places, with_places
from goldenset.corpus.verdicts import carried_line
from goldenset.scoring.reviewed import apply_verdicts, read_reviewed, scored_line

log = logging.getLogger("goldenset")


class ApplyStage(StageParams):
    review: ReviewParams = Field(default_factory=ReviewParams)


def main(params: ApplyStage) -> None:
    written = read_jsonl(GOLDENSET) if GOLDENSET.exists() else []
    reviewed = read_reviewed(params.review, Path("."), written)
    applied = apply_verdicts(written, reviewed, params.review.disagreement)
    rows = applied.rows
    if applied.counts.get("fixed"):  # a fix may move the evidence to another page or section
        rows = with_places(rows, read_places(DOCUMENTS))
    write_jsonl(APPLIED, rows)
    write_json(APPLIED_STATS, applied.counts)
    if reviewed.carried and (carried := carried_line(reviewed.carried)):
        log.info(carried)
    if applied.counts:
        log.info(scored_line(applied.counts))
    else:
        log.info("apply: no verdict yet: the golden set is scored as written (%d)", len(rows))


if __name__ == "__main__":
    run_stage(main, ApplyStage)
