"""goldenset.evaluate: a run and qrels as ranx, BEIR and pytrec_eval write them, scored by the
stage's code; every measure it offers against pytrec_eval on random runs with ties."""

from __future__ import annotations

import numpy as np
import pytest

import goldenset
from goldenset.core.errors import GoldensetError
from tests.conftest import ROOT
from tests.evaluation.test_ranking import our_and_trec_names, random_collection, trec_eval_scores


def judged_means(qrels: dict, run: dict, ks: list[int]) -> dict[str, float]:
    """pytrec_eval's mean of each measure over the queries with a relevant document; a query
    the run leaves out scores 0 (trec_eval -c)."""
    judged = [qid for qid, grades in qrels.items() if any(g > 0 for g in grades.values())]
    trec = trec_eval_scores(qrels, {qid: run.get(qid, {}) for qid in judged}, ks)
    return {
        ours: float(np.mean([trec[qid][theirs] if qid in trec else 0.0 for qid in judged]))
        for ours, theirs in our_and_trec_names(ks)
    }


@pytest.mark.parametrize("seed", range(40))
def test_evaluate_equals_pytrec_eval_on_random_runs_with_ties(seed):
    rng = np.random.default_rng(seed)
    qrels, run, _, ks = random_collection(rng, graded=bool(seed % 2), tied=seed % 4 < 2)
    if not any(g > 0 for grades in qrels.values() for g in grades.values()):
        qrels["q0"] = {next(iter(run["q0"]), "only"): 1}
    expected = judged_means(qrels, run, ks)
    ours = goldenset.evaluate(qrels, run, list(expected))
    assert ours == pytest.approx(expected, abs=1e-9, nan_ok=True)
    per_query = goldenset.evaluate(qrels, run, "mrr", per_query=True)["mrr"]
    assert np.mean(list(per_query.values())) == pytest.approx(ours["mrr"], abs=1e-12)


def test_a_query_the_run_leaves_out_scores_zero_and_one_without_relevant_documents_is_left_out():
    qrels = {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d3": 0}}
    run = {"a": {"d1": 2.0, "d2": 1.0}}
    assert goldenset.evaluate(qrels, run, ["hit@1"], per_query=True) == {
        "hit@1": {"a": 1.0, "b": 0.0}
    }


def test_the_document_view_ranks_each_document_at_its_best_chunk():
    rng = np.random.default_rng(7)
    documents = {f"c{i}": f"d{i // 3}" for i in range(30)}
    run = {
        f"q{q}": {chunk: float(s) for chunk, s in zip(documents, rng.permutation(30), strict=True)}
        for q in range(6)
    }
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(1, 3)) for d in rng.choice(10, 2)} for q in range(6)
    }
    qrels["q0"]["d99"] = 1  # judged, in no run: a relevant document never retrieved
    best: dict[str, dict[str, float]] = {}
    for qid, scored in run.items():
        for chunk, score in scored.items():
            kept = best.setdefault(qid, {})
            kept[documents[chunk]] = max(kept.get(documents[chunk], -1.0), score)
    ks = [1, 3, 5]
    expected = judged_means(qrels, best, ks)
    names = [f"doc_{name}" for name in expected]
    ours = goldenset.evaluate(qrels, run, names, documents=documents)
    assert ours == pytest.approx({f"doc_{n}": v for n, v in expected.items()}, abs=1e-9)


@pytest.mark.parametrize(
    ("metrics", "documents", "says"),
    [
        (["map"], None, "'map' is not a metric of this view"),
        (["context_recall@512"], None, "is not a metric of this view"),
        (["doc_mrr"], None, "their doc_ forms need documents="),
        (["mrr"], {"c1": "d1"}, "(e.g. doc_ndcg@10, doc_mrr)"),
        (["doc_mrr"], {"c2": "d1"}, "ranks chunk 'c1', which documents= maps to no document"),
        ([], None, "name at least one metric"),
    ],
)
def test_a_metric_it_cannot_compute_is_a_clear_error(metrics, documents, says):
    with pytest.raises(GoldensetError, match=None) as error:
        goldenset.evaluate({"q": {"d1": 1}}, {"q": {"c1": 1.0}}, metrics, documents=documents)
    assert says in str(error.value)


def test_the_api_page_shows_what_its_example_prints(capsys):
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = page[page.index("## Evaluating a run") :]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 5 + 1  # five lines, and a blank one
    exec(compile(code, "docs/api.md", "exec"), {})
    assert capsys.readouterr().out == shown
