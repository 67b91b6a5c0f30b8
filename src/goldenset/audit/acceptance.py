"""The audit's judge on a golden set: the share of its questions a strict reviewer would accept,
estimated on a seeded sample of them by the judge fitted on the labels (goldenset.judge)."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from goldenset.audit.checks import Acceptance
from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.judge.features import question_features
from goldenset.judge.model import WEIGHTS, load_judge
from goldenset.judge.reader import cached_read
from goldenset.judge.referee import load_referee


def judged_rows(questions: int, sample: int | None, seed: int) -> list[int]:
    """The rows the judge reads: all, or a seeded sample of `sample` of them, in order."""
    if sample is None or sample >= questions:
        return list(range(questions))
    return sorted(random.Random(seed).sample(range(questions), sample))


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
    read = cached_read(Path(cache_dir))  # a re-run with the same questions loads no model
    features = question_features(rows, documents, rarity, load_referee(), read)
    aucs = {name: criterion.auc for name, criterion in model.models.items()}
    return Acceptance(model.probabilities(features.set_axis(rows.index)), aucs)
