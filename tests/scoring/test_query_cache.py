"""A callable retriever's answers are kept by its identity and the question: an unchanged re-run
asks it nothing, a new question is asked alone, and a new version, new code or damaged cache is
handled."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.scoring.query_cache import QueryCache, digest, folder_digest
from goldenset.scoring.ranked import ItemJudgments
from goldenset.scoring.retrievers.base import Corpus, Queries
from goldenset.scoring.retrievers.external import CallableSource, ExternalCallable

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
    qrels = np.zeros((len(questions), 6))
    query_set = ItemJudgments(
        "synthetic", [f"q{i}" for i in range(len(questions))], qrels, CHUNK_IDS
    )
    queries = Queries(query_set, questions, np.zeros((len(questions), 2), dtype=np.float32))
    return ExternalCallable(corpus, "external.search:search", source).rank(queries, 3, {})


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
    with pytest.raises(GoldensetError, match="store.json is not a retriever cache .* delete it"):
        QueryCache.open(tmp_path, "store")
