"""One logistic model per criterion of the strict rule, fitted on labelled questions.

A criterion's model turns the judge's features into the probability that a strict reviewer
accepts the question on that criterion: "answered" (its evidence sentence answers it),
"specific" (it names its document's subject) and "pass" (both). The weights ship with the
package (weights.json); `python -m goldenset.judge.validate` refits them from `labels/` and
reports how well each ranks held-out labels (cross-validated ROC AUC): a criterion below
TRUSTED_AUC only informs, it never filters.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.core.errors import GoldensetError

CRITERIA = ("answered", "specific", "pass")
TRUSTED_AUC = 0.8  # below it a criterion's probabilities may be reported, never acted on
WEIGHTS = Path(__file__).with_name("weights.json")
REGULARISATION = 1.0  # scikit-learn's C: the labels are few, the features standardised
FOLDS, REPEATS, SEED = 5, 20, 0  # the cross-validation every AUC of the judge is held out by
# the shipped labels' features (and failures, collections), written beside the weights by
# `python -m goldenset.judge.validate`: a team's refit fits them beside its verdicts
LABELLED_FEATURES = WEIGHTS.with_name("labelled_features.parquet")
# the failure kinds of labels/README.md that fail each criterion
FAILS = {
    "answered": {"a", "both", "nonsense"},
    "specific": {"b", "both", "nonsense"},
    "pass": {"a", "b", "both", "nonsense"},
}


def accepted(labels: pd.DataFrame, criterion: str) -> np.ndarray:
    """1 where a label accepts the question on the criterion."""
    return (~labels["failed"].isin(FAILS[criterion])).to_numpy(np.int64)


@dataclass(frozen=True)
class CriterionModel:
    features: list[str]
    means: list[float]
    scales: list[float]
    coefficients: list[float]
    intercept: float
    auc: float  # cross-validated ROC AUC on the labels it was fitted to

    def probability(self, frame: pd.DataFrame) -> np.ndarray:
        missing = [name for name in self.features if name not in frame]
        if missing:
            raise GoldensetError(f"judge: features missing: {', '.join(missing)}")
        x = (frame[self.features].to_numpy(np.float64) - self.means) / self.scales
        return 1.0 / (1.0 + np.exp(-(x @ np.asarray(self.coefficients) + self.intercept)))

    @property
    def trusted(self) -> bool:
        return self.auc >= TRUSTED_AUC


@dataclass(frozen=True)
class Judge:
    referee: str  # the embedding model behind referee_cosine
    labels: int  # how many labelled questions the models were fitted to
    models: dict[str, CriterionModel]

    def probabilities(self, frame: pd.DataFrame) -> pd.DataFrame:
        """P(a strict reviewer accepts) per criterion, one column each, in row order."""
        return pd.DataFrame(
            {name: model.probability(frame) for name, model in self.models.items()},
            index=frame.index,
        )


def fit_criterion(features: pd.DataFrame, accepted: np.ndarray, auc: float) -> CriterionModel:
    from sklearn.linear_model import LogisticRegression

    x = features.to_numpy(np.float64)
    means, scales = x.mean(axis=0), x.std(axis=0)
    scales[scales == 0] = 1.0
    model = LogisticRegression(C=REGULARISATION).fit((x - means) / scales, accepted)
    return CriterionModel(
        features=list(features.columns),
        means=means.tolist(),
        scales=scales.tolist(),
        coefficients=model.coef_[0].tolist(),
        intercept=float(model.intercept_[0]),
        auc=round(auc, 4),
    )


def held_out_probabilities(
    features: pd.DataFrame, accepted: np.ndarray, folds: int, seed: int
) -> np.ndarray:
    """Each question's probability by a model fitted without its fold (stratified, shuffled)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(C=REGULARISATION))
    split = StratifiedKFold(folds, shuffle=True, random_state=seed)
    return cross_val_predict(model, features, accepted, cv=split, method="predict_proba")[:, 1]


def cross_validated_auc(
    features: pd.DataFrame, accepted: np.ndarray, folds: int, repeats: int, seed: int
) -> np.ndarray:
    """ROC AUC of held-out probabilities, once per repeat of the shuffled split."""
    from sklearn.metrics import roc_auc_score

    return np.asarray(
        [
            roc_auc_score(accepted, held_out_probabilities(features, accepted, folds, seed + r))
            for r in range(repeats)
        ]
    )


def judge_json(judge: Judge) -> str:
    """The text of weights.json."""
    payload = {"referee": judge.referee, "labels": judge.labels}
    payload["models"] = {name: asdict(model) for name, model in judge.models.items()}
    return json.dumps(payload, indent=1) + "\n"


def load_judge(path: Path = WEIGHTS) -> Judge:
    payload = json.loads(path.read_text(encoding="utf-8"))
    models = {name: CriterionModel(**model) for name, model in payload["models"].items()}
    return Judge(payload["referee"], payload["labels"], models)


def judge_weights(refitted: Path) -> Path:
    """The judge the audit reads: the one `goldenset review --refit` fitted with the team's
    verdicts (review.judge_path) when it exists, else the shipped judge."""
    return refitted if refitted.exists() else WEIGHTS
