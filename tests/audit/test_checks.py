"""The audit of a golden set, without disk: echo, look-ups, duplicates, real queries, report."""

from __future__ import annotations

import itertools
import random
import re

import numpy as np
import pandas as pd
import pytest

from goldenset.audit.checks import (
    Acceptance,
    Audit,
    ChanceLimit,
    chance_flags,
    document_chance,
    document_indexes,
    echo_quantile_rows,
    is_definitional,
    near_duplicate_pairs,
    opening,
    real_query_echoes,
    render_report,
    run_audit,
)
from goldenset.core.echo import overlap
from goldenset.core.params import AuditParams
from goldenset.generation.dedupe import near_duplicates

TEXTS = {
    "d1": "Backups. The backup job runs nightly at two and copies every volume to tape storage.",
    "d2": "Restores. Restoring a volume needs a ticket to the storage team and takes one day.",
    "d3": "Billing. Invoices are sent monthly; disputes go to the finance desk within thirty days.",
}
EVIDENCE = {
    "d1": "The backup job runs nightly at two and copies every volume to tape storage.",
    "d2": "Restoring a volume needs a ticket to the storage team and takes one day.",
    "d3": "Invoices are sent monthly; disputes go to the finance desk within thirty days.",
}
DOCUMENTS = document_indexes(pd.DataFrame({"doc_id": list(TEXTS), "text": list(TEXTS.values())}))
STATS = {"answers": 5, "yield": 0.6, "rejects": {"evidence_not_in_passage": 2}}
PARAMS = AuditParams(sample_size=2, seed=3)


def golden(questions: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"qid": f"q{i}", "question": q, "doc_id": d, "evidence": EVIDENCE[d]}
            for i, (d, q) in enumerate(questions.items())
        ]
    )


def orthogonal(n: int) -> np.ndarray:
    return np.eye(n, 8, dtype=np.float32)


ECHOING = golden(
    {
        "d1": "When does the backup job that copies every volume to tape storage run?",
        "d2": "Restoring a volume needs a ticket to which storage team?",
        "d3": "Where do disputes go when invoices are sent monthly, the finance desk?",
    }
)
PARAPHRASED = golden(
    {
        "d1": "When do our servers get saved to tape, and where do the copies end up?",
        "d2": "How can I get a deleted volume back?",
        "d3": "Who handles a wrong charge on my invoice?",
    }
)


def test_a_golden_set_that_echoes_its_evidence_is_flagged():
    audit = run_audit(ECHOING, DOCUMENTS, orthogonal(3), STATS, PARAMS, {})
    m = audit.metrics
    assert m["overlap_evidence"]["median"] == 1.0 and m["echo"]["median"] == 1.0
    assert m["echo_share"] == 1.0
    assert m["flags"] == 1 and audit.flags[0].startswith("echo: 100% of questions")
    calm = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {})
    assert calm.metrics["echo_share"] == 0.0 and calm.flags == []
    assert calm.metrics["echo"]["median"] < 0.5


def test_echo_beyond_real_queries_is_flagged_and_both_are_measured_the_same_way():
    queries = pd.DataFrame({"qid": ["r1", "r2"], "text": ["nightly tape archives", "money back"]})
    qrels = pd.DataFrame(
        {"qid": ["r1", "r2", "r2"], "doc_id": ["d1", "d3", "d2"], "grade": [1, 1, 0]}
    )
    echoes = real_query_echoes(queries, qrels, DOCUMENTS)
    assert echoes == [pytest.approx(2 / 3), 0.0]  # the grade-0 judgment is not relevant
    audit = run_audit(ECHOING, DOCUMENTS, orthogonal(3), STATS, PARAMS, {"real_queries": echoes})
    real = audit.metrics["real_queries"]
    assert real["pairs"] == 2 and real["echo"]["median"] == pytest.approx(0.3333, 1e-3)
    assert audit.metrics["echo_median_gap"] == pytest.approx(0.6667, 1e-3)
    assert any("real queries 0.33" in flag and "flatter" in flag for flag in audit.flags)


@pytest.mark.parametrize(
    ("reason", "fix"),
    [
        ("generate.form: question", "generate.form: auto writes the users' form"),
        ("auto: no example query, so questions", "give generate.example_queries in their form"),
    ],
)
def test_a_golden_set_in_another_form_than_the_users_is_flagged_with_its_fix(reason, fix):
    stats = {**STATS, "form": "question", "form_reason": reason}
    claims = ("real_queries", "claim")
    audit = run_audit(
        PARAPHRASED, DOCUMENTS, orthogonal(3), stats, PARAMS, {}, reference_form=claims
    )
    assert audit.metrics["form_reason"] == reason
    assert audit.flags == [
        f"form: the golden set is written as questions ({reason}); "
        f"most real queries are claims: {fix}"
    ]
    alike = run_audit(
        PARAPHRASED,
        DOCUMENTS,
        orthogonal(3),
        stats,
        PARAMS,
        {},
        reference_form=("real_queries", "question"),
    )
    assert alike.flags == []


def test_figures_from_generation_and_coverage():
    audit = run_audit(PARAPHRASED.iloc[:2], DOCUMENTS, orthogonal(2), STATS, PARAMS, {})
    m = audit.metrics
    assert (m["questions"], m["answers"], m["yield"]) == (2, 5, 0.6)
    assert m["rejects"] == {"total": 2, "evidence_not_in_passage": 2}
    assert (m["documents_covered"], m["documents"]) == (2, 3)
    empty = run_audit(PARAPHRASED.iloc[:0], DOCUMENTS, orthogonal(0), {}, PARAMS, {})
    assert set(empty.metrics["echo"].values()) == {None}
    assert empty.metrics["echo_share"] is None and empty.flags == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is BM25?", True),
        ("what are the storage tiers", True),
        ("Who was the first director?", True),
        ("What is a tape library?", True),
        ("What is the effect of nightly backups on restore time?", False),
        ("How long does a restore take?", False),
        ("Why is the backup job run at two?", False),
    ],
)
def test_definitional_look_ups(question, expected):
    assert is_definitional(question) is expected


def test_look_ups_are_counted_and_flagged():
    lookups = golden({"d1": "What is tape storage?", "d2": "What is a ticket?", "d3": "Who pays?"})
    audit = run_audit(lookups, DOCUMENTS, orthogonal(3), STATS, PARAMS, {})
    assert audit.metrics["definitional_share"] == pytest.approx(0.6667, 1e-3)
    assert any(flag.startswith("look-ups: 67%") for flag in audit.flags)


def test_near_duplicates_by_embedding_cosine():
    vectors = np.array([[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0, 0, 2]], dtype=np.float32)
    pairs = near_duplicate_pairs(vectors, 0.9)
    assert [(i, j) for i, j, _ in pairs] == [(0, 1)] and pairs[0][2] > 0.99
    audit = run_audit(PARAPHRASED, DOCUMENTS, vectors[:3], STATS, PARAMS, {})
    assert audit.metrics["near_duplicates"] == 1
    assert any(flag.startswith("duplicates: 1 questions") for flag in audit.flags)


def test_generation_drops_lexical_near_duplicates_and_keeps_the_first():
    questions = [
        "How often does the backup job copy volumes to tape?",
        "How long does a restore take?",
        "How often does the backup job copy the volumes to tape?",
        "Which team handles restores of volumes?",
    ]
    assert near_duplicates(questions, 0.9) == {2: (0, pytest.approx(1.0))}
    assert near_duplicates(questions, 1.0) == {2: (0, pytest.approx(1.0))}
    assert near_duplicates(["?", "?"], 0.5) == {}  # no content words, nothing to compare


def test_report_shows_figures_flags_worst_echoes_duplicates_and_a_seeded_sample():
    vectors = np.array([[1, 0], [1, 0.01], [0, 1]], dtype=np.float32)
    audit = run_audit(ECHOING, DOCUMENTS, vectors, STATS, PARAMS, {})
    report = render_report(audit, PARAMS)
    assert report == render_report(audit, PARAMS)
    for heading in ["## Figures", "## Flags", "## Worst echoes", "## Near-duplicate", "## Random"]:
        assert heading in report
    assert "| echo.median | 1.0 |" in report
    assert "> The backup job runs nightly" in report
    sample = report.split("## Random sample (seed 3)")[1]
    assert sample.count("- **") == 2
    other = render_report(audit, AuditParams(sample_size=2, seed=4)).split("## Random sample")[1]
    assert other.count("- **") == 2


def sampled_qids(report: str) -> list[str]:
    sample = report.split("## Random sample")[1]
    return re.findall(r"^- \*\*.*\*\* \((q\d+),", sample, flags=re.MULTILINE)


def test_random_sample_is_the_seeded_sample_of_the_questions_in_order():
    many = pd.DataFrame(
        [
            {"qid": f"q{i}", "question": f"Question {i}?", "doc_id": d, "evidence": EVIDENCE[d]}
            for i, d in enumerate(["d1", "d2", "d3"] * 4)
        ]
    )
    vectors = orthogonal(len(many))
    picks = {}
    for seed in (3, 4):
        params = AuditParams(sample_size=4, seed=seed)
        report = render_report(run_audit(many, DOCUMENTS, vectors, STATS, params, {}), params)
        # the documented draw: random.Random(seed).sample of the row positions, in order
        expected = sorted(random.Random(seed).sample(range(len(many)), 4))
        picks[seed] = sampled_qids(report)
        assert picks[seed] == [f"q{i}" for i in expected]
    assert picks[3] != picks[4]


FILLER = " ".join(
    f"Section {i}. The quarterly report lists revenue, costs, staff, offices and suppliers."
    for i in range(2000)
)
# more than a window of words that no question here uses, between the evidence and the filler
PADDING = " ".join(["Nothing further was noted on this page."] * 20)


def test_echo_is_the_same_on_a_short_and_a_very_long_document():
    # the same evidence alone, and between ~200k characters of a filing that holds the question's
    # other words: the whole-document share counted 'revenue' and 'costs' as echoed words
    question = "When does the backup job copy volumes to tape, and what revenue costs?"
    long_text = " ".join([FILLER, PADDING, TEXTS["d1"], PADDING, FILLER])
    assert len(long_text) > 200_000
    assert overlap(question, long_text) > overlap(question, TEXTS["d1"])  # the old measure
    rows = golden({"d1": question}).assign(doc_id="s")
    echoes = [
        run_audit(
            rows,
            document_indexes(pd.DataFrame({"doc_id": ["s"], "text": [text]})),
            orthogonal(1),
            STATS,
            PARAMS,
            {},
        ).metrics["echo"]
        for text in (TEXTS["d1"], long_text)
    ]
    assert echoes[0] == echoes[1]
    assert echoes[0]["median"] == pytest.approx(overlap(question, TEXTS["d1"]))


def test_the_judges_estimate_comes_with_an_interval_and_its_trust_and_flags_below_the_bar():
    probabilities = pd.DataFrame(
        {"answered": [0.9, 0.8, 0.1], "specific": [0.9, 0.9, 0.9], "pass": [0.8, 0.7, 0.0]},
        index=PARAPHRASED["qid"],  # by qid: the judge reads the set as written
    )
    judged = Acceptance(probabilities, {"answered": 0.85, "specific": 0.7, "pass": 0.8})
    audit = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}, judged)
    estimates = audit.metrics["judge"]
    assert estimates["pass"]["estimate"] == pytest.approx(0.5)
    assert estimates["pass"]["low"] <= 0.5 <= estimates["pass"]["high"]
    assert estimates["pass"]["trusted"] and not estimates["specific"]["trusted"]
    assert any(flag.startswith("judge: an estimated 50% [") for flag in audit.flags)
    assert audit.table["p_pass"].tolist() == [0.8, 0.7, 0.0]
    # the checks read the set as scored: a question left out has no row, a fixed one no reading
    scored = PARAPHRASED.iloc[1:].assign(qid=["fx-1", PARAPHRASED["qid"].iloc[2]])
    applied = run_audit(scored, DOCUMENTS, orthogonal(2), STATS, PARAMS, {}, judged)
    assert applied.table["p_pass"].tolist()[1] == 0.0 and np.isnan(applied.table["p_pass"][0])
    assert applied.metrics["judge"]["pass"]["estimate"] == pytest.approx(0.5)  # as written
    report = render_report(audit, PARAMS)
    assert "judge: pass 0.00 (answered 0.10, specific 0.90)" in report
    lenient = AuditParams(min_pass_share=0.5, sample_size=2)
    calm = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, lenient, {}, judged)
    assert not any(flag.startswith("judge:") for flag in calm.flags)
    unjudged = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {})
    assert "judge" not in unjudged.metrics and "p_pass" not in unjudged.table
    # a refitted judge is named, with its own held-out AUC
    refitted = Acceptance(probabilities, {**judged.aucs, "pass": 0.66}, "review/judge.json")
    named = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}, refitted)
    assert named.metrics["judge"]["refitted"] == "review/judge.json"
    assert any(
        "the judge refitted with your verdicts (review/judge.json) ranks held-out labels at ROC "
        "AUC 0.66" in flag
        for flag in named.flags
    )


def test_without_real_queries_the_gap_is_taken_against_labelled_questions():
    labelled = [0.25, 0.25, 0.5]
    audit = run_audit(
        ECHOING, DOCUMENTS, orthogonal(3), STATS, PARAMS, {"labelled_queries": labelled}
    )
    assert audit.metrics["labelled_queries"]["echo"]["median"] == 0.25
    assert audit.metrics["echo_gap_against"] == "labelled_queries"
    assert audit.metrics["echo_median_gap"] == pytest.approx(audit.metrics["echo"]["median"] - 0.25)
    assert any("labelled queries 0.25" in flag for flag in audit.flags)
    # real queries, where there are some, are the reference; labelled ones are still measured
    both = run_audit(
        ECHOING,
        DOCUMENTS,
        orthogonal(3),
        STATS,
        PARAMS,
        {"real_queries": [1.0], "labelled_queries": labelled},
    )
    assert both.metrics["echo_gap_against"] == "real_queries"
    assert both.metrics["labelled_queries"]["pairs"] == 3


def test_a_golden_set_vaguer_than_real_queries_is_flagged_too():
    echoes = [1.0, 1.0, 1.0]
    audit = run_audit(
        PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {"real_queries": echoes}
    )
    assert audit.metrics["echo_median_gap"] < -PARAMS.echo_median_tolerance
    assert any("drops the terms real users type" in flag for flag in audit.flags)


def test_document_chance_is_k_over_n_for_one_document_among_n():
    doc_ids = [f"d{i}" for i in range(20)]
    chance = document_chance(["d3", "d7", "missing"], doc_ids, [1, 5])
    assert chance["doc_hit@1"] == pytest.approx(1 / 20)
    assert chance["doc_hit@5"] == pytest.approx(5 / 20)  # C(19, 5) / C(20, 5) = 15 / 20 missed
    assert chance["doc_recall@5"] == pytest.approx(5 / 20)
    assert chance["doc_mrr"] == pytest.approx(sum(1 / i for i in range(1, 21)) / 20)
    assert document_chance(["missing"], doc_ids, [1]) == {}


def test_a_metric_a_random_ranking_already_scores_is_flagged_with_its_fix():
    chance = document_chance(["d1"], ["d0", "d1", "d2", "d3"], [1, 3])
    (flag,) = chance_flags(chance, 4, 0.3)  # one line, however many metrics
    # flagged: above 0.3; hit@1, recall@1 and precision@k are 0.25
    named = flag.split(" scores ")[1].split(", above")[0].split(", ")
    assert [entry.split()[0] for entry in named] == [
        "doc_recall@3",
        "doc_hit@3",
        "doc_ndcg@3",
        "doc_mrr",
    ]
    assert flag.endswith("more documents, or smaller k")
    assert "doc_hit@3 0.75," in flag
    assert chance_flags(chance, 4, 1.0) == []


def test_echo_quantiles_are_reported_and_plotted_side_by_side():
    audit = run_audit(
        ECHOING, DOCUMENTS, orthogonal(3), STATS, PARAMS, {"real_queries": [0.1, 0.2, 0.3, 0.4]}
    )
    real = audit.metrics["real_queries"]["echo"]
    assert [real[name] for name in ("p10", "p25", "median", "p75", "p90")] == pytest.approx(
        [0.13, 0.175, 0.25, 0.325, 0.37]
    )
    rows = echo_quantile_rows({"golden_set": [0.5, 1.0], "real_queries": [0.1, 0.3], "none": []})
    assert [row["quantile"] for row in rows][:3] == [0.05, 0.1, 0.15] and len(rows) == 19
    middle = rows[9]
    assert middle == {"quantile": 0.5, "golden_set": 0.75, "real_queries": 0.2, "none": None}
    assert (rows[0]["golden_set"], rows[0]["real_queries"]) == pytest.approx((0.525, 0.11))


def test_the_audit_adds_the_document_views_chance_and_counts_its_flag():
    limit = ChanceLimit([1, 3], 0.3)
    audit = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}, chance=limit)
    chance = audit.metrics["chance"]
    assert chance["documents"] == 3 and chance["doc_hit@3"] == pytest.approx(1.0)
    assert audit.flags[-1].startswith("chance: a random ranking of the 3 documents scores")
    assert audit.metrics["flags"] == len(audit.flags)
    assert list(audit.metrics)[-2:] == ["flags", "chance"]  # metrics/audit.json's order
    assert (
        "chance" not in run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}).metrics
    )


def test_the_opening_says_the_verdict_in_at_most_30_lines_of_100_characters():
    review = {
        "person": {"checked": 10, "passed": 4, "estimate": 0.4, "low": 0.17, "high": 0.69}
        | {"replaced": 6, "now": {"checked": 4, "passed": 4, "estimate": 1.0, "low": 0.51}}
        | {"now": {"checked": 4, "passed": 4, "estimate": 1.0, "low": 0.51, "high": 1.0}},
        "agreement": [
            {"labellers": ["ann", "bob"], "questions": 9, "agreed": 7, "share": 0.7778}
            | {"kappa": 0.5}
        ],
    }
    flags = [f"flag {i}: " + "word " * 40 for i in range(25)]
    audit = Audit({"questions": 12, "review": review}, flags, pd.DataFrame(), [])
    lines = opening(audit)
    assert len(lines) <= 30 and max(map(len, lines)) <= 100
    assert lines[2:5] == [
        "- a person, on questions drawn at random: 4 of 10 pass, 40% [17%, 69%]",
        "  - of the set as it is now (6 failed asked again): 4 of 4 pass, 100% [51%, 100%]",
        "- agreement: 7 of 9 (78%), Cohen's kappa 0.50: ann and bob",
    ]
    assert lines[-1] == "  - and 15 more, under Flags"


def test_the_opening_names_the_pairs_of_labellers_that_judged_most_and_counts_the_rest():
    people = [f"p{i}" for i in range(8)]  # 28 pairs
    agreement = [
        {"labellers": [a, b], "questions": 5 + i, "agreed": 5, "share": 5 / (5 + i), "kappa": None}
        for i, (a, b) in enumerate(itertools.combinations(people, 2))
    ]
    person = {"checked": 10, "passed": 4, "estimate": 0.4, "low": 0.17, "high": 0.69}
    review = {"person": person, "agreement": agreement}
    flags = [f"flag {i}" for i in range(25)]
    calibration = ["- calibrate: x"] + [f"  - group {i}" for i in range(4)]
    lines = opening(Audit({"questions": 12, "review": review}, flags, pd.DataFrame(), []))
    assert len(lines) + len(calibration) <= 30
    named = [line for line in lines if line.startswith("- agreement")]
    assert [line.split(": ")[-1] for line in named] == ["p6 and p7", "p5 and p7", "p5 and p6"]
    assert "  - and 25 more pairs of labellers, in metrics/audit.json (review.agreement)" in lines


def test_the_persons_share_sets_the_flag_once_there_are_enough_verdicts():
    probabilities = pd.DataFrame(
        {"answered": [0.9, 0.8, 0.1], "specific": [0.9, 0.9, 0.9], "pass": [0.8, 0.7, 0.0]},
        index=PARAPHRASED["qid"],  # by qid: the judge reads the set as written
    )
    judged = Acceptance(probabilities, {"answered": 0.85, "specific": 0.7, "pass": 0.8})
    person = {"checked": 30, "passed": 12, "estimate": 0.4, "low": 0.25, "high": 0.58}
    review = {
        "person": {**person, "enough": True, "min_verdicts": 30},
        "judge_against_person": {"questions": 30, "auc": 0.71},
    }
    audit = run_audit(
        PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}, judged, None, review
    )
    flags = [flag for flag in audit.flags if flag.startswith(("judge:", "review:"))]
    assert flags == [
        "review: a person passed 40% [25%, 58%] of 30 questions drawn at random "
        "(audit.min_pass_share 70%); the ones failed are not scored (review.leave_out_failed): "
        "review the rest with `goldenset review`"
    ]
    report = render_report(audit, PARAMS, ["- the people's section"])
    opening = report.split("## Figures")[0].splitlines()
    assert opening[4] == "- a person, on questions drawn at random: 12 of 30 pass, 40% [25%, 58%]"
    assert opening[5].startswith("- the judge: 50% [") and opening[6] == "- flags: 1:"
    assert opening[7].startswith("  - review: a person passed 40%") and len(opening[7]) == 100
    assert "## People's review\n\n- the people's section\n" in report
    assert audit.metrics["review"] == review
    few = {**review, "person": {**review["person"], "checked": 9, "enough": False}}
    audit = run_audit(PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}, judged, None, few)
    (flag,) = [flag for flag in audit.flags if flag.startswith(("judge:", "review:"))]
    assert flag.startswith("judge: an estimated 50% [")
    assert "9 of review.min_verdicts 30 random-sample verdicts" in flag
    passed = {**review, "person": {**review["person"], "estimate": 0.8}}
    audit = run_audit(
        PARAPHRASED, DOCUMENTS, orthogonal(3), STATS, PARAMS, {}, judged, None, passed
    )
    assert not [flag for flag in audit.flags if flag.startswith(("judge:", "review:"))]
