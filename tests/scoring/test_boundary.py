"""The boundary between a retriever and its judgments, as in BEIR and ranx: a retriever is handed
a query set's questions and a depth and returns a run keyed by id; the evaluator alone reads
that run against the set's judgments. Scored through score_inputs, the stage's own path."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import TopK
from goldenset.core.topk import top_k
from goldenset.corpus.querysets import QUERY_SETS, QuerySet
from goldenset.retrieval.params import retrievers_model
from goldenset.retrieval.retrievers import (
    RETRIEVERS,
    Corpus,
    Queries,
    RetrieverEntry,
    RetrieverSection,
    Run,
    load_retrievers,
)
from goldenset.retrieval.retrievers.dense import DenseScores
from goldenset.scoring.configuration import score_inputs
from goldenset.scoring.inputs import ScoreInputs
from goldenset.scoring.params import ScoreParams
from tests.scoring.test_configuration import memory_inputs

OWN = ["dense", "bm25", "ann", "hybrid"]
QUERY_FIELDS = {"name", "qids", "texts", "vectors"}


class StrictParams(RetrieverSection):
    enabled: bool = False
    shuffled: bool = False  # its id list in a random order of its own
    old: str = ""  # "judged": reads queries.judged; "topk": returns a TopK
    past: int = 0  # added to every position: points past its ids


class Strict:
    """Exact inner-product search that refuses anything but questions and a depth, and keeps
    which query sets it was asked to rank."""

    asked: list[str] = []

    def __init__(self, corpus: Corpus, settings: StrictParams) -> None:
        self.corpus, self.settings = corpus, settings

    def rank(self, *args, **kwargs) -> Run | TopK:
        if kwargs or len(args) != 2:
            raise AssertionError(f"rank was given {args!r} {kwargs!r}")
        queries, depth = args
        fields = {field.name for field in dataclasses.fields(queries)}
        if type(queries) is not Queries or fields != QUERY_FIELDS or type(depth) is not int:
            raise AssertionError(f"rank was given {type(queries).__name__} {fields}, {depth!r}")
        Strict.asked.append(queries.name)
        if self.settings.old == "judged":
            queries.judged  # noqa: B018 - what a plugin of the earlier interface read
        found = top_k(DenseScores(queries.vectors, self.corpus.vectors), depth)
        if self.settings.old == "topk":
            return found
        if self.settings.past:
            found = TopK(found.indices + self.settings.past, found.scores)
        if not self.settings.shuffled:
            return Run(self.corpus.chunk_ids, found)
        order = np.random.default_rng(3).permutation(len(self.corpus.chunk_ids))
        place = np.argsort(order)  # chunk row -> its position in the shuffled list
        indices = np.where(found.indices >= 0, place[np.maximum(found.indices, 0)], -1)
        return Run([self.corpus.chunk_ids[row] for row in order], TopK(indices, found.scores))


@pytest.fixture
def strict_model():
    RETRIEVERS.register(
        "strict",
        RetrieverEntry(StrictParams, lambda settings, corpus, _, __: Strict(corpus, settings)),
    )
    Strict.asked = []
    try:
        yield retrievers_model()
    finally:
        RETRIEVERS.unregister("strict")


def with_real_queries(inputs: ScoreInputs) -> ScoreInputs:
    """The golden set's questions again as real queries, each judging the document of its
    evidence relevant: a set judged per document, beside the set judged by spans."""
    golden = inputs.query_sets["synthetic"]
    table = pd.DataFrame({"qid": [f"r{qid}" for qid in golden.qids], "text": golden.texts})
    evidence = golden.judgments.drop_duplicates("qid")
    qrels = pd.DataFrame(
        {"qid": [f"r{qid}" for qid in evidence["qid"]], "doc_id": evidence["doc_id"].tolist()}
    ).assign(grade=1.0, absent="")
    real = QuerySet(QUERY_SETS["real"], table, table["qid"].tolist(), golden.texts, qrels)
    vectors = {**inputs.query_vectors, "real": inputs.query_vectors["synthetic"]}
    return replace(inputs, query_sets={**inputs.query_sets, "real": real}, query_vectors=vectors)


def scored(model, **strict):
    params = model.model_validate(
        {"strict": {"enabled": True, **strict}, "dense": {"enabled": True}}
        | {name: {"enabled": False} for name in OWN[1:]}
    )
    return score_inputs(with_real_queries(memory_inputs()), ScoreParams(device="cpu"), params)


def every_metric(outputs, query_set: str, retriever: str) -> dict[str, float]:
    return {**outputs.scores[query_set][retriever], **outputs.detail[query_set][retriever]}


def test_a_retriever_given_only_questions_and_a_depth_ranks_each_set_once(strict_model):
    """The set judged per document (real) is ranked once: its documents and the chunks its
    contexts are filled from are read from the same run."""
    outputs = scored(strict_model)
    assert Strict.asked == ["synthetic", "real"]
    for query_set in ["synthetic", "real"]:
        strict = every_metric(outputs, query_set, "strict")
        assert strict == every_metric(outputs, query_set, "dense")
        assert "context_hit@512" in strict
    assert "doc_ndcg@10" in every_metric(outputs, "synthetic", "strict")


def test_a_run_over_shuffled_ids_scores_the_same_as_in_order(strict_model):
    in_order = scored(strict_model)
    shuffled = scored(strict_model, shuffled=True)
    for query_set in ["synthetic", "real"]:
        metrics = every_metric(shuffled, query_set, "strict")
        assert metrics == every_metric(in_order, query_set, "strict")
    rows = [outputs.results.query("retriever == 'strict'") for outputs in (in_order, shuffled)]
    assert rows[0]["top_ids"].map(list).tolist() == rows[1]["top_ids"].map(list).tolist()


@pytest.mark.parametrize("old", ["judged", "topk"])
def test_a_plugin_of_the_earlier_interface_gets_one_line_naming_the_new_one(strict_model, old):
    with pytest.raises(GoldensetError) as raised:
        scored(strict_model, old=old)
    message = str(raised.value)
    assert message.startswith("retrievers.strict: its rank() is written for the earlier interface")
    assert "Queries (qids, texts, vectors)" in message and "Run(" in message
    assert "\n" not in message


def test_ann_is_measured_against_dense_ranked_for_it_when_dense_is_off():
    """recall_loss@k comes from MEASURES; with dense off, dense still ranks as ann's reference
    (the same runs, so the same loss) and is not scored."""
    both = retrievers_model().model_validate(
        {"bm25": {"enabled": False}, "hybrid": {"enabled": False}}
    )
    alone = both.model_copy(update={"dense": both.dense.model_copy(update={"enabled": False})})
    inputs = with_real_queries(memory_inputs())
    with_dense = score_inputs(inputs, ScoreParams(device="cpu"), both)
    without = score_inputs(inputs, ScoreParams(device="cpu"), alone)
    for query_set in ["synthetic", "real"]:
        assert list(without.scores[query_set]) == ["ann"]
        losses = {
            name: value
            for name, value in every_metric(without, query_set, "ann").items()
            if name.startswith("recall_loss@")
        }
        assert list(losses) == ["recall_loss@1", "recall_loss@3", "recall_loss@5", "recall_loss@10"]
        expected = every_metric(with_dense, query_set, "ann")
        assert losses == {name: expected[name] for name in losses}


@pytest.mark.parametrize("past", [-2, 10_000])
def test_a_run_pointing_outside_its_ids_is_one_line(strict_model, past):
    """Positions are checked where a run comes in: one below -1 would read an id from the end."""
    with pytest.raises(
        GoldensetError, match=r"retrievers.strict: its run points outside its \d+ ids"
    ):
        scored(strict_model, past=past)


def run_file_scored(tmp_path, lines: list[str]):
    """The in-memory project, real queries too, scored with a run file of these lines only."""
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{line}\n" for line in lines))
    params = retrievers_model().model_validate(
        {"external": {"enabled": True, "run_file": str(run)}}
        | {name: {"enabled": name == "dense"} for name in OWN}
    )
    inputs = with_real_queries(memory_inputs(load_retrievers(params)))
    return score_inputs(inputs, ScoreParams(device="cpu"), params)


def test_a_run_naming_none_of_a_sets_items_stops_scoring_with_one_line(tmp_path, caplog):
    """A golden-set run of document ids used to vanish from every output: now it is an error
    naming the run and the set; the same ids for the real queries are scored."""
    inputs = with_real_queries(memory_inputs())
    golden, real = inputs.query_sets["synthetic"], inputs.query_sets["real"]
    doc_of = dict(zip(golden.judgments["qid"], golden.judgments["doc_id"], strict=False))
    documents = [f"{qid} Q0 {doc_of[qid]} 1 1.0 team" for qid in golden.qids]
    with pytest.raises(GoldensetError) as raised:
        run_file_scored(tmp_path, documents)
    message = str(raised.value)
    assert message.startswith("retrievers.external: its run names none of the synthetic set's")
    assert "chunk ids" in message and "\n" not in message
    # the real queries' run of documents is scored on documents, its contexts left unmeasured
    real_run = [f"{qid} Q0 {doc_of[qid[1:]]} 1 1.0 team" for qid in real.qids]
    with caplog.at_level("WARNING", logger="goldenset"):
        outputs = run_file_scored(tmp_path, real_run)
    [line] = [line for line in caplog.text.splitlines() if "not measured" in line]
    assert "retrievers.external ranks documents on real, not chunks" in line
    assert outputs.scores["real"]["external"]["ndcg@10"] == 1.0  # its documents' metrics
    assert "external" not in outputs.scores["synthetic"]  # none of its qids in the file
    assert not any(name.startswith("context_") for name in outputs.scores["real"]["external"])
