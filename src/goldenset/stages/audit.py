"""audit: golden set, documents, question vectors, the reference query sets (real and labelled) ->
metrics/audit.json and reports/audit.md (the judge's estimate of the share a strict reviewer
accepts, how much the questions echo their source, look-ups, duplicates, coverage).

The golden set as written (data/goldenset.jsonl) is the writer's: the judge reads it and people's
verdicts are counted on it. The set as people left it (data/applied.jsonl) is what is scored: the
echo, duplicate, coverage and chance checks read it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
from pydantic import Field

from goldenset.audit.acceptance import judge, judge_sample
from goldenset.audit.checks import (
    Acceptance,
    ChanceLimit,
    calibration_lines,
    document_indexes,
    echo_quantile_rows,
    reference_echoes,
    reference_form,
    render_report,
    run_audit,
)
from goldenset.audit.rarest import rarest_word_figures
from goldenset.core.errors import GoldensetError
from goldenset.core.files import file_md5, write_atomically, write_json, write_parquet
from goldenset.core.params import AuditParams, ReviewParams, StageParams
from goldenset.core.paths import (
    APPLIED,
    AUDIT_METRICS,
    AUDIT_REPORT,
    CALIBRATION_METRICS,
    DOCUMENTS,
    ECHO_PLOT,
    EMBEDDINGS,
    GENERATE_STATS,
    GOLDENSET,
    JUDGE_PROBABILITIES,
)
from goldenset.core.stage import run_stage
from goldenset.core.vectors import read_vectors
from goldenset.corpus.queries import read_goldenset
from goldenset.corpus.querysets import read_query_sets
from goldenset.judge.model import judge_weights
from goldenset.review.pass_shares import review_metrics, review_section
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.reviewed import read_reviewed

log = logging.getLogger("goldenset")


class AuditStage(StageParams):
    audit: AuditParams = Field(default_factory=AuditParams)
    score: ScoreParams = Field(default_factory=ScoreParams)
    review: ReviewParams = Field(default_factory=ReviewParams)


def main(params: AuditStage) -> None:
    Path(params.audit.cache_dir).mkdir(parents=True, exist_ok=True)  # a DVC output, even empty
    texts = pd.read_parquet(DOCUMENTS, columns=["doc_id", "text"])
    documents = document_indexes(texts)
    query_sets = read_query_sets()
    [golden_set] = [questions for questions in query_sets.values() if questions.entry.golden]
    applied, written = with_evidence(golden_set.table), with_evidence(read_goldenset(GOLDENSET))
    try:
        stats = json.loads(GENERATE_STATS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GoldensetError(f"{GENERATE_STATS} not found: run `dvc repro generate`") from None
    vectors = read_vectors(EMBEDDINGS, golden_set.name, golden_set.qids)
    echoes = reference_echoes(query_sets, documents)
    by_id = dict(zip(texts["doc_id"], texts["text"], strict=True))
    rarest = rarest_word_figures(by_id, applied, query_sets)
    # the writer's quality and the judge: the set as written; the checks: the set as scored
    reviewed = read_reviewed(params.review, Path("."), written.to_dict("records"))
    verdicts = reviewed.verdicts
    weights = judge_weights(params.review.judge_path)
    read = judge(written, documents, params.audit, set(verdicts.by_qid), weights)
    acceptance = None
    if read is not None:  # the set's share: from the seeded sample alone
        sampled = read.probabilities.loc[judge_sample(written, params.audit)]
        acceptance = Acceptance(by_qid(sampled, written), read.aucs)
    p_pass = by_qid(read.probabilities, written)["pass"] if read else pd.Series(dtype=float)
    reasked = set(stats.get("reasked", []))  # failed questions generate asked again
    review = review_metrics(
        verdicts, set(written["qid"]), reasked, p_pass, params.review, reviewed.carried
    )
    chance = ChanceLimit(params.score.ks, params.score.max_chance)
    audit = run_audit(
        applied,
        documents,
        vectors,
        stats,
        params.audit,
        echoes,
        acceptance,
        chance,
        review.metrics if review else None,
        reference_form(query_sets),
        rarest,
    )
    write_judge_probabilities(written, read)
    write_json(AUDIT_METRICS, audit.metrics)
    plotted = {"golden_set": audit.table["echo"].tolist()}
    plotted.update({label: values or [] for label, values in echoes.items()})
    write_json(ECHO_PLOT, echo_quantile_rows(plotted))
    section = review_section(review, audit.metrics) if review else []
    calibrated = calibration_lines(read_calibration(), file_md5(APPLIED))
    write_atomically(AUDIT_REPORT, render_report(audit, params.audit, section, calibrated))
    m = audit.metrics
    passing = m.get("judge", {}).get("pass", {})
    judge_line = (
        "strict pass share {estimate} [{low}, {high}] by the judge".format(**passing)
        if passing
        else "no judge (audit.judge_sample: 0)"
    )
    log.info(
        "audit: %d questions, echo median %s (real queries %s), echo share %s, %s, "
        "'what is' share %s, %d near-duplicates; see %s",
        m["questions"],
        m["echo"]["median"],
        m.get("real_queries", {}).get("echo", {}).get("median", "n/a"),
        m["echo_share"],
        judge_line,
        m["definitional_share"],
        m["near_duplicates"],
        AUDIT_REPORT,
    )
    for flag in audit.flags:
        log.warning("audit: %s", flag)


def read_calibration() -> dict | None:
    """metrics/calibration.json, which `goldenset calibrate` writes (no stage's output, and not
    this stage's dependency: the opening quotes it while its md5 is the golden set's); None when
    absent or unreadable."""
    try:
        return json.loads(CALIBRATION_METRICS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:
        log.warning("audit: %s is not JSON: run `goldenset calibrate` again", CALIBRATION_METRICS)
        return None


def with_evidence(golden: pd.DataFrame) -> pd.DataFrame:
    """Golden-set rows with an evidence column (an older set's may lack it)."""
    if "evidence" not in golden:
        golden["evidence"] = pd.Series(dtype=str)
    return golden


def by_qid(probabilities: pd.DataFrame, golden: pd.DataFrame) -> pd.DataFrame:
    """The judge's probabilities by the rows of `golden` they were read from, indexed by qid."""
    return probabilities.set_axis(golden["qid"].iloc[probabilities.index].to_numpy())


def write_judge_probabilities(golden: pd.DataFrame, read: Acceptance | None) -> None:
    """data/judged.parquet: the judge's probabilities by qid, for the review page's order."""
    probabilities = read.probabilities if read else pd.DataFrame(columns=["pass"], dtype=float)
    qids = golden["qid"].iloc[probabilities.index].to_numpy()
    write_parquet(probabilities.assign(qid=qids), JUDGE_PROBABILITIES)


if __name__ == "__main__":
    run_stage(main, AuditStage)
