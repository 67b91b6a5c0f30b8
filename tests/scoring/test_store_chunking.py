"""A store's passages scored over its own chunking: placed in their documents, every view kept
when the store lists its chunks, the chunk view dropped (and said) when it cannot, and a
passage that cannot be placed ranked as never relevant rather than dropped.

The store here is a toy implementation of the Store protocol in memory: it ranks goldenset's own
chunks by the very dot products the built-in dense retriever computes, so scoring it over its
"own" chunking must give dense's metrics exactly."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.params import retrievers_model
from goldenset.retrieval.query_cache import QueryCache
from goldenset.retrieval.retrievers.base import RETRIEVERS, RetrieverEntry
from goldenset.retrieval.stores.base import (
    Hit,
    StoreSection,
    StoreSource,
    build_answered,
)
from goldenset.scoring.configuration import score_inputs
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.store_chunking import NOT_LOCATED, ask_stores, foreign_chunking
from tests.scoring.test_boundary import every_metric, with_real_queries
from tests.scoring.test_configuration import memory_inputs
from tests.scoring.test_exports import sample_documents


def test_each_distinct_passage_is_one_chunk_placed_in_its_document():
    documents = {"d1": "Alpha beta gamma. Delta epsilon zeta.", "d2": "Eta theta iota."}
    answered = {
        "q1": [
            Hit("d1", "Delta epsilon zeta.", 18, None, 0.9, "c2"),
            Hit("d2", "Eta theta", None, None, 0.5, None),
            Hit("d1", "Delta epsilon zeta.", 18, None, 0.4, "c2"),  # the same chunk again
        ],
        "q2": [Hit("d9", "unknown", None, None, 0.8, None), Hit(None, "no id", None, None, 0.7)],
    }
    chunking = foreign_chunking(documents, answered, None, "retrievers.toy")
    chunks = chunking.chunks
    assert chunks[["chunk_id", "doc_id", "start", "end"]].values.tolist() == [
        ["c2", "d1", 18, 37],
        ["d2:0-9", "d2", 0, 9],
        [f"{NOT_LOCATED} 1", f"{NOT_LOCATED} 1", 0, 7],
        [f"{NOT_LOCATED} 2", f"{NOT_LOCATED} 2", 0, 5],
    ]
    assert chunking.answers.ranked["q1"] == [("c2", 0.9), ("d2:0-9", 0.5)]
    assert [chunk for chunk, _ in chunking.answers.ranked["q2"]] == [
        f"{NOT_LOCATED} 1",
        f"{NOT_LOCATED} 2",
    ]
    placement = chunking.placement
    assert (placement.located, placement.no_document_id, placement.not_found) == (2, 1, 0)
    assert placement.unknown_documents == {"d9": 1}
    # the stand-ins are documents of their own text, after the corpus
    assert chunking.documents["doc_id"].tolist()[-2:] == [f"{NOT_LOCATED} 1", f"{NOT_LOCATED} 2"]
    assert not chunking.listed


@dataclass
class ToyStore:
    """goldenset's own chunks ranked by their dot product with the question's vector."""

    table: pd.DataFrame
    vectors: np.ndarray
    question_vectors: dict[str, np.ndarray]
    lists: bool = True
    junk_first: bool = False
    described: str = "the toy store"

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        out = []
        for text in texts:
            scores = self.vectors @ self.question_vectors[text]
            order = np.lexsort((np.arange(len(scores)), -scores))[:k]
            hits = [self._hit(row, float(scores[row])) for row in order]
            if self.junk_first:
                hits = [Hit("nowhere", "text of no document", None, None, 9.0), *hits[:-1]]
            out.append(hits)
        return out

    def chunks(self) -> list[Hit] | None:
        return [self._hit(row, None) for row in range(len(self.table))] if self.lists else None

    def _hit(self, row: int, score: float | None) -> Hit:
        chunk = self.table.iloc[row]
        # its start offset, as a splitter's start_index gives it: a short text may occur twice
        return Hit(chunk.doc_id, chunk.text, int(chunk.start), None, score, f"toy-{chunk.chunk_id}")


class ToyParams(StoreSection):
    pass


@pytest.fixture
def toy_registered():
    RETRIEVERS.register(
        "toystore",
        RetrieverEntry(ToyParams, build_answered, order=50, model_free=True),
    )
    try:
        yield retrievers_model()
    finally:
        RETRIEVERS.unregister("toystore")


OTHERS = ["bm25", "ann", "hybrid"]  # dense stays on: the toy store is measured against it


def scored_with_toy(
    tmp_path, params_model, opener=None, score=None, real=False, most=1000, **store
):
    inputs = with_real_queries(memory_inputs()) if real else memory_inputs()
    golden = inputs.query_sets["synthetic"]
    documents = sample_documents(12)
    questions = dict(zip(golden.texts, inputs.query_vectors["synthetic"], strict=True))
    toy = ToyStore(inputs.chunks, inputs.chunk_vectors, questions, **store)
    cache = QueryCache.open(tmp_path, "toy")
    settings = ToyParams(enabled=True, max_fetch=most)
    source = StoreSource(opener or (lambda: toy), cache, settings)
    inputs = replace(inputs, loaded={"toystore": source}, documents=documents)
    retrievers = params_model.model_validate(
        {"toystore": {"enabled": True}, **{name: {"enabled": False} for name in OTHERS}}
    )
    score = score or ScoreParams(device="cpu")
    return score_inputs(ask_stores(inputs, score, retrievers), score, retrievers), source


def all_metrics(outputs, retriever: str) -> dict[str, float]:
    return {**outputs.scores["synthetic"][retriever], **outputs.detail["synthetic"][retriever]}


def test_scoring_asks_no_store_itself(tmp_path, toy_registered):
    """The store is asked at the read edge (ask_stores); score_inputs given what would ask it
    says so in one line, and asks nothing."""
    inputs = memory_inputs()
    cache = QueryCache.open(tmp_path, "toy")

    def opener():
        raise AssertionError("score_inputs opened the store")

    source = StoreSource(opener, cache, ToyParams(enabled=True))
    inputs = replace(inputs, loaded={"toystore": source}, documents=sample_documents(12))
    retrievers = toy_registered.model_validate(
        {"toystore": {"enabled": True}, **{name: {"enabled": False} for name in OTHERS}}
    )
    with pytest.raises(GoldensetError, match="retrievers.toystore: a store is asked at the edge"):
        score_inputs(inputs, ScoreParams(device="cpu"), retrievers)


def test_a_store_that_lists_its_chunks_gets_every_view_and_the_dense_metrics(
    tmp_path, toy_registered
):
    outputs, _ = scored_with_toy(tmp_path, toy_registered)
    dense, toy = all_metrics(outputs, "dense"), all_metrics(outputs, "toystore")
    assert set(toy) == set(dense)
    for name, value in dense.items():
        assert toy[name] == pytest.approx(value, abs=1e-9), name
    stores = outputs.detail["stores"]["toystore"]
    assert stores["located_share"] == 1.0 and stores["chunk_view"] == 1
    assert stores["located_by_offsets"] == stores["passages"] == len(memory_inputs().chunks)
    rows = outputs.results[outputs.results["retriever"] == "toystore"]
    assert rows["top_ids"].iloc[0][0].startswith("toy-")
    assert "synthetic.toystore.trec" in {path.name for path in outputs.exports}


def test_a_store_ranking_as_dense_scores_as_dense_on_every_set_asked_as_deep_as_it_needs(
    tmp_path, toy_registered, caplog
):
    # three documents ranked: dense fetches every chunk they need; the store, asked for three
    # passages, would name fewer documents, so it is asked again deeper
    shallow = ScoreParams(device="cpu", ks=[1, 3], depth=3, headline=["doc_ndcg@3", "mrr"])
    with caplog.at_level("WARNING", logger="goldenset"):
        outputs, source = scored_with_toy(tmp_path, toy_registered, score=shallow, real=True)
    for query_set in ["synthetic", "real"]:
        dense = every_metric(outputs, query_set, "dense")
        toy = every_metric(outputs, query_set, "toystore")
        assert set(toy) == set(dense)
        for name, value in dense.items():
            assert toy[name] == pytest.approx(value, abs=1e-9), (query_set, name)
    questions = len(set(memory_inputs().query_sets["synthetic"].texts))
    assert len(source.cache.answers) > questions  # the deeper answers are cached too
    assert "max_fetch" not in caplog.text
    # capped at 3 passages, some answers name fewer than 3 documents: one line says so
    with caplog.at_level("WARNING", logger="goldenset"):
        scored_with_toy(tmp_path / "capped", toy_registered, score=shallow, real=True, most=3)
    [line] = [line for line in caplog.text.splitlines() if "max_fetch" in line]
    assert "retrievers.toystore:" in line and "distinct documents at max_fetch 3" in line
    assert line.endswith("raise retrievers.toystore.max_fetch")


def test_a_store_that_cannot_list_keeps_the_document_and_context_views_only(
    tmp_path, toy_registered
):
    # three results a question: some documents holding evidence are never returned, and their
    # questions still count (as misses) in both views
    shallow = ScoreParams(
        device="cpu", ks=[1, 3], depth=3, headline=["doc_ndcg@3", "context_recall@512", "mrr"]
    )
    outputs, _ = scored_with_toy(tmp_path, toy_registered, score=shallow, lists=False)
    dense, toy = all_metrics(outputs, "dense"), all_metrics(outputs, "toystore")
    rows = outputs.results[outputs.results["retriever"] == "toystore"]
    returned = {item.removeprefix("toy-").split("#")[0] for ids in rows["top_ids"] for item in ids}
    assert len(returned) < 12
    views = {name for name in dense if name.startswith(("doc_", "context_"))}
    assert views and set(toy) == views | {"n_queries"}
    for name in views:
        assert toy[name] == pytest.approx(dense[name], abs=1e-9), name
    assert outputs.detail["stores"]["toystore"]["chunk_view"] == 0
    assert rows["mrr"].isna().all() and rows["doc_ndcg@3"].notna().all()
    assert "toystore" in outputs.intervals["synthetic"]


def test_a_passage_that_cannot_be_placed_keeps_its_rank_and_is_never_relevant(
    tmp_path, toy_registered
):
    outputs, _ = scored_with_toy(tmp_path, toy_registered, junk_first=True)
    toy = all_metrics(outputs, "toystore")
    assert toy["doc_hit@1"] == 0.0 and toy["hit@1"] == 0.0
    clean, _ = scored_with_toy(tmp_path / "clean", toy_registered)
    assert toy["doc_mrr"] < all_metrics(clean, "toystore")["doc_mrr"]
    stores = outputs.detail["stores"]["toystore"]
    assert stores["unknown_documents"] == 1 and math.isclose(
        stores["located_share"], (stores["passages"] - 1) / stores["passages"]
    )


def test_an_unchanged_rerun_reads_the_answers_and_the_listing_from_the_cache(
    tmp_path, toy_registered
):
    first, source = scored_with_toy(tmp_path, toy_registered)
    source.cache.save()

    def down():
        raise GoldensetError("the toy store is down")

    again, source = scored_with_toy(tmp_path, toy_registered, opener=down)
    assert all_metrics(again, "toystore") == all_metrics(first, "toystore")
    assert source.cache.added == 0
    (tmp_path / "toy.json").unlink()
    with pytest.raises(GoldensetError, match="the toy store is down"):
        scored_with_toy(tmp_path, toy_registered, opener=down)
