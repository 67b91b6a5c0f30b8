"""A callable retriever's answers are kept by its identity and the question: an unchanged re-run
asks it nothing, a new question is asked alone, and a new version, new code or damaged cache is
handled."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.query_cache import QueryCache, digest, folder_digest
from goldenset.retrieval.retrievers.external import CallableSource, ExternalCallable
from goldenset.retrieval.run import Corpus, Queries

CHUNK_IDS = [f"c{i}" for i in range(6)]
TEXTS = [f"text {i}" for i in range(6)]


class Counting:
    """A retriever that ranks the chunks in reverse, counting the questions it is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, queries, chunk_ids, chunk_texts, k):
        self.asked += queries
        return [[(chunk_ids[-1 - i], np.float32(1.0 / (i + 1))) for i in range(k)] for _ in queries]


def ranked(source: CallableSource, questions: list[str]):
    corpus = Corpus(CHUNK_IDS, TEXTS, np.zeros((6, 2), dtype=np.float32))
    qids = [f"q{i}" for i in range(len(questions))]
    queries = Queries("synthetic", qids, questions, np.zeros((len(questions), 2), np.float32))
    return ExternalCallable(corpus, "external.search:search", source).rank(queries, 3).found


def test_an_unchanged_rerun_asks_nothing_and_a_new_question_is_asked_alone(tmp_path):
    function = Counting()
    cache = QueryCache.open(tmp_path, "store")
    first = ranked(CallableSource(function, cache), ["one", "two"])
    assert function.asked == ["one", "two"] and cache.added == 2
    cache.save()
    reopened = QueryCache.open(tmp_path, "store")
    again = ranked(CallableSource(function, reopened), ["one", "two", "three"])
    assert function.asked == ["one", "two", "three"]  # only the new question
    np.testing.assert_array_equal(again.indices[:2], first.indices)
    np.testing.assert_allclose(again.scores[:2], first.scores)
    assert first.indices[0].tolist() == [5, 4, 3]


def test_saving_writes_only_when_answers_were_added(tmp_path):
    cache = QueryCache.open(tmp_path, "store")
    cache.save()
    assert not (tmp_path / "store.json").exists()
    cache.put("k", ["c1"])
    cache.save()
    assert QueryCache.open(tmp_path, "store").get("k") == ["c1"]


def test_the_identity_changes_with_the_version_and_the_callables_files(tmp_path):
    folder = tmp_path / "external"
    folder.mkdir()
    (folder / "search.py").write_text("def search(): ...\n")
    code = folder_digest(folder)
    assert digest("external.search:search", code, "") != digest("external.search:search", code, "2")
    (folder / "search.py").write_text("def search(): return []\n")
    assert folder_digest(folder) != code
    assert folder_digest(tmp_path / "absent") == digest("")


def test_a_damaged_cache_is_one_line_saying_what_to_do(tmp_path):
    (tmp_path / "store.json").write_text("{not json")
    with pytest.raises(GoldensetError) as caught:
        QueryCache.open(tmp_path, "store")
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'store.json'} is a damaged cache")
    assert "delete it, and the next run asks for the retriever's answers again" in message
    assert "\n" not in message


def test_a_cache_without_a_file_is_empty(tmp_path):
    cache = QueryCache.open(tmp_path / "absent", "store")
    assert cache.answers == {} and cache.get("k") is None


class FailsOnce(Counting):
    """Answers its first call, then its index goes down once."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __call__(self, queries, chunk_ids, chunk_texts, k):
        self.calls += 1
        if self.calls == 2:
            raise ConnectionError("connection refused by localhost:8000\nmore detail")
        return super().__call__(queries, chunk_ids, chunk_texts, k)


def test_a_retriever_that_fails_half_way_keeps_what_it_answered_and_resumes(tmp_path):
    function = FailsOnce()
    cache = QueryCache.open(tmp_path, "store")
    questions = ["one", "two", "three", "four", "five"]
    with pytest.raises(GoldensetError) as caught:
        ranked(CallableSource(function, cache, batch_size=2), questions)
    message = str(caught.value)
    assert message.startswith("retrievers.external: external.search:search failed on 2 questions")
    assert "(ConnectionError: connection refused by localhost:8000)" in message
    assert "the 2 answers it gave are kept" in message and "\n" not in message
    cache.save()  # as the score stage does, whatever happened
    resumed = QueryCache.open(tmp_path, "store")
    assert len(resumed.answers) == 2
    ranked(CallableSource(function, resumed, batch_size=2), questions)
    assert function.asked == ["one", "two", "three", "four", "five"]  # the rest, once each
