"""audit: golden set, documents, question vectors, the reference query sets (real and labelled) ->
metrics/audit.json and reports/audit.md (the judge's estimate of the share a strict reviewer
accepts, how much the questions echo their source, look-ups, duplicates, coverage)."""

from __future__ import annotations

import json
import logging
import random

import pandas as pd
from pydantic import Field

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
from goldenset.core.params import AuditParams, StageParams
from goldenset.core.paths import (
    AUDIT_METRICS,
    AUDIT_REPORT,
    DOCUMENTS,
    ECHO_PLOT,
    EMBEDDINGS,
    GENERATE_STATS,
)
from goldenset.core.stage import run_stage
from goldenset.core.vectors import read_vectors
from goldenset.corpus.querysets import QuestionSet, read_query_sets, references
from goldenset.judge.features import question_features
from goldenset.judge.model import load_judge
from goldenset.judge.reader import Reader
from goldenset.judge.referee import load_referee
from goldenset.scoring.params import ScoreParams

log = logging.getLogger("goldenset")


class AuditStage(StageParams):
    audit: AuditParams = Field(default_factory=AuditParams)
    score: ScoreParams = Field(default_factory=ScoreParams)


def reference_echoes(
    query_sets: dict[str, QuestionSet], documents: dict[str, WindowIndex]
) -> dict[str, list[float] | None]:
    """Each reference set's echoes by its label (real queries first), None for a set without
    questions: each document judged relevant (holding evidence) to a question is read."""
    echoes: dict[str, list[float] | None] = {}
    for entry in references():
        found = query_sets[entry.name]
        questions = pd.DataFrame({"qid": found.qids, "text": found.texts})
        judged = found.document_judgments() if len(found) else None
        echoes[entry.echo_label] = (
            None if judged is None else real_query_echoes(questions, judged, documents)
        )
    return echoes


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


def main(params: AuditStage) -> None:
    documents = document_indexes(pd.read_parquet(DOCUMENTS, columns=["doc_id", "text"]))
    query_sets = read_query_sets()
    [golden_set] = [found for found in query_sets.values() if found.entry.golden]
    golden = golden_set.table
    if "evidence" not in golden:
        golden["evidence"] = pd.Series(dtype=str)
    try:
        stats = json.loads(GENERATE_STATS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GoldensetError(f"{GENERATE_STATS} not found: run `dvc repro generate`") from None
    vectors = read_vectors(EMBEDDINGS, golden_set.name, golden_set.qids)
    echoes = reference_echoes(query_sets, documents)
    audit = run_audit(
        golden,
        documents,
        vectors,
        stats,
        None,
        params.audit,
        None if params.audit.judge_sample == 0 else judge(golden, documents, params.audit),
        references=echoes,
    )
    chance = document_chance(golden["doc_id"].astype(str), list(documents), params.score.ks)
    audit.metrics["chance"] = {"documents": len(documents), **chance}
    audit.flags.extend(chance_flags(chance, len(documents), params.score.max_chance))
    audit.metrics["flags"] = len(audit.flags)
    write_json(AUDIT_METRICS, audit.metrics)
    plotted = {"golden_set": audit.questions["echo"].tolist()}
    plotted.update({label: values or [] for label, values in echoes.items()})
    write_json(ECHO_PLOT, echo_quantile_rows(plotted))
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
    run_stage(main, AuditStage)
