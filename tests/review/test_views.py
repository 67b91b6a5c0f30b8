"""The review's pure parts: its order, what a screen shows, and what the stages take from it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import Verdicts
from goldenset.judge.model import WEIGHTS, judge_weights
from goldenset.review.pass_shares import judge_against_person, person_estimate
from goldenset.review.queue import review_order
from goldenset.review.verdicts import verdict_row
from goldenset.review.views import Document, marked, missed, query_view, ranked_view


def verdicts_of(kinds: dict[str, str], drawn: str = "random") -> Verdicts:
    rows = {
        (qid, "me"): verdict_row({"qid": qid}, kind, "", "me", drawn) for qid, kind in kinds.items()
    }
    return Verdicts(rows, list(rows.values()))


def test_the_order_is_a_seeded_sample_then_the_least_sure():
    qids = [f"q{i}" for i in range(20)]
    judged = {qid: i / 20 for i, qid in enumerate(qids)}
    order = review_order(qids, judged, sample=5, seed=3)
    assert order == review_order(qids, judged, sample=5, seed=3)
    assert sorted(qid for qid, _ in order) == sorted(qids)  # every question once
    first, rest = order[:5], order[5:]
    assert {drawn for _, drawn in first} == {"random"}
    distance = [abs(judged[qid] - 0.5) for qid, _ in rest]
    assert distance == sorted(distance) and {drawn for _, drawn in rest} == {"least_sure"}
    assert [qid for qid, _ in first] != qids[:5]  # shuffled
    unread = review_order(qids, {}, sample=5, seed=3)
    assert {drawn for _, drawn in unread} == {"random"}


def test_the_evidence_is_cut_out_in_characters_not_bytes():
    text = "Ünïcödé 🧬 header. Le gène BRCA1 répare l’ADN. Fin."
    start = text.index("Le gène")
    end = text.index(" Fin")
    view = query_view(
        {"qid": "q", "question": "?", "doc_id": 1, "evidence_start": start, "evidence_end": end},
        Document("Titre", text),
        context=5,
    )
    assert view["text"][1] == "Le gène BRCA1 répare l’ADN."
    assert view["text"][0] == text[start - 5 : start] and view["text"][2] == " Fin."
    assert view["cut"] == [True, False]
    assert marked("abc", -3, 99) == ["", "abc", ""] and marked("abc", 5, 9) == ["abc", "", ""]
    assert view["place"] == ""


def test_a_pdf_question_shows_its_page_and_a_word_question_its_heading():
    row = {"qid": "q", "question": "?", "doc_id": "m.pdf", "evidence_start": 0, "evidence_end": 2}
    assert query_view({**row, "page": 12}, Document("M", "abc"), 5)["place"] == "p. 12"
    heading = query_view({**row, "heading": "Setup > Cables"}, Document("M", "abc"), 5)
    assert heading["place"] == "§ Setup > Cables"


@pytest.mark.slow
def test_misses_as_the_score_stage_writes_them_never_ranked_first(tmp_path):
    """With score.depth 2, BM25 never ranks some questions' evidence (results.parquet's <NA>):
    they come first, in file order, then every other question BM25 did not rank first, lowest
    rank first."""
    from tests.calibrate.test_calibrate import write_inputs, write_params
    from tests.stage_runs import run_stage

    write_inputs(tmp_path)
    write_params(tmp_path, score={"depth": 3})
    golden = {
        row["qid"]: row for row in map(json.loads, (tmp_path / "data/goldenset.jsonl").open())
    }
    for stage in ["chunk", "embed", "score"]:
        assert run_stage(stage, tmp_path).returncode == 0
    results = pd.read_parquet(tmp_path / "data/results.parquet")
    results = results[results["query_set"] == "synthetic"]
    bm25 = results[results["retriever"] == "bm25"].set_index("qid")["first_relevant_rank"]
    never = [qid for qid, rank in bm25.items() if pd.isna(rank)]  # as written: <NA>, not 0
    assert never
    ranked_lower = sorted(
        (qid for qid, rank in bm25.items() if not pd.isna(rank) and rank > 1),
        key=lambda qid: -bm25[qid],
    )
    assert missed(results, "bm25") == [*never, *ranked_lower]
    unranked = results[(results["retriever"] == "bm25") & results["first_relevant_rank"].isna()]
    query = golden[unranked.iloc[0]["qid"]]
    assert ranked_view(unranked.iloc[0], query, pd.DataFrame(), 5)["rank"] is None


def test_a_ranked_passage_marks_the_evidence_it_holds():
    chunks = pd.DataFrame(
        {"doc_id": ["7", "8"], "start": [10, 0], "end": [30, 20], "text": ["x" * 20, "y" * 20]},
        index=["7#1", "8#0"],
    )
    query = {"doc_id": "7", "evidence_start": 15, "evidence_end": 40}
    row = {"top_ids": ["8#0", "7#1", "store-chunk"], "first_relevant_rank": 2}
    view = ranked_view(row, query, chunks, shown=3)
    assert view["rank"] == 2
    assert view["top"][0]["text"] == ["", "", "y" * 20]  # another document: nothing marked
    assert view["top"][1]["text"] == ["x" * 5, "x" * 15, ""]
    assert view["top"][2]["doc_id"] is None
    assert ranked_view(None, query, chunks, 3) == {"rank": None, "top": []}


def test_the_persons_share_counts_random_draws_of_this_set_only():
    params = ReviewParams(min_verdicts=3)
    verdicts = verdicts_of({"a": "pass", "b": "b", "c": "pass", "gone": "pass"})
    verdicts.latest["c", "me"]["drawn"] = "least_sure"
    share = person_estimate(verdicts, {"a", "b", "c"}, set(), params)
    assert (share["checked"], share["passed"], share["enough"]) == (2, 1, False)
    more = verdicts_of({"a": "pass", "b": "b", "d": "pass"})
    assert person_estimate(more, {"a", "b", "d"}, set(), params)["enough"]


def test_a_failed_question_asked_again_still_counts_as_first_drawn_and_now_is_reported_apart():
    """The tutorial's loop: 10 drawn at random, 4 failed and asked again (new qids, unjudged)."""
    params = ReviewParams(min_verdicts=3)
    kinds = {f"q{i}": "pass" for i in range(6)} | {f"f{i}": "a" for i in range(4)}
    before = person_estimate(verdicts_of(kinds), set(kinds), set(), params)
    assert (before["checked"], before["passed"]) == (10, 6) and "now" not in before
    golden_now = {f"q{i}" for i in range(6)} | {f"new{i}" for i in range(4)}
    after = person_estimate(verdicts_of(kinds), golden_now, {f"f{i}" for i in range(4)}, params)
    assert {key: after[key] for key in before} == before  # the same share as before
    assert (after["replaced"], after["now"]["checked"], after["now"]["passed"]) == (4, 6, 6)


def test_the_judge_is_ranked_against_the_person():
    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(40)]
    probabilities = pd.Series(rng.random(40), index=qids)
    kinds = {qid: ("pass" if rng.random() < p else "a") for qid, p in probabilities.items()}
    verdicts = verdicts_of(kinds)
    found = judge_against_person(probabilities.iloc[:30], verdicts, ReviewParams())
    passed = [kinds[qid] == "pass" for qid in qids[:30]]
    assert found == {
        "questions": 30,
        "auc": round(roc_auc_score(passed, probabilities.iloc[:30]), 4),
    }
    one_way = verdicts_of({"q1": "pass"})
    assert judge_against_person(probabilities, one_way, ReviewParams())["auc"] is None


def test_the_audit_reads_the_judge_refitted_with_the_teams_verdicts_once_it_exists(tmp_path):
    params = ReviewParams(folder=str(tmp_path / "review"))
    assert judge_weights(params.judge_path) == WEIGHTS  # the shipped judge until `review --refit`
    params.judge_path.parent.mkdir()
    params.judge_path.write_text(WEIGHTS.read_text())
    assert judge_weights(params.judge_path) == params.judge_path
