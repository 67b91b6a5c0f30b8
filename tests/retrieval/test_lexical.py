"""The lexical retrievers' options: each reaches the library that ranks, and the defaults rank as
before they existed."""

from __future__ import annotations

import math

import bm25s
import numpy as np
import pytest
from pydantic import ValidationError

from goldenset.core.terms import Analyzer
from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.retrievers.lexical import BM25Params, BM25Scores
from goldenset.retrieval.retrievers.tfidf import TfidfParams, TfidfScores, tfidf_index

DOCUMENTS = [
    "The runner was running in the studies of running shoes.",
    "He runs every morning before his study.",
    "A study of cats and the dogs they live with.",
    "Bread, flour, water and salt: a recipe.",
    "the the the of of and",
]
QUERIES = ["running studies", "the recipe", "cat", "nothing known here"]


def bm25s_scores(texts: list[str], queries: list[str], **index: object) -> np.ndarray:
    """bm25s itself, called as its README shows: the reference the options must reach."""
    retriever = bm25s.BM25(**index)
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    tokens = bm25s.tokenize(queries, stopwords="en", return_ids=False, show_progress=False)
    return np.array(
        [retriever.get_scores(words) if words else np.zeros(len(texts)) for words in tokens]
    )


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_each_bm25_variant_scores_as_bm25s_does(method: str) -> None:
    ours = BM25Scores(DOCUMENTS, QUERIES, k1=1.2, b=0.5, method=method, delta=0.7)
    expected = bm25s_scores(DOCUMENTS, QUERIES, k1=1.2, b=0.5, method=method, delta=0.7)
    assert np.allclose(ours.scores(slice(0, len(QUERIES))), expected, atol=1e-6)


def test_the_variants_differ_so_the_option_is_not_ignored() -> None:
    rows = {
        method: BM25Scores(DOCUMENTS, QUERIES, method=method).scores(slice(0, 1)).round(5).tobytes()
        for method in ["lucene", "robertson", "atire", "bm25l", "bm25+"]
    }
    assert len(set(rows.values())) == 5


def test_the_default_params_rank_as_bm25_did_before_its_options() -> None:
    defaults = BM25Params()
    ours = BM25Scores(DOCUMENTS, QUERIES, analyzer=defaults.analyzer, method=defaults.method)
    expected = bm25s_scores(DOCUMENTS, QUERIES, k1=1.5, b=0.75)
    assert np.allclose(ours.scores(slice(0, len(QUERIES))), expected, atol=1e-6)
    assert (defaults.method, defaults.stemmer, defaults.stopwords) == ("lucene", None, "en")


def test_the_english_stemmer_matches_a_word_to_its_other_forms() -> None:
    documents = ["he runs every day", "a study of cats", "bread and salt"]
    plain = BM25Scores(documents, ["running studies"]).scores(slice(0, 1))[0]
    stemmed = BM25Scores(
        documents, ["running studies"], analyzer=Analyzer(stemmer="english")
    ).scores(slice(0, 1))[0]
    assert plain.tolist() == [0, 0, 0]
    assert stemmed[0] > 0 and stemmed[1] > 0 and stemmed[2] == 0


def test_without_a_stop_list_a_stop_word_counts_and_a_list_of_words_is_left_out() -> None:
    documents = ["the cat", "a dog", "cheese"]
    assert BM25Scores(documents, ["the"]).scores(slice(0, 1)).tolist() == [[0, 0, 0]]
    kept = BM25Scores(documents, ["the"], analyzer=Analyzer(stopwords=None))
    assert kept.scores(slice(0, 1))[0, 0] > 0
    own = BM25Scores(documents, ["cheese dog"], analyzer=Analyzer(stopwords=("cheese",)))
    assert own.scores(slice(0, 1))[0].tolist()[2] == 0 and own.scores(slice(0, 1))[0, 1] > 0


def test_the_bm25_params_refuse_an_unknown_stemmer_or_stop_list_and_name_the_known() -> None:
    with pytest.raises(ValidationError, match="english"):
        BM25Params(stemmer="klingon")
    with pytest.raises(ValidationError, match="en, de"):
        BM25Params(stopwords="klingon")
    with pytest.raises(ValidationError, match="bm25\\+"):
        BM25Params(method="bm26")
    assert BM25Params(stopwords=["a", "b"]).analyzer == Analyzer(("a", "b"), None)


def test_params_yaml_sections_hold_every_option_at_its_default() -> None:
    sections = RetrieversParams()
    assert sections.bm25 == BM25Params()
    assert sections.tfidf == TfidfParams() and not sections.tfidf.enabled


def reference_tfidf(texts: list[str], queries: list[str]) -> np.ndarray:
    """Cosine of sublinear TF-IDF vectors, written out: idf = ln((1 + n) / (1 + df)) + 1."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    def words(text: str) -> list[str]:
        found = bm25s.tokenize(text, stopwords=[], return_ids=False, show_progress=False)[0]
        return [w for w in found if w not in ENGLISH_STOP_WORDS]

    vocabulary = sorted({w for text in texts for w in words(text)})
    df = {w: sum(w in words(text) for text in texts) for w in vocabulary}
    idf = {w: math.log((1 + len(texts)) / (1 + df[w])) + 1 for w in vocabulary}

    def vector(text: str) -> np.ndarray:
        found = words(text)
        row = np.array(
            [(1 + math.log(c)) * idf[w] if (c := found.count(w)) else 0 for w in vocabulary]
        )
        norm = np.linalg.norm(row)
        return row / norm if norm else row

    return np.array([[vector(q) @ vector(t) for t in texts] for q in queries])


def test_tfidf_scores_the_cosine_of_sublinear_tfidf_vectors() -> None:
    vectorizer, items = tfidf_index(DOCUMENTS, TfidfParams())
    ours = TfidfScores(vectorizer, items, QUERIES).scores(slice(0, len(QUERIES)))
    assert ours.dtype == np.float32 and ours.shape == (len(QUERIES), len(DOCUMENTS))
    assert np.allclose(ours, reference_tfidf(DOCUMENTS, QUERIES), atol=1e-6)


def test_tfidf_over_texts_without_a_term_scores_nothing_and_does_not_crash() -> None:
    vectorizer, items = tfidf_index(["", "the a of"], TfidfParams())
    assert TfidfScores(vectorizer, items, ["anything", ""]).scores(slice(0, 2)).tolist() == [
        [0, 0],
        [0, 0],
    ]
