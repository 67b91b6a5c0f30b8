"""The rarest-word share, on corpora small enough to count by hand."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from goldenset.audit.checks import rarest_word_flags, run_audit
from goldenset.audit.rarest import Corpus, rarest_word_figures, rarest_word_share, terms
from goldenset.core.params import AuditParams
from goldenset.corpus.querysets import QUERY_SETS, QuerySet

DOCUMENTS = {
    "d1": "Aspirin lowers fever in children with influenza.",
    "d2": "Ibuprofen lowers fever and pain in adults.",
    "d3": "Influenza vaccines protect adults and children.",
}


def test_a_query_s_rarest_words_are_its_terms_of_lowest_document_frequency_ties_together():
    corpus = Corpus.of(DOCUMENTS)
    # lowers, fever: 2 documents each; aspirin: 1; the, does: stop words; zebra: not in it
    assert corpus.rarest(*terms(["Does the aspirin lower fever? zebra"])) == {"aspirin"}
    # children, adults, influenza: 2 each, a tie kept whole
    assert corpus.rarest(*terms(["children adults influenza"])) == {
        "children",
        "adults",
        "influenza",
    }
    assert corpus.rarest(*terms(["zebra the of"])) == set()


def test_the_share_counts_queries_whose_rarest_word_is_in_a_relevant_document():
    corpus = Corpus.of(DOCUMENTS)
    queries = [
        "aspirin for a fever",  # aspirin is in d1: carried
        "aspirin for a fever",  # judged on d2, which lacks aspirin: not carried
        "vaccines that protect",  # vaccines, protect tie (1 each), both in d3: carried
        "zebra",  # no known term: not carried
        "pain in adults",  # pain (1) is in d2, one of the two relevant documents: carried
    ]
    relevant = [["d1"], ["d2"], ["d3"], ["d1"], ["d3", "d2"]]
    assert rarest_word_share(corpus, queries, relevant) == pytest.approx(3 / 5)
    assert rarest_word_share(corpus, [], []) is None


def test_the_share_does_not_depend_on_the_order_of_the_queries_or_the_documents():
    corpus = Corpus.of(DOCUMENTS)
    queries = ["children adults", "fever lowers", "influenza adults", "aspirin ibuprofen"]
    relevant = [["d1"], ["d3"], ["d2"], ["d2"]]
    share = rarest_word_share(corpus, queries, relevant)
    order = list(range(len(queries)))
    random.Random(1).shuffle(order)
    shuffled = Corpus.of(dict(reversed(DOCUMENTS.items())))
    assert rarest_word_share(
        shuffled, [queries[i] for i in order], [relevant[i] for i in order]
    ) == pytest.approx(share)
    # children adults: tie, children in d1; fever lowers: tie, neither in d3; influenza adults:
    # tie, adults in d2; aspirin ibuprofen: tie, ibuprofen in d2
    assert share == pytest.approx(3 / 4)


def real_queries(texts: dict[str, str], judged: list[tuple[str, str, float]]) -> QuerySet:
    table = pd.DataFrame({"qid": list(texts), "text": list(texts.values())})
    judgments = pd.DataFrame(judged, columns=["qid", "doc_id", "grade"]).assign(absent="")
    return QuerySet(QUERY_SETS["real"], table, list(texts), list(texts.values()), judgments)


def no_questions(name: str) -> QuerySet:
    return QuerySet(QUERY_SETS[name], pd.DataFrame(), [], [], pd.DataFrame())


GOLDEN = pd.DataFrame(
    {
        "qid": ["g1", "g2", "g3", "g4"],
        "question": ["aspirin and fever", "ibuprofen for pain", "vaccines", "pain in adults"],
        "doc_id": ["d1", "d2", "d3", "d1"],
    }
)


def test_the_audit_sets_the_golden_share_against_the_real_queries_and_flags_a_gap():
    real = real_queries(
        {"r1": "a drug for a child's temperature", "r2": "does a flu shot work", "r3": "aspirin"},
        [("r1", "d1", 1.0), ("r2", "d3", 1.0), ("r3", "d2", 0.0), ("r3", "d1", 2.0)],
    )
    sets = {"real": real, "labelled": no_questions("labelled")}
    figures = rarest_word_figures(DOCUMENTS, GOLDEN, sets)
    # golden: aspirin in d1, ibuprofen in d2, vaccines in d3; pain in adults: pain (1) not in
    # d1. real: child's, temperature, drug, flu, shot, work: none in the corpus; aspirin in d1
    # (the grade-0 judgment is not relevant)
    assert figures == {
        "golden": 0.75,
        "reference": pytest.approx(1 / 3, abs=1e-4),
        "against": "real_queries",
        "gap": pytest.approx(0.4167, abs=1e-4),
    }
    audit = run_audit(
        GOLDEN.assign(evidence=""), {}, np.zeros((4, 2)), {}, AuditParams(), {}, rarest_word=figures
    )
    assert audit.metrics["rarest_word"] == figures
    [flag] = [flag for flag in audit.flags if flag.startswith("rarest word")]
    assert "75% of the questions" in flag and "real queries 33%" in flag
    assert "audit.rarest_word_tolerance 0.1" in flag and "flatter BM25" in flag
    calm = run_audit(
        GOLDEN.assign(evidence=""),
        {},
        np.zeros((4, 2)),
        {},
        AuditParams(rarest_word_tolerance=0.5),
        {},
        rarest_word=figures,
    )
    assert not [flag for flag in calm.flags if flag.startswith("rarest word")]


def test_without_reference_queries_the_audit_gives_the_golden_share_alone():
    sets = {"real": no_questions("real"), "labelled": no_questions("labelled")}
    assert rarest_word_figures(DOCUMENTS, GOLDEN, sets) == {"golden": 0.75}
    assert rarest_word_flags({"golden": 0.75}, 0.1) == []
    below = {"golden": 0.4, "reference": 0.7, "against": "labelled_queries", "gap": -0.3}
    [flag] = rarest_word_flags(below, 0.1)
    assert "labelled queries 70%" in flag and "less often than users do" in flag
