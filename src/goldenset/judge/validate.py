"""Refit the judge on the labels and report whether it can be trusted.

    python -m goldenset.judge.validate      # in goldenset's own repository

For each criterion: the ROC AUC of held-out probabilities (stratified 5-fold cross-validation,
repeated with 20 shuffles), pooled over every label file, and across collections (fitted on one
file's labels, scored on the other's). Writes reports/judge.md and the package's weights.json.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.core.files import read_jsonl, write_atomically
from goldenset.corpus.ingest import ingest
from goldenset.judge.features import FEATURES, Embed, Read, question_features
from goldenset.judge.model import (
    CRITERIA,
    FOLDS,
    LABELLED_FEATURES,
    REPEATS,
    SEED,
    TRUSTED_AUC,
    WEIGHTS,
    Judge,
    accepted,
    cross_validated_auc,
    fit_criterion,
    held_out_probabilities,
    judge_json,
)
from goldenset.judge.reader import Reader
from goldenset.judge.referee import REFEREE, load_referee

log = logging.getLogger("goldenset")
# goldenset's own repository, not a pipeline's files: each label file and the corpus its
# questions were written from
JUDGE_LABELS = {
    Path("labels/strict.jsonl"): Path("data/docs"),
    Path("labels/squad.jsonl"): Path("labels/squad"),
    Path("labels/claims.jsonl"): Path("data/docs"),  # claims: the reader asks "does it state it"
}
JUDGE_REPORT = Path("reports/judge.md")


def corpus_indexes(corpus: Path) -> dict[str, WindowIndex]:
    """doc_id -> WindowIndex of each document a label file's questions were written from."""
    documents = ingest(corpus, max_file_mb=100).documents
    return {document.doc_id: WindowIndex.of(document.text) for document in documents}


def labelled_features(labels_path: Path, corpus: Path, referee: Embed, read: Read) -> pd.DataFrame:
    """The labels of one file with the judge's features of each question."""
    labels = pd.DataFrame(read_jsonl(labels_path))
    indexes = corpus_indexes(corpus)
    rarity = WindowFrequency(indexes.values())
    features = question_features(labels, indexes, rarity, referee, read)
    return pd.concat([labels.assign(collection=labels_path.stem), features], axis=1)


def across_collections(rows: pd.DataFrame, criterion: str) -> dict[str, float]:
    """AUC on each collection of a model fitted on the others' labels only."""
    from sklearn.metrics import roc_auc_score

    aucs = {}
    for name in rows["collection"].unique():
        test, train = rows[rows["collection"] == name], rows[rows["collection"] != name]
        y_test, y_train = accepted(test, criterion), accepted(train, criterion)
        if len(set(y_test)) < 2 or len(set(y_train)) < 2:
            continue
        model = fit_criterion(train[FEATURES], y_train, float("nan"))
        aucs[name] = float(roc_auc_score(y_test, model.probability(test)))
    return aucs


def validate(rows: pd.DataFrame) -> tuple[Judge, str]:
    """The refitted judge and the markdown report of its validation."""
    lines = [
        "# The judge against the strict labels",
        "",
        f"{len(rows)} labelled questions ("
        + ", ".join(f"{name} {count}" for name, count in rows["collection"].value_counts().items())
        + f"); features {', '.join(FEATURES)}; referee {REFEREE.model}.",
        f"A criterion is trusted (may filter or pick among candidates) at ROC AUC >= "
        f"{TRUSTED_AUC}.",
        "",
        "| criterion | accepted | AUC (5-fold x 20: mean [min, max]) | across collections "
        "| trusted |",
        "|---|---|---|---|---|",
    ]
    models = {}
    for criterion in CRITERIA:
        y = accepted(rows, criterion)
        aucs = cross_validated_auc(rows[FEATURES], y, FOLDS, REPEATS, SEED)
        models[criterion] = fit_criterion(rows[FEATURES], y, float(aucs.mean()))
        across = across_collections(rows, criterion)
        lines.append(
            f"| {criterion} | {y.mean():.0%} | {aucs.mean():.3f} [{aucs.min():.3f}, "
            f"{aucs.max():.3f}] | "
            + ", ".join(f"{name} {auc:.3f}" for name, auc in across.items())
            + f" | {'yes' if models[criterion].trusted else 'no'} |"
        )
    lines += ["", *estimate_lines(rows)]
    return Judge(REFEREE.model, len(rows), models), "\n".join(lines) + "\n"


def estimate_lines(rows: pd.DataFrame) -> list[str]:
    """The audit's estimate (the mean probability of passing) from held-out probabilities, per
    collection, against the share its labels pass: how far the estimate can be off."""
    passed = accepted(rows, "pass")
    held_out = held_out_probabilities(rows[FEATURES], passed, FOLDS, SEED)
    lines = [
        "The audit's estimate, held out (each question's probability from a model fitted "
        "without its fold), against the labels:",
        "",
        "| collection | questions | labels pass | judge's estimate | fitted on the others only |",
        "|---|---|---|---|---|",
    ]
    for name in rows["collection"].unique():
        mine = (rows["collection"] == name).to_numpy()
        others = fit_criterion(rows.loc[~mine, FEATURES], passed[~mine], float("nan"))
        elsewhere = others.probability(rows.loc[mine]).mean()
        lines.append(
            f"| {name} | {mine.sum()} | {passed[mine].mean():.0%} | {held_out[mine].mean():.0%} "
            f"| {elsewhere:.0%} |"
        )
    return lines


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=Path, help="also write every label with its features")
    parser.add_argument(
        "--verdicts",
        type=Path,
        help="a team's verdicts (labels/*.jsonl's schema): refit with them beside the shipped "
        "labels instead, and report the AUC held out on them before and after",
    )
    parser.add_argument(
        "--documents", type=Path, default=Path("data/documents.parquet"), help="their corpus"
    )
    parser.add_argument("--out", type=Path, default=Path("review/judge.json"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.verdicts:
        from goldenset.judge.refit import refit_with

        documents = pd.read_parquet(args.documents, columns=["doc_id", "text"])
        print(refit_with(read_jsonl(args.verdicts), documents, args.out))
        return
    referee, read = load_referee(), Reader().read
    rows = pd.concat(
        [labelled_features(path, corpus, referee, read) for path, corpus in JUDGE_LABELS.items()],
        ignore_index=True,
    )
    if args.features:
        rows.to_json(args.features, orient="records", lines=True, force_ascii=False)
    judge, report = validate(rows)
    write_atomically(WEIGHTS, judge_json(judge))
    # what a team's refit fits beside its verdicts (goldenset.judge.refit), without labels/
    rows[[*FEATURES, "failed", "collection"]].to_parquet(LABELLED_FEATURES, index=False)
    write_atomically(JUDGE_REPORT, report)
    print(report)


if __name__ == "__main__":
    main()
