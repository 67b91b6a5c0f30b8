"""audit: golden set, documents, question vectors, real and labelled queries ->
metrics/audit.json and reports/audit.md (the judge's estimate of the share a strict reviewer
accepts, how much the questions echo their source, look-ups, duplicates, coverage)."""

from __future__ import annotations

import json
import logging
import random

import pandas as pd

from goldenset.audit.checks import (
    Judged,
    chance_flags,
    document_chance,
    document_indexes,
    echo_quantile_rows,
    real_query_echoes,
    render_report,
    run_audit,
)
from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically, write_json
from goldenset.core.params import AuditParams, Params
from goldenset.core.paths import (
    AUDIT_METRICS,
    AUDIT_REPORT,
    DOCUMENTS,
    ECHO_PLOT,
    EMBEDDINGS,
    GENERATE_STATS,
    GOLDENSET,
    LABELLED,
    LABELLED_EVIDENCE,
    QRELS,
    QUERIES,
)
from goldenset.core.stage import run_stage
from goldenset.core.vectors import read_vectors
from goldenset.corpus.queries import read_goldenset
from goldenset.judge.features import question_features
from goldenset.judge.model import load_judge
from goldenset.judge.reader import Reader
from goldenset.judge.referee import load_referee

log = logging.getLogger("goldenset")


def real_queries() -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(queries, qrels) that ingest found beside the documents, or None when there are none."""
    queries = pd.read_parquet(QUERIES)
    return (queries, pd.read_parquet(QRELS)) if len(queries) else None


def labelled_queries() -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """(questions, qrels) of the labelled set: each document holding evidence is relevant."""
    questions = pd.read_parquet(LABELLED)
    if not len(questions):
        return None
    evidence = pd.read_parquet(LABELLED_EVIDENCE, columns=["qid", "doc_id"])
    return questions, evidence.drop_duplicates().assign(grade=1)


def judged_rows(questions: int, sample: int | None, seed: int) -> list[int]:
    """The rows the judge reads: all, or a seeded sample of `sample` of them, in order."""
    if sample is None or sample >= questions:
        return list(range(questions))
    return sorted(random.Random(seed).sample(range(questions), sample))


def judge(golden: pd.DataFrame, documents: dict[str, WindowIndex], params: AuditParams) -> Judged:
    """The packaged judge's probabilities for the golden set's judged rows (the referee model
    embeds questions and evidence sentences, the bundled model reads each pair)."""
    model = load_judge()
    rows = golden.iloc[judged_rows(len(golden), params.judge_sample, params.seed)]
    rarity = WindowFrequency(documents.values())
    features = question_features(rows, documents, rarity, load_referee(), Reader().read)
    aucs = {name: criterion.auc for name, criterion in model.models.items()}
    return Judged(model.probabilities(features.set_axis(rows.index)), aucs)


def main(params: Params) -> None:
    documents = document_indexes(pd.read_parquet(DOCUMENTS, columns=["doc_id", "text"]))
    golden = read_goldenset(GOLDENSET)
    if "evidence" not in golden:
        golden["evidence"] = pd.Series(dtype=str)
    try:
        stats = json.loads(GENERATE_STATS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GoldensetError(f"{GENERATE_STATS} not found: run `dvc repro generate`") from None
    vectors = read_vectors(EMBEDDINGS, "synthetic", golden["qid"].astype(str).tolist())
    real, labelled = real_queries(), labelled_queries()
    real_echoes = None if real is None else real_query_echoes(*real, documents)
    labelled_echoes = None if labelled is None else real_query_echoes(*labelled, documents)
    audit = run_audit(
        golden,
        documents,
        vectors,
        stats,
        real_echoes,
        params.audit,
        None if params.audit.judge_sample == 0 else judge(golden, documents, params.audit),
        labelled_echoes=labelled_echoes,
    )
    chance = document_chance(golden["doc_id"].astype(str), list(documents), params.score.ks)
    audit.metrics["chance"] = {"documents": len(documents), **chance}
    audit.flags.extend(chance_flags(chance, len(documents), params.score.max_chance))
    audit.metrics["flags"] = len(audit.flags)
    write_json(AUDIT_METRICS, audit.metrics)
    echoes = {
        "golden_set": audit.questions["echo"].tolist(),
        "real_queries": real_echoes or [],
        "labelled_queries": labelled_echoes or [],
    }
    write_json(ECHO_PLOT, echo_quantile_rows(echoes))
    write_atomically(AUDIT_REPORT, render_report(audit, params.audit))
    m = audit.metrics
    passing = m.get("judge", {}).get("pass", {})
    log.info(
        "audit: %d questions, echo median %s (real queries %s), echo share %s, strict pass "
        "share %s [%s, %s] by the judge, 'what is' share %s, %d near-duplicates; see %s",
        m["questions"],
        m["echo"]["median"],
        m.get("real_queries", {}).get("echo", {}).get("median", "n/a"),
        m["echo_share"],
        passing.get("estimate"),
        passing.get("low"),
        passing.get("high"),
        m["definitional_share"],
        m["near_duplicates"],
        AUDIT_REPORT,
    )
    for flag in audit.flags:
        log.warning("audit: %s", flag)


if __name__ == "__main__":
    run_stage(main)
