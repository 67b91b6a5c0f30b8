"""The audit's judge on a golden set: the share of its questions a strict reviewer would accept,
estimated on a seeded sample of them by the judge fitted on the labels (goldenset.judge)."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from goldenset.audit.checks import Acceptance
from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.core.params import AuditParams
from goldenset.judge.features import question_features
from goldenset.judge.model import WEIGHTS, load_judge
from goldenset.judge.reader import cached_read
from goldenset.judge.referee import load_referee


def judge(
    golden: pd.DataFrame,
    documents: dict[str, WindowIndex],
    params: AuditParams,
    reviewed: set[str],
    weights: Path,
) -> Acceptance | None:
    """The judge's reading of its seeded sample, and of the questions a person reviewed (to rank
    the judge against the person); None when the judge is off (audit.judge_sample: 0). weights:
    the shipped judge's, or the one refitted with the team's verdicts (review.judge_path)."""
    if params.judge_sample == 0:
        return None
    sample = judge_sample(golden, params)
    chosen = set(sample)
    extra = [row for row, qid in enumerate(golden["qid"]) if qid in reviewed and row not in chosen]
    return estimate_acceptance(golden, documents, sorted(sample + extra), params.cache_dir, weights)


def judge_sample(golden: pd.DataFrame, params: AuditParams) -> list[int]:
    """The rows whose judged share estimates the set's (reviewed questions aside)."""
    return judged_rows(len(golden), params.judge_sample, params.seed)


def judged_rows(n_questions: int, sample: int | None, seed: int) -> list[int]:
    """The rows the judge reads: all, or a seeded sample of `sample` of them, in order."""
    if sample is None or sample >= n_questions:
        return list(range(n_questions))
    return sorted(random.Random(seed).sample(range(n_questions), sample))


def estimate_acceptance(
    golden: pd.DataFrame,
    documents: dict[str, WindowIndex],
    rows: list[int],
    cache_dir: str,
    weights: Path = WEIGHTS,
) -> Acceptance:
    """The packaged judge's probabilities for the golden set's rows of `rows` (the referee model
    embeds questions and evidence sentences, the bundled model reads each pair)."""
    model = load_judge(weights)
    rows = golden.iloc[rows]
    rarity = WindowFrequency(documents.values())
    # a re-run with the same questions loads no model
    referee, read = load_referee(cache_dir), cached_read(Path(cache_dir))
    features = question_features(rows, documents, rarity, referee, read)
    aucs = {name: criterion.auc for name, criterion in model.models.items()}
    refitted = None if weights == WEIGHTS else str(weights)
    return Acceptance(model.probabilities(features.set_axis(rows.index)), aucs, refitted)
