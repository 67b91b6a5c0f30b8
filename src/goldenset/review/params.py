"""The `review:` section of params.yaml: where a person's verdicts live, and what the pipeline
does with them (score leaves failed queries out, the audit sets the person's pass share beside
the judge's estimate)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from goldenset.core.params import Section

VERDICTS_FILE = "verdicts.jsonl"  # in review.folder
JUDGE_FILE = "judge.json"  # in review.folder: the judge `goldenset review --refit` fits


class ReviewParams(Section):
    folder: str = Field("review", description="verdicts.jsonl, git-tracked: a dep of score, audit")
    leave_out_failed: bool = Field(True, description="score: a query a person failed is not scored")
    sample: int = Field(30, ge=0, description="the page's seeded random sample, before the rest")
    seed: int = 0
    min_verdicts: int = Field(
        30, ge=1, description="random-sample verdicts from which the person's share sets the flag"
    )

    @property
    def verdicts_path(self) -> Path:
        return Path(self.folder) / VERDICTS_FILE

    @property
    def judge_path(self) -> Path:
        """The judge refitted with the team's verdicts, which the audit reads when it exists."""
        return Path(self.folder) / JUDGE_FILE
