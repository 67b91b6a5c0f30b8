"""Retriever-family bias: does the golden set favour one family of retriever over another more
than the reference queries do?

Synthetic questions that reuse their evidence's words flatter lexical retrieval. For each
chunking and model, the mean per-question difference of one retriever over another (dense - bm25,
hybrid - dense) is estimated on the golden set and on the reference set, each with a percentile
bootstrap interval over its questions; a golden mean outside the reference's interval is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from goldenset.calibrate.agreement import View, question_matrix
from goldenset.calibrate.groups import MODEL_FREE, Configuration
from goldenset.calibrate.params import CalibrateParams
from goldenset.core.stats import bootstrap_interval


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float
    n_questions: int


@dataclass(frozen=True)
class FamilyBias:
    chunking: str
    model: str
    better: str  # the difference is better - worse, per question
    worse: str
    golden: Estimate
    reference: Estimate
    configurations: tuple[str, str]  # (better, worse) at this chunking and model

    @property
    def outside(self) -> bool:
        """The golden mean lies outside the reference's interval."""
        return not self.reference.low <= self.golden.mean <= self.reference.high


def difference(values: np.ndarray, settings: CalibrateParams) -> Estimate:
    """Mean of row 0 - row 1 over the questions both have, with its bootstrap interval."""
    paired = values[0] - values[1]
    paired = paired[~np.isnan(paired)]
    interval = bootstrap_interval(paired, settings.resamples, settings.confidence, settings.seed)
    mean = float(paired.mean()) if paired.size else float("nan")
    return Estimate(mean, interval.low, interval.high, int(paired.size))


def family_bias(
    results: pd.DataFrame,
    view: View,
    configurations: list[Configuration],
    models: list[str],
    settings: CalibrateParams,
) -> list[FamilyBias]:
    """Each (chunking, model, retriever pair of `calibrate.bias`) the grid holds both sides of."""
    rows = []
    chunkings = list(dict.fromkeys(c.chunking for c in configurations))
    for chunking in chunkings:
        for model in [*models, MODEL_FREE]:
            for better, worse in settings.bias:
                pair = [_find(configurations, name, chunking, model) for name in (better, worse)]
                if pair[0] is None or pair[1] is None or _counted_as_model_free(pair, model):
                    continue
                rows.append(pair_bias(results, view, pair[0], pair[1], settings, model))
    return rows


def pair_bias(
    results: pd.DataFrame,
    view: View,
    better: Configuration,
    worse: Configuration,
    settings: CalibrateParams,
    model: str | None = None,
) -> FamilyBias:
    """The per-question difference better - worse on the golden set and on the reference, at
    better's chunking and model (or the model given)."""
    names = [better.name, worse.name]
    return FamilyBias(
        better.chunking,
        better.model if model is None else model,
        better.retriever,
        worse.retriever,
        difference(question_matrix(results, view.golden, names), settings),
        difference(question_matrix(results, view.reference, names), settings),
        (better.name, worse.name),
    )


def group_pairs_bias(
    results: pd.DataFrame, view: View, chosen: list[Configuration], settings: CalibrateParams
) -> list[FamilyBias]:
    """Every pair of a group's configurations, the first in grid order taken as `better`."""
    return [
        pair_bias(results, view, chosen[i], chosen[j], settings)
        for i in range(len(chosen))
        for j in range(i + 1, len(chosen))
    ]


def _find(
    configurations: list[Configuration], retriever: str, chunking: str, model: str
) -> Configuration | None:
    """The retriever at this chunking with this model (or with none, for a retriever that reads
    no embedding)."""
    for c in configurations:
        if (c.retriever, c.chunking) == (retriever, chunking) and c.model in (model, MODEL_FREE):
            return c
    return None


def _counted_as_model_free(pair: list[Configuration | None], model: str) -> bool:
    """Two retrievers that read no embedding differ the same way for every model: one row."""
    return model != MODEL_FREE and all(c is not None and c.model == MODEL_FREE for c in pair)
