"""One configuration scored in memory: score_inputs reads no file, changes no sys.path, and its
metrics are trec_eval's (pytrec_eval on the qrels and runs it exports)."""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd

from goldenset.chunking.configured import chunk_documents
from goldenset.chunking.params import ChunkParams
from goldenset.core import paths
from goldenset.corpus.queries import golden_evidence
from goldenset.corpus.querysets import QUERY_SETS, QuerySet
from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.retrievers import load_retrievers
from goldenset.scoring.configuration import score_inputs
from goldenset.scoring.inputs import SCORED_CHUNK_COLUMNS, ScoreInputs
from goldenset.scoring.params import ScoreParams
from tests.scoring.test_exports import (
    assert_trec_eval_agrees,
    golden_questions,
    sample_documents,
)


def empty_set(name: str) -> QuerySet:
    return QuerySet(QUERY_SETS[name], pd.DataFrame(), [], [], pd.DataFrame())


def golden_set(golden: pd.DataFrame) -> QuerySet:
    """Golden-set rows (qid, question, doc_id, evidence_start, evidence_end) as the set read."""
    return QuerySet(
        QUERY_SETS["synthetic"],
        golden,
        golden["qid"].tolist(),
        golden["question"].tolist(),
        golden_evidence(golden),
    )


def memory_inputs(loaded: dict | None = None) -> ScoreInputs:
    """A small project held in memory: 12 SciFact documents in sentence chunks, a golden set on
    the second chunk of every other document, random unit vectors, word starts for tokens."""
    documents = sample_documents(12)
    chunks = chunk_documents(documents, ChunkParams(max_size=300))[SCORED_CHUNK_COLUMNS]
    synthetic = golden_set(pd.DataFrame(golden_questions(chunks)))
    rng = np.random.default_rng(0)

    def unit(rows: int) -> np.ndarray:
        vectors = rng.normal(size=(rows, 16)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    sets = {"synthetic": synthetic, "labelled": empty_set("labelled"), "real": empty_set("real")}
    starts = {
        doc_id: [word.start() for word in re.finditer(r"\S+", text)]
        for doc_id, text in zip(documents["doc_id"], documents["text"], strict=True)
    }
    return ScoreInputs(
        chunks, unit(len(chunks)), sets, {"synthetic": unit(len(synthetic))}, starts, loaded or {}
    )


def trec_run(text: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        qid, _, item, _, score, _ = line.split()
        run.setdefault(qid, {})[item] = float(score)
    return run


def test_a_configuration_scored_in_memory_touches_no_file_and_agrees_with_trec_eval(
    tmp_path, monkeypatch
):
    inputs = memory_inputs()
    monkeypatch.chdir(tmp_path)
    path = list(sys.path)
    outputs = score_inputs(inputs, ScoreParams(device="cpu"), RetrieversParams())
    assert list(tmp_path.iterdir()) == [] and sys.path == path
    qrels_text = outputs.exports[paths.EXPORT / "beir" / "qrels" / "test.tsv"]
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_text.splitlines()[1:]:
        qid, item, grade = line.split("\t")
        qrels.setdefault(qid, {})[item] = int(grade)
    assert len(qrels) == len(inputs.query_sets["synthetic"])
    for retriever in ["dense", "bm25", "ann", "hybrid"]:
        ours = {**outputs.scores["synthetic"][retriever], **outputs.detail["synthetic"][retriever]}
        run = trec_run(outputs.exports[paths.EXPORT / "runs" / f"synthetic.{retriever}.trec"])
        assert_trec_eval_agrees(qrels, run, ours)


def test_a_run_file_is_read_at_the_edge_and_scored_without_it(tmp_path):
    inputs = memory_inputs()
    golden = inputs.query_sets["synthetic"]
    chunk_ids = inputs.chunks["chunk_id"].tolist()
    lines = [
        f"{qid} Q0 {chunk_ids[(row * 7 + rank) % len(chunk_ids)]} {rank + 1} {10 - rank} mine"
        for row, qid in enumerate(golden.qids)
        for rank in range(10)
    ]
    run_file = tmp_path / "mine.trec"
    run_file.write_text("\n".join(lines) + "\n")
    retrievers = RetrieversParams.model_validate(
        {
            "external": {"enabled": True, "run_file": str(run_file)},
            **{name: {"enabled": False} for name in ["dense", "bm25", "ann", "hybrid"]},
        }
    )
    loaded = load_retrievers(retrievers)
    run_file.unlink()  # scoring reads what was loaded, not the file
    outputs = score_inputs(memory_inputs(loaded), ScoreParams(device="cpu"), retrievers)
    exported = trec_run(outputs.exports[paths.EXPORT / "runs" / "synthetic.external.trec"])
    assert exported == trec_run("\n".join(lines))
    assert list(outputs.scores["synthetic"]) == ["external"]
